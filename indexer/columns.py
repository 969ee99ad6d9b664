"""The bundle's catalog as columns: one file a column under ``catalog/``, read as arrays when the
bundle opens (no parsing, no object a row: a fraction of a second for millions of labels). They
are read, not memory-mapped, so that a catalog damaged on disk cannot change what is served.

Numbers are ``.npy`` arrays; texts are one UTF-8 file with an offsets array (a row decoded when
read); few-valued texts (system, kind, label kind, knowledge source) are small integers into a
list of names in ``catalog/columns.json``. Parent and child links are CSR pairs (offsets, rows).
Codes are found through sorted 64-bit hashes of ``system\\0code`` and of the code's lookup key
(:func:`~indexer.bundle.code_key`), labels that name their concept by their
:func:`~indexer.lexical.normalise.name_key`, each checked against the row's own key.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

DIRECTORY = "catalog"
NAMES = "columns.json"
T = TypeVar("T")


class TextColumn(Sequence[str | None]):
    """Texts stored as UTF-8 bytes and offsets; ``None`` is kept apart from the empty text."""

    def __init__(self, directory: Path, name: str) -> None:
        self._bytes = array(directory, f"{name}.bytes")
        self._offsets = array(directory, f"{name}.offsets")
        missing = directory / f"{name}.none.npy"
        self._none = np.load(missing) if missing.is_file() else None

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, row: int) -> str | None:  # type: ignore[override]
        row = int(row)
        if row < 0:
            row += len(self)
        if self._none is not None and self._none[row]:
            return None
        return self._bytes[self._offsets[row] : self._offsets[row + 1]].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str | None]:
        return (self[row] for row in range(len(self)))


class CategoryColumn(Sequence[T], Generic[T]):
    """Few distinct values: a small integer a row into a list of them."""

    def __init__(self, codes: np.ndarray, values: Sequence[T]) -> None:
        self.codes, self.values = codes, list(values)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, row: int) -> T:  # type: ignore[override]
        return self.values[self.codes[int(row)]]

    def __iter__(self) -> Iterator[T]:
        values = self.values
        return (values[code] for code in self.codes.tolist())


DEEP = 64  # is-a levels deeper than any terminology's: a walk this long checks for cycles


class Links:
    """Rows linked to each row (parents or children), from CSR offsets and rows."""

    def __init__(self, offsets: np.ndarray, rows: np.ndarray) -> None:
        self.offsets, self.rows = offsets, rows

    def __getitem__(self, row: int) -> np.ndarray:
        return self.rows[self.offsets[row] : self.offsets[row + 1]]

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def of(self, rows: np.ndarray) -> np.ndarray:
        """Every row linked to any of ``rows``, in one gather (repeats kept)."""
        return self.rows[spans(self.offsets[rows], self.offsets[rows + 1])]

    def closure(self, rows: np.ndarray) -> Links:
        """For each of ``rows``, itself and every row reachable from it by links (its ancestors,
        for parents), sorted: one walk from all of them at once, a gather a level. Past
        :data:`DEEP` levels a pair met before goes no further, so that a cycle (bad data) ends."""
        width = max(len(self), 1)
        source, node = np.arange(len(rows), dtype=np.int64), np.asarray(rows, dtype=np.int64)
        levels = [source * width + node]  # (source, row) pairs
        while len(node):
            counts = self.offsets[node + 1] - self.offsets[node]
            pair = np.unique(np.repeat(source, counts) * width + self.of(node))  # a row met twice in a level goes on once
            if len(levels) > DEEP:
                levels = [np.unique(np.concatenate(levels))]
                pair = pair[~np.isin(pair, levels[0], assume_unique=True)]
            levels.append(pair)
            source, node = pair // width, pair % width
        reached = np.unique(np.concatenate(levels))
        return Links(np.searchsorted(reached // width, np.arange(len(rows) + 1)), reached % width)


def spans(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """Every index of the half-open spans ``starts[i]:stops[i]``, in order, as one array."""
    counts = stops - starts
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return (np.repeat(starts, counts) + offsets).astype(np.int64)


class CodeIndex:
    """Rows by a text key: sorted 64-bit hashes, checked against the rows' own keys. The build
    records the hashes two different keys share (``collisions``); under any other hash all rows
    have one key, so that the first row's is checked for all (a name of 300 labels is one check,
    not 300). ``collisions`` None (not recorded): every row is checked."""

    def __init__(self, hashes: np.ndarray, rows: np.ndarray, key_of: Callable[[int], str], collisions: np.ndarray | None) -> None:
        self._hashes, self._rows, self._key_of, self._collisions = hashes, rows, key_of, collisions

    def get(self, key: str) -> list[int]:
        target = np.uint64(key_hash(key))
        start = int(np.searchsorted(self._hashes, target, side="left"))
        stop = int(np.searchsorted(self._hashes, target, side="right"))
        rows = self._rows[start:stop].tolist()
        if rows and self._collisions is not None and target not in self._collisions:
            return sorted(rows) if self._key_of(rows[0]) == key else []
        return sorted(row for row in rows if self._key_of(row) == key)


def key_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


# --- writing (the build) ------------------------------------------------------------------------


def write_text(directory: Path, name: str, texts: Sequence[str | None]) -> None:
    encoded = [b"" if text is None else text.encode("utf-8") for text in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    np.save(directory / f"{name}.bytes.npy", np.frombuffer(b"".join(encoded), dtype=np.uint8))
    np.save(directory / f"{name}.offsets.npy", offsets)
    if any(text is None for text in texts):
        np.save(directory / f"{name}.none.npy", np.asarray([text is None for text in texts], dtype=bool))


def write_category(directory: Path, name: str, values: Sequence[Any], names: dict[str, list]) -> None:
    """Codes into the sorted distinct values (``None`` first), recorded in ``names``."""
    distinct = sorted(set(values), key=lambda v: (v is not None, "" if v is None else str(v)))
    code = {value: i for i, value in enumerate(distinct)}
    dtype = np.uint8 if len(distinct) <= 256 else np.uint32
    np.save(directory / f"{name}.npy", np.asarray([code[v] for v in values], dtype=dtype))
    names[name] = distinct


def write_links(directory: Path, name: str, links: Sequence[Sequence[int]]) -> None:
    offsets = np.zeros(len(links) + 1, dtype=np.int64)
    np.cumsum([len(rows) for rows in links], out=offsets[1:])
    np.save(directory / f"{name}.offsets.npy", offsets)
    np.save(directory / f"{name}.rows.npy", np.fromiter((r for rows in links for r in rows), dtype=np.int32, count=int(offsets[-1])))


def read_links(directory: Path, name: str) -> Links:
    return Links(array(directory, f"{name}.offsets"), array(directory, f"{name}.rows"))


def write_code_index(directory: Path, name: str, keys: Sequence[str], rows: Sequence[int] | None = None) -> None:
    """Rows (default: 0, 1, ...) by the hash of their ``keys``, and the hashes that two different
    keys share (:class:`CodeIndex`)."""
    hashes = np.fromiter((key_hash(key) for key in keys), dtype=np.uint64, count=len(keys))
    order = np.argsort(hashes, kind="stable")
    hashes = hashes[order]
    shared = np.flatnonzero(hashes[1:] == hashes[:-1]).tolist()
    collisions = {int(hashes[i]) for i in shared if keys[order[i]] != keys[order[i + 1]]}
    np.save(directory / f"{name}.hashes.npy", hashes)
    np.save(directory / f"{name}.collisions.npy", np.asarray(sorted(collisions), dtype=np.uint64))
    np.save(directory / f"{name}.rows.npy", (order if rows is None else np.asarray(rows, dtype=np.int64)[order]).astype(np.int32))


def write_names(directory: Path, names: dict[str, list]) -> None:
    (directory / NAMES).write_text(json.dumps(names, ensure_ascii=False), encoding="utf-8")


def read_names(directory: Path) -> dict[str, list]:
    return json.loads((directory / NAMES).read_text(encoding="utf-8"))


def array(directory: Path, name: str) -> np.ndarray:
    return np.load(directory / f"{name}.npy")
