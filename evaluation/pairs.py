"""Schulz & Juric term-similarity pairs built from the store.

Positives: name–synonym and synonym–synonym pairs within a concept, the synonyms being the
active designations of scope EXACT or none (so not BROAD, NARROW, RELATED) that differ from
the name once case-folded. Each positive is easy when the Levenshtein distance of the two
case-folded terms is at most 5 and hard otherwise (the paper's ``split_distance``: the largest
distance of an easy pair).

Negatives are made from each positive's first term, the anchor, as in the paper: ``random``
pairs it with a random term, ``levenshtein`` with a term at the smallest Levenshtein distance
(ties broken at random); an anchor shared by n positives gets its n nearest distinct terms.
A negative takes the easy/hard flag of the positive it was made from, so the easy (hard)
dataset is the easy (hard) positives with their negatives; its own distance is recorded too.
Negative terms come from the same concepts as the positives, never from the anchor's concept
nor from a concept sharing a (case-folded) term with it, and no pair is made twice.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from evaluation.gold import sample
from evaluation.hierarchy import active_concepts
from indexer.lexical.normalise import fold
from indexer.records import Concept, DesignationUse
from indexer.store.reader import StoreReader

EASY_MAX_DISTANCE = 5
NEGATIVE_KINDS = ("random", "levenshtein")
_RANDOM_TRIES = 1000
_CHUNK = 256  # anchors per distance matrix


@dataclass(frozen=True)
class TermPair:
    a: str
    b: str
    label: int  # 1 similar, 0 dissimilar
    kind: str  # "name-synonym", "synonym-synonym", "random" or "levenshtein"
    distance: int  # Levenshtein distance of the case-folded terms
    hard: bool


@dataclass(frozen=True)
class _Positive:
    pair: TermPair
    code: str  # the concept both terms belong to


def distance(a: str, b: str) -> int:
    """Levenshtein distance of the case-folded terms."""
    return Levenshtein.distance(fold(a), fold(b))


def synonyms(concept: Concept) -> list[str]:
    """The concept's synonyms for similarity pairs, distinct and unlike its name once folded."""
    seen = {fold(concept.display)}
    found = []
    for d in concept.designations:
        if d.active and d.use == DesignationUse.SYNONYM and d.scope in (None, "EXACT") and fold(d.text) not in seen:
            seen.add(fold(d.text))
            found.append(d.text)
    return found


def term_pairs(
    reader: StoreReader,
    system: str,
    *,
    concepts: Collection[str] | None = None,
    synonym_pairs: bool = True,
    negatives: Sequence[str] = NEGATIVE_KINDS,
    max_positives: int | None = None,
    seed: int = 0,
) -> list[TermPair]:
    """Positives of the active concepts in ``concepts`` (all when None), at most
    ``max_positives`` drawn by ``seed``, then one negative per positive for each strategy in
    ``negatives``, drawn from the terms of the same concepts. Name–synonym pairs always,
    synonym–synonym pairs when ``synonym_pairs``."""
    unknown = set(negatives) - set(NEGATIVE_KINDS)
    if unknown:
        raise ValueError(f"unknown negative strategies {sorted(unknown)}; known: {NEGATIVE_KINDS}")
    terms: dict[str, list[str]] = {}
    candidates: list[tuple[str, str, str, str]] = []  # code, a, b, kind
    for concept in active_concepts(reader, system):
        if concepts is None or concept.code in concepts:
            names = synonyms(concept)
            terms[concept.code] = [concept.display, *names]
            candidates += [(concept.code, concept.display, s, "name-synonym") for s in names]
            if synonym_pairs:
                candidates += [(concept.code, a, b, "synonym-synonym") for a, b in combinations(names, 2)]
    chosen = [_positive(*c) for c in sample(candidates, max_positives, seed)]
    pool = _Pool(terms)
    rng = random.Random(seed)
    made = [p.pair for p in chosen]
    if "random" in negatives:
        made += _random_negatives(chosen, pool, rng)
    if "levenshtein" in negatives:
        made += _levenshtein_negatives(chosen, pool, rng)
    return made


def _positive(code: str, a: str, b: str, kind: str) -> _Positive:
    d = distance(a, b)
    return _Positive(TermPair(a, b, 1, kind, d, d > EASY_MAX_DISTANCE), code)


