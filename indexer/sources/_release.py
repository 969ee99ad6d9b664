"""Release files (a directory, or a zip read member by member) and their delimited rows.

Shared by the licensed loaders: RF2 (tab-separated with a header row) and UMLS RRF
(pipe-separated with a trailing pipe, no header). Lines are decoded one at a time, so a bad byte
is reported at its line, and their ending (CRLF or LF) is dropped.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from indexer.records import SourceError

BUFFER = 1 << 20
T = TypeVar("T")


class Malformed(Exception):
    """A bad value; the row reader's caller turns it into a :class:`SourceError` at its line."""


@dataclass(frozen=True, slots=True)
class ReleaseFile:
    name: str  # base name, e.g. sct2_Concept_Snapshot_INT_20250101.txt
    location: str  # what errors name: the path, or ``archive.zip:member``
    open: Callable[[], AbstractContextManager[BinaryIO]]


def release_files(path: Path) -> list[ReleaseFile]:
    """Every regular file below a directory or in a zip archive, sorted by location."""
    if path.is_dir():
        files = [disk_file(p) for p in path.rglob("*") if p.is_file()]
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            files = [_zip_file(path, info.filename) for info in archive.infolist() if not info.is_dir()]
    elif path.exists():
        raise SourceError(path, None, "expected a release directory or a zip archive")
    else:
        raise SourceError(path, None, "no such file or directory")
    return sorted(files, key=lambda f: f.location)


def disk_file(path: Path) -> ReleaseFile:
    return ReleaseFile(path.name, str(path), lambda: open(path, "rb", buffering=BUFFER))


def _zip_file(archive: Path, member: str) -> ReleaseFile:
    @contextmanager
    def opened() -> Iterator[BinaryIO]:
        with zipfile.ZipFile(archive) as zipped, zipped.open(member) as raw:
            yield io.BufferedReader(raw, BUFFER)  # type: ignore[arg-type]  # fast C readline

    return ReleaseFile(Path(member).name, f"{archive}:{member}", opened)


def decode_line(raw: bytes, location: object, number: int) -> str:
    """A line as text: UTF-8 without NUL characters (no text column or store accepts them)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SourceError(location, number, f"not UTF-8: {e.reason}") from None
    if "\x00" in line:
        raise SourceError(location, number, "NUL character")
    return line


def numbered_lines(file: ReleaseFile) -> Iterator[tuple[int, str]]:
    """``(line number, text without its line ending)`` for every line of ``file``."""
    with file.open() as stream:
        for number, raw in enumerate(stream, 1):
            yield number, decode_line(raw, file.location, number).rstrip("\r\n")


def rf2_rows(file: ReleaseFile, columns: Sequence[str]) -> Iterator[tuple[int, list[str]]]:
    """Rows of a tab-separated RF2 file whose header row must be exactly ``columns``."""
    lines = numbered_lines(file)
    header = next(lines, (1, ""))[1].lstrip("\ufeff").split("\t")
    if header != list(columns):
        raise SourceError(file.location, 1, f"expected the header {' '.join(columns)!r}")
    for number, line in lines:
        fields = line.split("\t")
        if len(fields) != len(columns):
            message = f"expected {len(columns)} tab-separated columns, got {len(fields)}"
            raise SourceError(file.location, number, message)
        yield number, fields


def rrf_rows(file: ReleaseFile, width: int) -> Iterator[tuple[int, list[str]]]:
    """Rows of a pipe-separated UMLS RRF file: ``width`` fields, each followed by ``|``."""
    for number, line in numbered_lines(file):
        fields = line.split("|")
        if len(fields) != width + 1 or fields.pop():
            raise SourceError(file.location, number, f"expected {width} '|'-terminated columns, got {line.count('|')}")
        yield number, fields


def convert_rows(
    file: ReleaseFile, rows: Iterator[tuple[int, list[str]]], convert: Callable[[list[str]], T | None]
) -> Iterator[T]:
    """``convert`` each row, skipping ``None``; a :class:`Malformed` value names its line."""
    for number, fields in rows:
        try:
            value = convert(fields)
        except Malformed as e:
            raise SourceError(file.location, number, str(e)) from None
        if value is not None:
            yield value
