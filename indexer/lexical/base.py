"""The lexical (BM25) role: label ids in, best-matching label ids out."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

IdRange = tuple[int, int]  # half-open [start, stop) range of label ids (one code system)


class LexicalIndex(Protocol):
    backend: str  # recorded in the bundle manifest

    def search(self, query: str, k: int, id_range: IdRange | None = None) -> list[tuple[int, float]]:
        """Up to ``k`` (label id, BM25 score) pairs, best first; nothing for a query without tokens."""
        ...


class LexicalBuilder(Protocol):
    def build(self, directory: Path, labels: Iterable[tuple[int, str]]) -> None:
        """Index every (label id, text) pair into ``directory``."""
        ...
