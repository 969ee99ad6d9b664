"""Break a copy of a fixture release, one line at a time, for the malformed-input tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path


def copy_release(source: Path, target: Path) -> Path:
    return Path(shutil.copytree(source, target))


def find(root: Path, prefix: str) -> Path:
    """The one file below ``root`` whose name starts with ``prefix``."""
    (path,) = (p for p in root.rglob(f"{prefix}*") if p.is_file())
    return path


def edit_line(path: Path, number: int, edit: Callable[[bytes], bytes]) -> None:
    """Replace line ``number`` (1-based, without its ending) by ``edit(line)``, keeping the ending."""
    lines = path.read_bytes().splitlines(keepends=True)
    line = lines[number - 1]
    body = line.rstrip(b"\r\n")
    lines[number - 1] = edit(body) + line[len(body) :]
    path.write_bytes(b"".join(lines))


def replace_field(index: int, value: bytes, separator: bytes) -> Callable[[bytes], bytes]:
    """An edit that sets field ``index`` of a delimited line to ``value``."""

    def edit(line: bytes) -> bytes:
        fields = line.split(separator)
        fields[index] = value
        return separator.join(fields)

    return edit
