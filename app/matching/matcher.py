"""Batch ontology matching: each source's labels against a target system, top ``k`` concepts.

Every source goes through the ranking core (:func:`app.search.similar.match_labels`, as
concept → concept search): each label is ranked as ``/search`` ranks it within the target's
scope (its system, optionally a subtree, never the source concept itself), and a candidate scores
its best (source label, target label) pair. Scores are in [0, 1] in every mode, so ``min_score``
means the same thing:

- ``hybrid`` (default): the core's calibrated confidence, so candidates come in the order
  ``/search`` gives them (details agreeing, ambiguous abbreviations split, "w/o" read);
- ``dense``: cosine similarity of the best pair (the core counts negative cosines as 0);
- ``lexical``: BM25 finds the candidates; each is scored by the token-sort similarity of the
  folded label pair (rapidfuzz ``token_sort_ratio`` / 100).

Every candidate also carries the core's calibrated ``confidence``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rapidfuzz import fuzz

from app.matching.request import MatchMode, Source, Target
from app.search.service import SearchService
from app.search.similar import LabelMatch, match_labels
from app.search.values import Mode, Result
from indexer.lexical.normalise import fold

LEXICAL_DEPTH = 4  # BM25 candidates per label, per wanted concept


@dataclass(frozen=True)
class Candidate(Result):
    """A search result (``matched_term``: the target's label of the best pair) and the source's
    label of that pair."""

    source_term: str


@dataclass(frozen=True)
class SourceMatches:
    id: str
    label: str  # the source's first label (its display)
    candidates: list[Candidate]


class Matcher:
    """Matches sources against one served bundle through its ranking core."""

    def __init__(self, service: SearchService) -> None:
        self.service = service

    def match(
        self,
        sources: Sequence[Source],
        target: Target,
        k: int,
        min_score: float,
        mode: MatchMode,
        min_confidence: float = 0.0,
        check: Callable[[], None] = lambda: None,
    ) -> list[SourceMatches]:
        """Candidates of every source, best first, ``score >= min_score`` and ``confidence >=
        min_confidence``, at most ``k``; ``check`` runs before each source (and may raise to stop)."""
        out = []
        for source in sources:
            check()
            out.append(self._answer(source, self._matches(source, target, k, mode), k, min_score, min_confidence))
        return out

    def _matches(self, source: Source, target: Target, k: int, mode: MatchMode) -> list[LabelMatch]:
        own = frozenset() if source.concept is None else frozenset({source.concept})
        scope = target.scope(self.service.bundle, own)
        if mode is not MatchMode.LEXICAL:
            return match_labels(self.service, source.labels, scope, k, Mode(mode.value))
        texts = self.service.bundle.label_text
        found = match_labels(self.service, source.labels, scope, LEXICAL_DEPTH * k, Mode.LEXICAL)
        rescored = [
            LabelMatch(replace(m.ranked, score=token_sort_similarity(source.labels[m.query], texts[m.ranked.label])), m.query)
            for m in found
        ]
        return sorted(rescored, key=lambda m: (-m.ranked.score, m.ranked.row))

    def _answer(
        self, source: Source, matches: Sequence[LabelMatch], k: int, min_score: float, min_confidence: float
    ) -> SourceMatches:
        kept = [m for m in matches if m.ranked.score >= min_score and m.ranked.confidence >= min_confidence][:k]
        candidates = [
            Candidate(
                **vars(self.service.result(rank, m.ranked)),
                source_term=source.labels[m.query],
            )
            for rank, m in enumerate(kept, start=1)
        ]
        return SourceMatches(source.id, source.labels[0], candidates)


def token_sort_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two labels' folded, sorted words (1.0: the same words)."""
    return fuzz.token_sort_ratio(fold(a), fold(b)) / 100.0
