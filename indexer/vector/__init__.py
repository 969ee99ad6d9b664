"""Vector backends behind one protocol.

``elasticsearch`` (and its optional client) is imported only when a build or a bundle uses it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faiss
import numpy as np

from indexer.settings import Settings, VectorSettings
from indexer.vector.base import IdRange, VectorIndex
from indexer.vector.faiss_index import FaissIndex
from indexer.vector.faiss_ivfpq import IvfPqIndex
from indexer.vector.numpy_flat import NumpyFlatIndex

if TYPE_CHECKING:
    from indexer.elastic import BundleIndexes


def search_on_one_core() -> None:
    """Make the calling thread's FAISS searches use one core (OpenMP's thread count is a thread's
    own). The API searches many requests side by side, a search a thread: OpenMP threads inside
    one search only contend with the others (3M labels, 2 cores, 10 clients: dense /search 107 →
    171 req/s, hybrid 86 → 122; bench/RESULTS.md). A build keeps every core."""
    faiss.omp_set_num_threads(1)


def build_vector_index(
    vectors: np.ndarray,
    settings: VectorSettings,
    remote: BundleIndexes | None = None,
    directory: Path | None = None,
    lineage: Iterable[Sequence[int]] | None = None,
) -> VectorIndex:
    """An index of ``vectors`` (an array, or the rows of a ``.npy`` file, read by blocks), of the
    kind the settings ask or, for ``auto``, their size calls for. ``remote`` holds the bundle's
    Elasticsearch indexes (the elasticsearch backend only, which also indexes each label's
    ``lineage`` when given); IVF-PQ writes its files into ``directory`` as it builds (a
    temporary one when none is given; ``save`` copies them)."""
    if settings.backend == "elasticsearch":
        from indexer.vector.elasticsearch import build_elastic

        if remote is None:
            raise ValueError("the elasticsearch vector backend builds into a bundle's Elasticsearch indexes")
        return build_elastic(vectors, settings, remote, lineage)
    if settings.backend == "numpy":
        return NumpyFlatIndex(vectors)
    kind = settings.resolved_kind(len(vectors))
    if kind == "ivfpq":
        return IvfPqIndex.build(vectors, settings, directory or Path(tempfile.mkdtemp(prefix="ivfpq-")))
    return FaissIndex.build(vectors, settings, kind)


def open_vector_index(entry: Mapping[str, Any], directory: Path, settings: Settings) -> VectorIndex:
    """Open the index a bundle was built with (``entry`` is its manifest's ``vector`` section)."""
    if entry["backend"] == "numpy-flat":
        return NumpyFlatIndex.load(directory)
    if entry["backend"] == "elasticsearch":
        from indexer.vector.elasticsearch import open_elastic

        return open_elastic(entry, directory, settings)
    if entry["backend"] == IvfPqIndex.backend:
        return IvfPqIndex.load(directory, settings.vector)
    return FaissIndex.load(directory, settings.vector)


__all__ = ["FaissIndex", "IdRange", "IvfPqIndex", "NumpyFlatIndex", "VectorIndex", "build_vector_index", "open_vector_index"]
