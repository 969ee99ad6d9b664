"""Batch ontology matching: each source's labels against a target system, top ``k`` concepts.

A candidate scores its best pair (source label, target label), as in concept → concept search
(:mod:`app.search.similar`), and scores are in [0, 1] in both modes so that ``min_score`` means
the same thing:

- ``dense``: cosine similarity (negative cosines count as 0). With the numpy vector backend (the
  default) a batch's labels are encoded at once and multiplied with the target's label vectors
  in one matrix product per block; a concept's score is the maximum over its labels
  (``np.maximum.reduceat``), exact, with no oversampling. Other backends search label by label.
- ``lexical``: BM25 finds ``4k`` candidate concepts per label; each is scored by the token-sort
  similarity of the folded label pair (rapidfuzz ``token_sort_ratio`` / 100).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

from app.matching.request import MatchMode, Source, Target
from app.search.service import Hit, Mode, Result, SearchService
from app.search.similar import LabelMatch, best_per_concept, label_rankings
from indexer.lexical.normalise import fold

BLOCK_ROWS = 128  # query labels per matrix product (128 × 111k ICD-10-CM labels: 57 MB of scores)
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
    """Matches against one served bundle; keeps each target's label vectors between batches."""

    def __init__(self, service: SearchService) -> None:
        self.service = service
        self._dense_targets: dict[Target, _DenseTarget] = {}

    def match(
        self, sources: Sequence[Source], target: Target, k: int, min_score: float, mode: MatchMode
    ) -> list[SourceMatches]:
        """Candidates of every source, best first, ``score >= min_score``, at most ``k``."""
        if mode is MatchMode.LEXICAL:
            per_source = self._lexical(sources, target, k)
        elif getattr(self.service.bundle.vectors, "matrix", None) is not None:
            if target not in self._dense_targets:
                self._dense_targets[target] = _DenseTarget(self.service, target)
            per_source = self._dense_targets[target].match(sources, k)
        else:
            rankings = self._by_label(sources, target, k + 1, Mode.DENSE)  # + 1: room for the source itself
            per_source = [best_per_concept(r, exclude=_own(s)) for s, r in zip(sources, rankings, strict=True)]
        return [self._answer(source, matches, k, min_score) for source, matches in zip(sources, per_source, strict=True)]

    def _by_label(self, sources: Sequence[Source], target: Target, depth: int, mode: Mode) -> list[list[list[Hit]]]:
        """Per source, one ranking per label (all the batch's labels searched together)."""
        texts = [label for source in sources for label in source.labels]
        rankings = label_rankings(self.service, texts, target.ranges(self.service), depth, mode, target.allowed)
        split: list[list[list[Hit]]] = []
        start = 0
        for source in sources:
            split.append(rankings[start : start + len(source.labels)])
            start += len(source.labels)
        return split

    def _lexical(self, sources: Sequence[Source], target: Target, k: int) -> list[list[LabelMatch]]:
        texts = self.service.bundle.label_text
        merged = []
        for source, rankings in zip(sources, self._by_label(sources, target, LEXICAL_DEPTH * k, Mode.LEXICAL)):
            rescored = [
                [Hit(h.concept, token_sort_similarity(label, texts[h.label]), h.label) for h in ranking]
                for label, ranking in zip(source.labels, rankings, strict=True)
            ]
            merged.append(best_per_concept(rescored, exclude=_own(source)))
        return merged

    def _answer(self, source: Source, matches: Sequence[LabelMatch], k: int, min_score: float) -> SourceMatches:
        kept = [m for m in matches if max(m.score, 0.0) >= min_score][:k]  # a negative cosine is no similarity
        candidates = [
            Candidate(
                **vars(self.service.result(rank, Hit(m.concept, max(float(m.score), 0.0), m.label))),
                source_term=source.labels[m.query],
            )
            for rank, m in enumerate(kept, start=1)
        ]
        return SourceMatches(source.id, source.labels[0], candidates)


def token_sort_similarity(a: str, b: str) -> float:
    """Similarity in [0, 1] of two labels' folded, sorted words (1.0: the same words)."""
    return fuzz.token_sort_ratio(fold(a), fold(b)) / 100.0


def _own(source: Source) -> tuple[int, ...]:
    return () if source.concept is None else (source.concept,)


class _DenseTarget:
    """The target's label vectors (a view of the memory-mapped matrix for a whole system) and
    where each concept's run of labels starts in them."""

    def __init__(self, service: SearchService, target: Target) -> None:
        self.service = service
        bundle = service.bundle
        start, stop = target.ranges(service)[0]
        ids = np.arange(start, stop)
        if target.allowed is not None:
            ids = ids[np.isin(bundle.label_concept[start:stop], np.fromiter(target.allowed, dtype=np.int64))]
        matrix = bundle.vectors.matrix  # type: ignore[attr-defined]
        self.vectors = matrix[start:stop] if target.allowed is None else matrix[ids]
        self.ids = ids
        concepts = bundle.label_concept[ids]
        self.starts = np.flatnonzero(np.r_[True, concepts[1:] != concepts[:-1]]) if len(ids) else np.empty(0, np.int64)
        self.concepts = concepts[self.starts]

    def match(self, sources: Sequence[Source], k: int) -> list[list[LabelMatch]]:
        if not len(self.ids):
            return [[] for _ in sources]
        texts = [label for source in sources for label in source.labels]
        queries = self.service.encoder.encode(texts)
        results: list[list[LabelMatch]] = []
        first = 0
        for block in _blocks(sources):
            rows = sum(len(source.labels) for source in block)
            scores = queries[first : first + rows] @ self.vectors.T  # (labels, target labels)
            per_concept = np.maximum.reduceat(scores, self.starts, axis=1)  # (labels, concepts)
            row = 0
            for source in block:
                n = len(source.labels)
                results.append(self._top(source, scores[row : row + n], per_concept[row : row + n], k))
                row += n
            first += rows
        return results

    def _top(self, source: Source, scores: np.ndarray, per_concept: np.ndarray, k: int) -> list[LabelMatch]:
        best_query = per_concept.argmax(axis=0)
        best = per_concept[best_query, np.arange(per_concept.shape[1])]
        if source.concept is not None:
            best[self.concepts == source.concept] = -np.inf
        k = min(k, len(best))
        top = np.argpartition(-best, k - 1)[:k]
        top = top[np.lexsort((self.concepts[top], -best[top]))]
        matches = []
        for segment in top:
            if best[segment] == -np.inf:
                continue
            query = int(best_query[segment])
            lo = self.starts[segment]
            hi = self.starts[segment + 1] if segment + 1 < len(self.starts) else len(self.ids)
            label = int(self.ids[lo + int(scores[query, lo:hi].argmax())])
            matches.append(LabelMatch(int(self.concepts[segment]), float(best[segment]), label, query))
        return matches


def _blocks(sources: Sequence[Source]) -> list[list[Source]]:
    """Consecutive sources, about :data:`BLOCK_ROWS` labels per block (a source is never split)."""
    blocks: list[list[Source]] = [[]]
    rows = 0
    for source in sources:
        if blocks[-1] and rows + len(source.labels) > BLOCK_ROWS:
            blocks.append([])
            rows = 0
        blocks[-1].append(source)
        rows += len(source.labels)
    return blocks if blocks[0] else []
