"""Vector backends behind one protocol."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from indexer.settings import VectorSettings
from indexer.vector.base import IdRange, VectorIndex
from indexer.vector.faiss_index import FaissIndex
from indexer.vector.numpy_flat import NumpyFlatIndex


def build_vector_index(vectors: np.ndarray, settings: VectorSettings) -> VectorIndex:
    if settings.backend == "numpy":
        return NumpyFlatIndex(vectors)
    return FaissIndex.build(vectors, settings)


def open_vector_index(backend: str, directory: Path, settings: VectorSettings) -> VectorIndex:
    """Open the index a bundle was built with (``backend`` as recorded in its manifest)."""
    if backend == "numpy-flat":
        return NumpyFlatIndex.load(directory)
    return FaissIndex.load(directory, settings)


__all__ = ["FaissIndex", "IdRange", "NumpyFlatIndex", "VectorIndex", "build_vector_index", "open_vector_index"]
