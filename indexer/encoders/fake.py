"""A deterministic, model-free encoder for fast tests: texts sharing words or trigrams are similar."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence

import numpy as np

_WORD = re.compile(r"\w+")
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5


def _normalise(text: str) -> str:
    """Casefold and strip accents, so "Café" and "cafe" get the same features."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _features(text: str) -> Iterator[tuple[str, float]]:
    for word in _WORD.findall(_normalise(text)):
        yield f"w:{word}", _WORD_WEIGHT
        padded = f"#{word}#"
        for i in range(len(padded) - 2):
            yield f"c:{padded[i : i + 3]}", _TRIGRAM_WEIGHT


def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    """Stable across processes (unlike ``hash``): a slot and a sign, so collisions cancel out on average."""
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return h % dimension, 1.0 if h >> 63 else -1.0


class FakeEncoder:
    """Feature-hashing encoder; a text without features maps to the first basis vector."""

    sha256 = ""
    precision = "float"

    def __init__(self, dimension: int = 32) -> None:
        if dimension < 1:
            raise ValueError(f"dimension must be >= 1, got {dimension}")
        self.dimension = dimension
        self.id = f"fake-hash-{dimension}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts, not a single string")
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                slot, sign = _bucket(feature, self.dimension)
                out[row, slot] += sign * weight
        norms = np.linalg.norm(out, axis=1)
        out[norms == 0, 0] = 1.0
        norms[norms == 0] = 1.0
        return out / norms[:, None]

    def __repr__(self) -> str:
        return f"FakeEncoder(dimension={self.dimension})"
