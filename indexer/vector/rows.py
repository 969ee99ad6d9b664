"""Vectors on disk, a block at a time: the build writes the label vectors into one ``.npy`` file
(:class:`VectorWriter`) and every index is built from it by blocks (:func:`blocks`), so the
build's memory for vectors is one block, not the matrix. Blocks are read, not memory-mapped,
so the file's pages stay in the page cache and out of the process."""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import numpy as np


class VectorWriter:
    """Appends float rows to a ``.npy`` file of ``rows`` × ``dimension`` (its header written
    first); ``close`` checks that exactly ``rows`` were written."""

    def __init__(self, path: Path, rows: int, dimension: int, dtype: type = np.float32) -> None:
        self.path, self.rows, self.written = path, rows, 0
        self.dtype = np.dtype(dtype)
        self._file = path.open("wb")
        header = {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": (rows, dimension)}
        np.lib.format.write_array_header_2_0(self._file, header)

    def write(self, block: np.ndarray) -> None:
        self._file.write(np.ascontiguousarray(block, dtype=self.dtype).tobytes())
        self.written += len(block)

    def close(self) -> None:
        self._file.close()
        if self.written != self.rows:
            raise ValueError(f"{self.path}: {self.written} vectors written, {self.rows} declared")

    def __enter__(self) -> VectorWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if kind is None:
            self.close()
        else:
            self._file.close()


def open_rows(path: Path) -> np.ndarray:
    """A ``.npy`` file of vectors, memory-mapped read-only (nothing read until used). Rows are
    read in random order (a search's candidates), so the kernel is told not to read ahead. The
    pages read stay in the page cache, shared by every process that maps the file: they count
    in a process's RSS as file-backed memory, which the kernel reclaims under pressure."""
    rows = np.load(path, mmap_mode="r")
    mapping = getattr(rows, "_mmap", None)
    if mapping is not None and len(rows):
        mapping.madvise(mmap.MADV_RANDOM)
    return rows


def blocks(vectors: np.ndarray, size: int, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, float32 block)`` for consecutive blocks of ``size`` rows; a memory-mapped
    file is read block by block instead of mapped."""
    stop = len(vectors) if stop is None else stop
    for first in range(start, stop, size):
        yield first, read(vectors, first, min(first + size, stop))


def read(vectors: np.ndarray, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` as a float32 array of their own."""
    if isinstance(vectors, np.memmap) and vectors.filename is not None:
        width = vectors.shape[1]
        count = (stop - start) * width
        offset = vectors.offset + start * width * vectors.dtype.itemsize
        rows = np.fromfile(vectors.filename, dtype=vectors.dtype, count=count, offset=offset)
        return rows.reshape(-1, width).astype(np.float32, copy=False)
    return np.array(vectors[start:stop], dtype=np.float32)


def sample(vectors: np.ndarray, size: int, seed: int = 0, block: int = 65_536) -> np.ndarray:
    """``size`` rows drawn without replacement (all rows when there are fewer), as float32, read
    block by block (a sample touches nearly every page of a file: it is not mapped)."""
    if size >= len(vectors):
        return read(vectors, 0, len(vectors))
    rows = np.sort(np.random.default_rng(seed).choice(len(vectors), size=size, replace=False))
    out = np.empty((size, vectors.shape[1]), np.float32)
    taken = 0
    for first, rows_block in blocks(vectors, block):
        mine = rows[(rows >= first) & (rows < first + len(rows_block))] - first
        out[taken : taken + len(mine)] = rows_block[mine]
        taken += len(mine)
    return out
