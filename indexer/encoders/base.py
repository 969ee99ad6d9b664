"""The encoder role: text in, L2-normalised float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from indexer.errors import IndexerError


class Encoder(Protocol):
    id: str  # stable model id recorded in bundle manifests, e.g. "all-MiniLM-L6-v2-onnx-int8"
    sha256: str  # hash of the weights file (empty for the fake encoder)
    precision: str  # "int8" (dynamic int8 as shipped) or "float" (dequantised, float16 on CUDA); see onnx.py
    dimension: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an ``(len(texts), dimension)`` float32 array of unit vectors."""
        ...


class EncoderError(IndexerError, RuntimeError):
    """A model directory that cannot be used (missing files, failed parity check, ...)."""
