"""The vector role: inner-product search over unit vectors, ids are label row numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np

IdRange = tuple[int, int]  # half-open [start, stop) range of label ids (one code system)


class VectorIndex(Protocol):
    backend: str  # recorded in the bundle manifest, e.g. "faiss-flat", "faiss-hnsw", "numpy-flat", "elasticsearch"
    filter_limit: int | None  # the most labels a search may be given in ``allowed`` (None: any number)
    keeps_lineage: bool  # filters by ``within`` (each label's is-a lineage is indexed), not only by ``allowed``

    def __len__(self) -> int: ...

    def search(
        self, query: np.ndarray, k: int, id_range: IdRange | None = None, allowed: np.ndarray | None = None, within: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """For one query vector, ``(scores, ids)`` of up to ``k`` labels, best first; only labels
        inside ``id_range`` and, when given, among ``allowed`` (sorted label ids: a subtree's
        labels), which the index filters while it searches. ``within`` is the catalog row of that
        subtree's root: an index that :attr:`keeps_lineage` filters by it (one term, whatever the
        subtree's size) in place of ``allowed``; the others ignore it."""
        ...

    def save(self, directory: Path) -> dict[str, Any]:
        """Write the index's files into ``directory``; return what the bundle manifest records
        about the index besides its backend (e.g. a remote index name)."""
        ...


def in_range(allowed: np.ndarray, start: int, stop: int) -> np.ndarray:
    """The given labels inside ``[start, stop)``, as contiguous int64 (sorted, as given)."""
    return np.ascontiguousarray(allowed[(allowed >= start) & (allowed < stop)], dtype=np.int64)
