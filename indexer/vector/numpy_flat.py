"""Exact search with a plain matrix product: the reference the other backends are tested against."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from indexer.vector.base import IdRange, in_range

FILE = "vectors.npy"


class NumpyFlatIndex:
    backend = "numpy-flat"
    filter_limit = None
    keeps_lineage = False

    def __init__(self, vectors: np.ndarray) -> None:
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    @classmethod
    def load(cls, directory: Path) -> NumpyFlatIndex:
        # Read into memory, not mapped: a served file truncated on disk would kill the process (SIGBUS).
        return cls(np.load(directory / FILE))

    @property
    def matrix(self) -> np.ndarray:
        """Every vector, row = label id (read-only; batch matching multiplies it directly)."""
        return self._vectors

    def __len__(self) -> int:
        return len(self._vectors)

    def search(
        self, query: np.ndarray, k: int, id_range: IdRange | None = None, allowed: np.ndarray | None = None, within: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        start, stop = id_range or (0, len(self._vectors))
        ids = np.arange(start, stop) if allowed is None else in_range(allowed, start, stop)
        return top_k(self._vectors, ids, query, k)

    def save(self, directory: Path) -> dict[str, Any]:
        np.save(directory / FILE, self._vectors)
        return {}


def top_k(vectors: np.ndarray, ids: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of the rows ``ids`` (ascending) of ``vectors`` for ``query``, best first
    (ties in id order), by one matrix product."""
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    if len(ids) and ids[-1] - ids[0] + 1 <= 2 * len(ids):  # dense in their span: score it in place (a view)
        scores = (vectors[ids[0] : ids[-1] + 1] @ query)[ids - ids[0]]
    else:  # sparse: copy out only those rows
        scores = vectors[ids] @ query
    k = min(k, len(scores))
    if k <= 0:
        return np.empty(0, np.float32), np.empty(0, np.int64)
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return scores[top].astype(np.float32), ids[top].astype(np.int64)
