"""How close an approximate index comes to the exact answer: recall@k against brute force over
the same vectors, for a sample of the index's own vectors as queries (measured at build and
written to the bundle's manifest). The exact answers are found in one pass over the vectors,
a block at a time, so the vectors may be a file larger than memory."""

from __future__ import annotations

import numpy as np

from indexer.vector.base import VectorIndex
from indexer.vector.rows import blocks


def recall_at_k(
    index: VectorIndex, vectors: np.ndarray, k: int = 10, sample: int = 200, seed: int = 0, block: int = 65_536
) -> float:
    """The mean share of each sampled query's exact top ``k`` that ``index`` returns; a label
    that ties with the exact ``k``-th (an equal vector) counts as found."""
    if len(vectors) == 0:
        return 1.0
    rows = np.sort(np.random.default_rng(seed).choice(len(vectors), size=min(sample, len(vectors)), replace=False))
    queries = np.asarray(vectors[rows], dtype=np.float32)
    best = np.full((len(rows), 0), -np.inf, dtype=np.float32)  # each query's exact top scores so far
    for _, rows_block in blocks(vectors, block):
        best = np.concatenate([best, queries @ rows_block.T], axis=1)
        if best.shape[1] > k:
            best = np.partition(best, best.shape[1] - k, axis=1)[:, -k:]
    found = 0.0
    for query, exact in zip(queries, best, strict=True):
        returned = index.search(query, k)[1]
        good = np.asarray(vectors[np.sort(returned)], dtype=np.float32) @ query >= exact.min() - 1e-5
        found += min(int(good.sum()), len(exact)) / len(exact)
    return round(found / len(rows), 4)
