"""The project's knowledge tables as files: a first line stating the version, ``#`` comment
lines, a header line, then tab-separated rows; a malformed one is refused naming file and line."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from indexer.records import SourceError

_VERSION = re.compile(r"\bVersion (\d+)\b")
Quoting = Literal[0, 1, 2, 3]  # csv.QUOTE_MINIMAL, _ALL, _NONNUMERIC, _NONE


def version(path: Path) -> int:
    """The version a table states on its first line ("... Version 2 (2026-11-24)")."""
    first = path.read_text(encoding="utf-8").partition("\n")[0]
    if not (found := _VERSION.search(first)):
        raise SourceError(path, 1, "the first line must state the table's version ('Version N')")
    return int(found.group(1))


def rows(path: Path, header: Sequence[str], quoting: Quoting = csv.QUOTE_MINIMAL) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each row but the header, each of as many fields as the header."""
    lines = [
        (n, line)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.strip() and not line.startswith("#")
    ]
    for (number, _), fields in zip(lines, csv.reader((line for _, line in lines), delimiter="\t", quoting=quoting), strict=True):
        if fields == list(header):
            continue
        if len(fields) != len(header):
            raise SourceError(
                path, number, f"expected {len(header)} tab-separated fields ({', '.join(header)}), found {len(fields)}"
            )
        yield number, fields
