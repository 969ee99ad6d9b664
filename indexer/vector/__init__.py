"""Vector backends behind one protocol.

``elasticsearch`` (and its optional client) is imported only when a build or a bundle uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from indexer.settings import Settings, VectorSettings
from indexer.vector.base import IdRange, VectorIndex
from indexer.vector.faiss_index import FaissIndex
from indexer.vector.numpy_flat import NumpyFlatIndex

if TYPE_CHECKING:
    from indexer.elastic import BundleIndexes


def build_vector_index(
    vectors: np.ndarray, settings: VectorSettings, remote: BundleIndexes | None = None
) -> VectorIndex:
    """``remote`` holds the bundle's Elasticsearch indexes (the elasticsearch backend only)."""
    if settings.backend == "elasticsearch":
        from indexer.vector.elasticsearch import build_elastic

        if remote is None:
            raise ValueError("the elasticsearch vector backend builds into a bundle's Elasticsearch indexes")
        return build_elastic(vectors, settings, remote)
    if settings.backend == "numpy":
        return NumpyFlatIndex(vectors)
    return FaissIndex.build(vectors, settings)


def open_vector_index(entry: Mapping[str, Any], directory: Path, settings: Settings) -> VectorIndex:
    """Open the index a bundle was built with (``entry`` is its manifest's ``vector`` section)."""
    if entry["backend"] == "numpy-flat":
        return NumpyFlatIndex.load(directory)
    if entry["backend"] == "elasticsearch":
        from indexer.vector.elasticsearch import open_elastic

        return open_elastic(entry, directory, settings)
    return FaissIndex.load(directory, settings.vector)


__all__ = ["FaissIndex", "IdRange", "NumpyFlatIndex", "VectorIndex", "build_vector_index", "open_vector_index"]
