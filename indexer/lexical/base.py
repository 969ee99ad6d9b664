"""The lexical (BM25) role: label ids in, best-matching label ids out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

IdRange = tuple[int, int]  # half-open [start, stop) range of label ids (one code system)


class Label(NamedTuple):
    """One label to index; ``system`` and ``code`` are stored only where operators can see them."""

    id: int
    text: str
    system: str = ""
    code: str = ""
    within: Sequence[int] = ()  # catalog rows of its concept and of every concept above it by is-a


class LexicalIndex(Protocol):
    backend: str  # recorded in the bundle manifest

    def __len__(self) -> int:
        """Documents (labels) in the index, as it holds them now."""
        ...

    def search(
        self, query: str, k: int, id_range: IdRange | None = None, allowed: Sequence[int] | None = None, within: int | None = None
    ) -> list[tuple[int, float]]:
        """Up to ``k`` (label id, BM25 score) pairs, best first, inside ``id_range`` and, when
        given, among ``allowed`` (label ids) and ``within`` the is-a subtree of that catalog row
        (its labels' :attr:`Label.within`), filtered while searching; nothing for a query
        without tokens."""
        ...


class LexicalBuilder(Protocol):
    backend: str

    def build(self, directory: Path, labels: Iterable[Label]) -> dict[str, Any]:
        """Index every label (into ``directory``, or a remote index); return what the bundle
        manifest records about the index besides its backend (e.g. a remote index name)."""
        ...
