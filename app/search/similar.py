"""Concept → concept search: the query is every label of a concept (or of any source).

Each label is searched on its own, as ``/search`` would rank it, and the per-label rankings are
combined by **max score**: a target concept scores its best pair (query label, target label),
the same rule that makes a concept's ``/search`` score that of its best label. The row's
``matched_term`` is the target label of that pair; :class:`LabelMatch` also says which query
label found it. Scores are cosine (dense), BM25 (lexical) or the per-label convex combination (hybrid, as in ``/search``).
"""

from __future__ import annotations

from collections.abc import Collection, Container, Sequence
from dataclasses import dataclass

from app.search.service import Hit, Mode, Result, SearchService


@dataclass(frozen=True)
class LabelMatch:
    """A target concept's best pair with one source: score, target label id, query label index."""

    concept: int
    score: float
    label: int
    query: int

    @property
    def hit(self) -> Hit:
        return Hit(self.concept, self.score, self.label)


def label_rankings(
    service: SearchService,
    labels: Sequence[str],
    ranges: list[tuple[int, int]],
    depth: int,
    mode: Mode,
    allowed: Container[int] | None = None,
) -> list[list[Hit]]:
    """One ranking of ``depth`` concepts per label, ranked as ``/search`` ranks them (dense labels
    are encoded in one batch). ``allowed`` keeps only those catalog rows."""
    if mode is Mode.LEXICAL:
        return [service.lexical(label, ranges, depth, allowed) for label in labels]
    if mode is Mode.DENSE:
        return service.dense_many(labels, ranges, depth, allowed)
    fused = max(depth, service.settings.fusion_depth)
    dense = service.dense_many(labels, ranges, fused, allowed)
    lexical = [service.lexical(label, ranges, fused, allowed) for label in labels]
    return [service.fuse(*pair)[:depth] for pair in zip(dense, lexical, strict=True)]


def best_per_concept(rankings: Sequence[Sequence[Hit]], exclude: Collection[int] = ()) -> list[LabelMatch]:
    """Combine per-label rankings by max score, best first (ties by catalog row); concepts in
    ``exclude`` (the source concept itself) are left out."""
    best: dict[int, LabelMatch] = {}
    for query, ranking in enumerate(rankings):
        for hit in ranking:
            if hit.concept not in exclude and (hit.concept not in best or hit.score > best[hit.concept].score):
                best[hit.concept] = LabelMatch(hit.concept, hit.score, hit.label, query)
    return sorted(best.values(), key=lambda m: (-m.score, m.concept))


def similar_concepts(
    service: SearchService,
    concept: int,
    targets: Sequence[str],
    k: int,
    mode: Mode,
    include_inactive: bool = False,
) -> list[Result]:
    """The ``k`` concepts of the ``targets`` systems most similar to catalog row ``concept``,
    over all its labels, never the concept itself."""
    bundle = service.bundle
    labels = [bundle.label_text[i] for i in bundle.concept_labels(concept)]
    ranges = [bundle.systems[key].label_range(include_inactive) for key in targets]
    rankings = label_rankings(service, labels, ranges, k + 1, mode)  # + 1: room for the concept itself
    matches = best_per_concept(rankings, exclude={concept})[:k]
    return [service.result(rank, match.hit) for rank, match in enumerate(matches, start=1)]
