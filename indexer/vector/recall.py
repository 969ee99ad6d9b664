"""How close an approximate index comes to the exact answer: recall@k against brute force over
the same vectors, for a sample of the index's own vectors as queries (measured at build and
written to the bundle's manifest)."""

from __future__ import annotations

import numpy as np

from indexer.vector.base import VectorIndex
from indexer.vector.numpy_flat import top_k


def recall_at_k(index: VectorIndex, vectors: np.ndarray, k: int = 10, sample: int = 200, seed: int = 0) -> float:
    """The mean share of each sampled query's exact top ``k`` that ``index`` returns; a label
    that ties with the exact ``k``-th (an equal vector) counts as found."""
    if len(vectors) == 0:
        return 1.0
    rows = np.random.default_rng(seed).choice(len(vectors), size=min(sample, len(vectors)), replace=False)
    every = np.arange(len(vectors), dtype=np.int64)
    found = 0.0
    for row in rows.tolist():
        query = vectors[row]
        exact_scores, _ = top_k(vectors, every, query, k)
        returned = index.search(query, k)[1]
        good = vectors[returned] @ query >= exact_scores[-1] - 1e-5
        found += min(int(good.sum()), len(exact_scores)) / len(exact_scores)
    return round(found / len(rows), 4)
