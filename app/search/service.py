"""Text → concept search over a bundle: dense, lexical, or hybrid (a convex combination).

Every label of every concept is indexed; a concept's score is that of its best label, and the
row names that label as ``matched_term``. Scores: cosine similarity (dense), BM25 (lexical),
``w·cosine + (1 − w)·BM25 / top BM25`` with ``w = dense_weight`` (hybrid, :func:`convex`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
import threading
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

import numpy as np

from indexer.bundle import Bundle
from indexer.encoders import Encoder
from indexer.settings import SearchSettings

from app.search.vocabulary import Vocabulary


LabelSearch = Callable[[int, tuple[int, int]], Iterable[tuple[float, int]]]
"""(how many labels, id range) -> (score, label id) pairs, best first."""


class Mode(StrEnum):
    DENSE = "dense"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class Hit:
    concept: int  # row in the bundle catalog
    score: float
    label: int  # best-matching label id


@dataclass(frozen=True)
class Result:
    rank: int
    system: str
    code: str
    display: str
    score: float
    matched_term: str


class SearchService:
    def __init__(self, bundle: Bundle, encoder: Encoder, settings: SearchSettings) -> None:
        self.bundle = bundle
        self.encoder = encoder
        self.settings = settings
        self._dense_slots = threading.BoundedSemaphore(settings.dense_slots)

    @cached_property
    def vocabulary(self) -> Vocabulary:
        """The labels' words (about a second per 150k labels): built when the service is opened,
        before it serves, so the first search-as-you-type request does not wait for it."""
        return Vocabulary(self.bundle.label_text)

    def search(
        self,
        query: str,
        systems: Sequence[str],
        k: int = 10,
        mode: Mode = Mode.HYBRID,
        include_inactive: bool = False,
    ) -> list[Result]:
        """Top ``k`` concepts of the given systems (all the bundle's when empty)."""
        ranges = [
            self.bundle.systems[key].label_range(include_inactive) for key in (systems or self.bundle.systems)
        ]
        if mode is Mode.DENSE:
            hits = self.dense(query, ranges, k)
        elif mode is Mode.LEXICAL:
            hits = self.lexical(query, ranges, k)
        else:
            depth = max(k, self.settings.fusion_depth)
            hits = self.fuse(self.dense(query, ranges, depth), self.lexical(query, ranges, depth))[:k]
        return [self.result(rank, hit) for rank, hit in enumerate(hits, start=1)]

    # ``allowed``, where given, keeps only those catalog rows (e.g. a subtree); label hits of other
    # concepts are skipped and more labels are fetched until ``k`` concepts are found.
    def dense(
        self, query: str | np.ndarray, ranges: list[tuple[int, int]], k: int, allowed: Container[int] | None = None
    ) -> list[Hit]:
        """``query``: the text, or its vector from :meth:`encode`."""
        with self._dense_slots:
            vector = self.encoder.encode([query])[0] if isinstance(query, str) else query
            return self.dense_by_vector(vector, ranges, k, allowed)

    def encode(self, query: str) -> np.ndarray:
        with self._dense_slots:
            return self.encoder.encode([query])[0]

    def dense_many(
        self, queries: Sequence[str], ranges: list[tuple[int, int]], k: int, allowed: Container[int] | None = None
    ) -> list[list[Hit]]:
        """:meth:`dense` for several queries, encoded in one batch."""
        with self._dense_slots:
            vectors = self.encoder.encode(list(queries))
            return [self.dense_by_vector(vector, ranges, k, allowed) for vector in vectors]

    def dense_by_vector(
        self, vector: np.ndarray, ranges: list[tuple[int, int]], k: int, allowed: Container[int] | None = None
    ) -> list[Hit]:
        return self._top_concepts(
            lambda n, r: zip(*self.bundle.vectors.search(vector, n, r), strict=True), ranges, k, allowed
        )

    def lexical(
        self, query: str, ranges: list[tuple[int, int]], k: int, allowed: Container[int] | None = None
    ) -> list[Hit]:
        return self._top_concepts(
            lambda n, r: ((s, i) for i, s in self.bundle.lexical.search(query, n, r)), ranges, k, allowed
        )

    def _top_concepts(
        self, search: LabelSearch, ranges: list[tuple[int, int]], k: int, allowed: Container[int] | None
    ) -> list[Hit]:
        best: dict[int, Hit] = {}
        for id_range in ranges:
            for concept, hit in self._concepts_in_range(search, id_range, k, allowed).items():
                if concept not in best or hit.score > best[concept].score:
                    best[concept] = hit
        return sorted(best.values(), key=lambda h: (-h.score, h.concept))[:k]

    def _concepts_in_range(
        self, search: LabelSearch, id_range: tuple[int, int], k: int, allowed: Container[int] | None
    ) -> dict[int, Hit]:
        """Group label hits into concepts, asking for more labels until ``k`` concepts are found."""
        size = id_range[1] - id_range[0]
        wanted = min(size, k * self.settings.label_oversample)
        found: dict[int, Hit] = {}
        while wanted > 0:
            found = {}
            hits = 0
            for score, label in search(wanted, id_range):
                hits += 1
                concept = int(self.bundle.label_concept[label])
                if allowed is None or concept in allowed:
                    found.setdefault(concept, Hit(concept, float(score), int(label)))
            if len(found) >= k or hits < wanted or wanted >= size:
                break
            wanted = min(size, wanted * 4)
        return found

    def fuse(self, dense: Sequence[Hit], lexical: Sequence[Hit]) -> list[Hit]:
        """Hybrid ranking of one query's dense and lexical concept rankings."""
        return convex(dense, lexical, self.settings.dense_weight)

    def result(self, rank: int, hit: Hit) -> Result:
        concept = self.bundle.concepts[hit.concept]
        return Result(rank, concept.system, concept.code, concept.display, hit.score, self.bundle.label_text[hit.label])


def convex(dense: Sequence[Hit], lexical: Sequence[Hit], dense_weight: float) -> list[Hit]:
    """Convex combination fusion (Bruch et al., 2023, "An Analysis of Fusion Functions for Hybrid
    Retrieval"): ``w·cosine + (1 − w)·BM25 / top BM25``. Unlike rank fusion, a concept that only
    the encoder finds ("heart attack" → Acute myocardial infarction) keeps its lead over concepts
    that share a word with the query but not its meaning. A concept missing from the dense ranking
    takes its lowest cosine (it ranked below all of those); missing from the lexical one, 0. A
    concept keeps its dense matched label where it has one."""
    floor = min((hit.score for hit in dense), default=0.0)
    top = max((hit.score for hit in lexical), default=0.0) or 1.0
    cosine = {hit.concept: hit.score for hit in dense}
    bm25 = {hit.concept: hit.score / top for hit in lexical}
    label = {hit.concept: hit.label for hit in (*lexical, *dense)}
    scores = {
        concept: dense_weight * cosine.get(concept, floor) + (1 - dense_weight) * bm25.get(concept, 0.0)
        for concept in label
    }
    return [Hit(c, s, label[c]) for c, s in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]


def rrf(rankings: Sequence[Sequence[Hit]], k: int, weights: Sequence[float] | None = None) -> list[Hit]:
    """Reciprocal rank fusion, ``Σ weight/(k + rank)`` (weights 1 unless given); a concept keeps
    the matched label of the first ranking that has it."""
    scores: dict[int, float] = {}
    label: dict[int, int] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.concept] = scores.get(hit.concept, 0.0) + weight / (k + rank)
            label.setdefault(hit.concept, hit.label)
    return [Hit(c, s, label[c]) for c, s in sorted(scores.items(), key=lambda item: (-item[1], item[0]))]