class _Pool:
    """Every term once (keyed by its folded text) and the concepts that carry it."""

    def __init__(self, terms: dict[str, list[str]]) -> None:
        self.text: dict[str, str] = {}  # folded -> first original text
        self.bearers: dict[str, set[str]] = {}
        folded = {code: [fold(t) for t in texts] for code, texts in terms.items()}
        for code, texts in terms.items():
            for text, key in zip(texts, folded[code]):
                self.text.setdefault(key, text)
                self.bearers.setdefault(key, set()).add(code)
        self.terms = list(self.text)
        self._similar = {  # concept -> concepts sharing a term with it (itself included)
            code: set().union(*(self.bearers[key] for key in keys)) for code, keys in folded.items()
        }

    def allowed(self, code: str) -> Callable[[str], bool]:
        """Whether a folded term may be a negative for an anchor of concept ``code``."""
        similar = self._similar[code]
        return lambda term: similar.isdisjoint(self.bearers[term])

    def distances(self, queries: list[str]) -> np.ndarray:
        """Levenshtein distances of folded ``queries`` (rows) to every term (columns)."""
        return process.cdist(queries, self.terms, scorer=Levenshtein.distance, dtype=np.int32, workers=1)


class _Negatives:
    """The negatives of one strategy: which terms an anchor may take, and no pair made twice."""

    def __init__(self, pool: _Pool, kind: str) -> None:
        self.pool, self.kind = pool, kind
        self.used: set[frozenset[str]] = set()
        self.made: list[TermPair] = []

    def fits(self, positive: _Positive) -> Callable[[str], bool]:
        allowed, anchor = self.pool.allowed(positive.code), fold(positive.pair.a)
        return lambda term: allowed(term) and frozenset((anchor, term)) not in self.used

    def add(self, positive: _Positive, term: str) -> None:
        self.used.add(frozenset((fold(positive.pair.a), term)))
        a, b = positive.pair.a, self.pool.text[term]
        self.made.append(TermPair(a, b, 0, self.kind, distance(a, b), positive.pair.hard))


def _random_negatives(positives: Iterable[_Positive], pool: _Pool, rng: random.Random) -> list[TermPair]:
    negatives = _Negatives(pool, "random")
    for positive in positives:
        fits = negatives.fits(positive)
        term = next((t for t in (rng.choice(pool.terms) for _ in range(_RANDOM_TRIES)) if fits(t)), None)
        if term is None:  # nearly every term is excluded: draw from those that are not
            fitting = [t for t in pool.terms if fits(t)]
            term = rng.choice(fitting) if fitting else None
        if term is not None:
            negatives.add(positive, term)
    return negatives.made


def _levenshtein_negatives(positives: Sequence[_Positive], pool: _Pool, rng: random.Random) -> list[TermPair]:
    """Anchors go through rapidfuzz's C++ ``cdist`` against every term in chunks, which keeps
    memory bounded (a chunk × all terms) and costs about 1.5 ms an anchor over HPO's 39k terms."""
    by_anchor: dict[str, list[_Positive]] = {}
    for positive in positives:
        by_anchor.setdefault(fold(positive.pair.a), []).append(positive)
    anchors = list(by_anchor)
    negatives = _Negatives(pool, "levenshtein")
    for start in range(0, len(anchors), _CHUNK):
        chunk = anchors[start : start + _CHUNK]
        for anchor, row in zip(chunk, pool.distances(chunk)):
            group = by_anchor[anchor]
            for positive, term in zip(group, _nearest(row, len(group), pool.terms, negatives.fits(group[0]), rng)):
                negatives.add(positive, term)
    return negatives.made


def _nearest(row: np.ndarray, n: int, terms: list[str], allowed: Callable[[str], bool], rng: random.Random) -> list[str]:
    """The ``n`` allowed terms nearest by the distances in ``row``, ties in random order: look
    within distance 1, 2, 4, ... until n allowed terms are in reach (the n nearest are then
    among them)."""
    farthest = int(row.max(initial=0))
    cutoff = 1
    while True:
        found = [(terms[i], int(row[i])) for i in np.flatnonzero(row <= cutoff) if allowed(terms[i])]
        if len(found) >= n or cutoff >= farthest:
            break
        cutoff *= 2
    rng.shuffle(found)
    found.sort(key=lambda item: item[1])
    return [t for t, _ in found[:n]]
