"""FAISS inner-product search over float32 vectors: exact (IndexFlatIP) or HNSW. A search keeps
to a label range (``IDSelectorRange``) or to given labels (``IDSelectorBatch``; a few are scored
exactly) while it runs, so a subtree is never searched by scanning everything and filtering
after. The index is read into memory (a bundle damaged on disk cannot take a worker down), and
its vectors are never copied out of it."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from indexer.settings import VectorSettings
from indexer.vector.base import IdRange, in_range
from indexer.vector.numpy_flat import top_k
from indexer.vector.rows import blocks

FILE = "vectors.faiss"


class FaissIndex:
    filter_limit = None
    keeps_lineage = False

    def __init__(self, index: faiss.Index, ef_search: int = 128, exact_below: int = 20_000) -> None:
        self._index = index
        self._exact_below = exact_below
        self._hnsw = isinstance(index, faiss.IndexHNSW)
        self._ef_search = ef_search
        self.backend = "faiss-hnsw" if self._hnsw else "faiss-flat"

    @classmethod
    def build(cls, vectors: np.ndarray, settings: VectorSettings, kind: str) -> FaissIndex:
        """``kind``: "flat" or "hnsw"; ``vectors`` (rows of a file or an array) added by blocks."""
        dimension = vectors.shape[1]
        if kind == "hnsw":
            index = faiss.IndexHNSWFlat(dimension, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 200
        else:
            index = faiss.IndexFlatIP(dimension)
        for _, block in blocks(vectors, settings.build_block):
            index.add(block)
        return cls(index, settings.hnsw_ef_search, settings.hnsw_exact_below)

    @classmethod
    def load(cls, directory: Path, settings: VectorSettings) -> FaissIndex:
        index = faiss.read_index(str(directory / FILE))
        return cls(index, settings.hnsw_ef_search, settings.hnsw_exact_below)

    @cached_property
    def matrix(self) -> np.ndarray:
        """Every vector, row = label id: a read-only view of the index's own storage (the
        ranking core scores each candidate's labels exactly, whatever found them)."""
        storage = faiss.downcast_index(self._index.storage) if self._hnsw else self._index
        view = faiss.rev_swig_ptr(storage.get_xb(), storage.ntotal * storage.d).reshape(storage.ntotal, storage.d)
        view.flags.writeable = False
        return view

    def __len__(self) -> int:
        return self._index.ntotal

    def search(
        self, query: np.ndarray, k: int, id_range: IdRange | None = None, allowed: np.ndarray | None = None, within: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        if k <= 0 or self._index.ntotal == 0:
            return np.empty(0, np.float32), np.empty(0, np.int64)
        if allowed is not None:
            start, stop = id_range or (0, self._index.ntotal)
            allowed = in_range(allowed, start, stop)
            if self._hnsw and len(allowed) <= self._exact_below:  # few: scored exactly, one product
                return top_k(self.matrix, allowed, query, k)
        query = np.asarray(query, dtype=np.float32).reshape(1, -1)
        if allowed is not None:  # the search itself keeps to them
            selector = faiss.IDSelectorBatch(allowed)
            size = len(allowed)
        else:
            selector = faiss.IDSelectorRange(*id_range) if id_range else None
            size = (id_range[1] - id_range[0]) if id_range else self._index.ntotal
        if not self._hnsw:
            return self._run(self._index, query, k, faiss.SearchParameters(sel=selector))
        # HNSW misses results when a filter keeps few vectors: search those exactly instead.
        if size > self._exact_below:
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=max(self._ef_search, k))
            scores, ids = self._run(self._index, query, k, params)
            if len(ids) >= min(k, size):
                return scores, ids
        return self._run(self._index.storage, query, k, faiss.SearchParameters(sel=selector))

    @staticmethod
    def _run(index: faiss.Index, query: np.ndarray, k: int, params: faiss.SearchParameters):  # noqa: ANN205
        scores, ids = index.search(query, k, params=params)
        keep = ids[0] >= 0
        return scores[0][keep], ids[0][keep]

    def save(self, directory: Path) -> dict[str, Any]:
        faiss.write_index(self._index, str(directory / FILE))
        return {}
