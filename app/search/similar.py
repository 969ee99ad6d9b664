"""Concept → concept: the query is every label of a concept (or of any listed source).

Each label is ranked by the core (:meth:`SearchService.rank_many`, exactly as ``/search`` ranks
it) within the scope, and the per-label rankings are combined by **max score**: a target concept
scores its best (query label, target label) pair, the rule that makes a concept's ``/search``
score that of its best label. The source concept itself is left out by the scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.search.scope import Scope
from app.search.service import SearchService
from app.search.values import Mode, Ranked, Ranking


@dataclass(frozen=True)
class LabelMatch:
    """A target concept's best pair with one source: the core's ranked record and which query label found it."""

    ranked: Ranked
    query: int


def best_per_concept(rankings: Sequence[Ranking], k: int) -> list[LabelMatch]:
    """Combine per-label rankings by max score, best first (ties by catalog row)."""
    best: dict[int, LabelMatch] = {}
    for query, ranking in enumerate(rankings):
        for ranked in ranking.rows:
            if ranked.row not in best or ranked.score > best[ranked.row].ranked.score:
                best[ranked.row] = LabelMatch(ranked, query)
    return sorted(best.values(), key=lambda m: (-m.ranked.score, m.ranked.row))[:k]


def match_labels(
    service: SearchService, labels: Sequence[str], scope: Scope, k: int, mode: Mode, min_confidence: float = 0.0
) -> list[LabelMatch]:
    """The ``k`` concepts of ``scope`` best matching any of ``labels``."""
    return best_per_concept(service.rank_many(labels, scope, k, mode, min_confidence), k)


def concept_labels(service: SearchService, concept: int) -> list[str]:
    bundle = service.bundle
    return [bundle.label_text[i] for i in bundle.concept_labels(concept)]
