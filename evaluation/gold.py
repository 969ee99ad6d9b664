"""Gold sets built from the store, deterministic for a given seed.

- :func:`synonym_items`: text → concept items whose queries are a concept's own designations
  (HPO layperson or exact synonyms, ICD-10-CM inclusion terms).
- :func:`misspelled_items`: a concept's display with one or two typing errors → that concept.
- :func:`leaf_to_parent`: BioLORD's SCT-L2P, leaves queried against the non-leaf concepts.
- :func:`category_terms`: Schulz & Juric's category separation (term pairs: :mod:`evaluation.pairs`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from evaluation.hierarchy import Hierarchy, active_concepts
from evaluation.typos import misspell
from indexer.lexical.normalise import fold
from indexer.records import Concept, Designation, DesignationUse
from indexer.store.reader import StoreReader

T = TypeVar("T")

QUERY_KINDS: dict[str, Callable[[Designation], bool]] = {
    # layperson wording of the same meaning (HPO's `layperson` synonym type)
    "layperson": lambda d: d.scope == "EXACT" and d.type == "layperson",
    # untyped exact synonyms: layperson, abbreviation, uk_spelling, plural_form ... left out
    "exact": lambda d: d.scope == "EXACT" and d.type is None,
    # ICD-10-CM inclusion terms
    "inclusion": lambda d: d.type == "inclusion",
}


@dataclass(frozen=True)
class RankingItem:
    query: str
    gold: tuple[str, ...]  # any of these codes answers the query
    system: str


@dataclass(frozen=True)
class LeafToParent:
    items: list[RankingItem]
    candidates: frozenset[str]  # the search space: active concepts that have children


@dataclass(frozen=True)
class Categories:
    """Terms of three categories: ``anchor`` and ``close`` are semantically close, ``distant``
    is far from both (Schulz & Juric's Diagnostic procedure, Therapeutic procedure, Organism)."""

    anchor: tuple[str, ...]
    close: tuple[str, ...]
    distant: tuple[str, ...]


def sample(items: Sequence[T], size: int | None, seed: int) -> list[T]:
    """At most ``size`` items drawn without replacement by ``seed``, kept in their order."""
    if size is None or len(items) <= size:
        return list(items)
    return [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), size))]


def synonym_items(
    source: StoreReader | Iterable[Concept],
    system: str,
    kind: str = "layperson",
    *,
    concepts: Collection[str] | None = None,
    max_items: int | None = None,
    seed: int = 0,
) -> list[RankingItem]:
    """One item per distinct (case-folded) designation of kind ``kind`` (a :data:`QUERY_KINDS`
    key) of the active concepts in ``concepts`` (all when None), skipping designations equal to
    their concept's display. The gold is that concept, then every other active concept that
    carries the same text as any of its labels. ``source`` is the store (the system's newest
    version) or the system's concepts."""
    select = QUERY_KINDS[kind]
    bearers: dict[str, list[str]] = {}  # folded label -> codes carrying it
    queries: dict[str, tuple[str, str]] = {}  # folded query -> (text, code) of its first source
    active = active_concepts(source, system) if isinstance(source, StoreReader) else (c for c in source if c.active)
    for concept in active:
        for label in concept.labels():
            codes = bearers.setdefault(fold(label), [])
            if concept.code not in codes:
                codes.append(concept.code)
        if concepts is not None and concept.code not in concepts:
            continue
        display = fold(concept.display)
        for d in concept.designations:
            if d.active and d.use == DesignationUse.SYNONYM and select(d) and fold(d.text) != display:
                queries.setdefault(fold(d.text), (d.text, concept.code))
    items = [
        RankingItem(text, (code, *(c for c in bearers[key] if c != code)), system)
        for key, (text, code) in queries.items()
    ]
    return sample(items, max_items, seed)


def misspelled_items(
    hierarchy: Hierarchy, system: str, *, concepts: Collection[str] | None = None, max_items: int | None = None, seed: int = 0
) -> list[RankingItem]:
    """One item per concept of ``concepts`` (all when None): its display with one edit, or two
    (one time in three), by :func:`evaluation.typos.misspell`. A misspelling that is still some
    concept's label is skipped; the gold is the concept."""
    rng = random.Random(seed)
    labels = {fold(label) for texts in hierarchy.labels.values() for label in texts}
    items = []
    for code in sorted(hierarchy.labels if concepts is None else set(concepts) & set(hierarchy.labels)):
        typo = misspell(hierarchy.display(code), rng, edits=rng.choice((1, 1, 2)))
        if typo is not None and fold(typo) not in labels:
            items.append(RankingItem(typo, (code,), system))
    return sample(items, max_items, seed)


def leaf_to_parent(
    hierarchy: Hierarchy,
    system: str,
    *,
    concepts: Collection[str] | None = None,
    max_items: int | None = None,
    seed: int = 0,
) -> LeafToParent:
    """Each leaf (an active concept without active children) that has a parent, in ``concepts``
    when given: query its display, gold its parents. Leaves must be kept out of the search,
    so the result names the search space, every non-leaf concept."""
    items = [
        RankingItem(hierarchy.display(code), hierarchy.parents[code], system)
        for code in hierarchy.labels
        if hierarchy.is_leaf(code) and hierarchy.parents[code] and (concepts is None or code in concepts)
    ]
    candidates = frozenset(code for code in hierarchy.labels if not hierarchy.is_leaf(code))
    return LeafToParent(sample(items, max_items, seed), candidates)


def category_terms(
    hierarchy: Hierarchy, anchor: str, close: str, distant: str, *, max_terms: int = 40, seed: int = 0
) -> Categories:
    """Displays of the concepts below each of three root codes, at most ``max_terms`` each.

    A concept below more than one of the roots belongs to no category."""
    members = [hierarchy.descendants(root) for root in (anchor, close, distant)]
    terms = []
    for index, own in enumerate(members):
        others = set().union(*(m for i, m in enumerate(members) if i != index))
        codes = [code for code in hierarchy.labels if code in own and code not in others]
        terms.append(tuple(hierarchy.display(code) for code in sample(codes, max_terms, seed + index)))
    return Categories(*terms)
