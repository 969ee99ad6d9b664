"""Pair and triplet builders over an :class:`OntologyGraph`, restricted to training concepts.

Only concepts in ``allowed`` contribute text anywhere (anchor, positive, negative, or a word of a
generated description), so held-out concepts never leak into training. Every builder is
deterministic for a given ``random.Random`` state.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from itertools import permutations

from training.data.graph import Key, OntologyGraph

Pair = tuple[str, str]
Triplet = tuple[str, str, str]

SUBTYPE = "has subtype"
KIND_OF = "is a kind of"


def definition_pairs(graph: OntologyGraph, allowed: set[Key], repeats: int, rng: random.Random) -> list[Pair]:
    """Columns ``(anchor, positive)`` = (a name or synonym, one of the concept's definitions).

    Each definition is repeated ``repeats`` times with a different label of the concept where
    there is one (BioLORD oversamples definitions the same way, 50 times there).
    """
    pairs: list[Pair] = []
    for key in sorted(allowed):
        node = graph.nodes[key]
        for definition in node.definitions:
            labels = rng.sample(node.labels, len(node.labels))
            pairs.extend((labels[i % len(labels)], definition) for i in range(repeats))
    return pairs


def descriptions(graph: OntologyGraph, key: Key, allowed: set[Key], rng: random.Random) -> list[str]:
    """Graph descriptions of one concept, with BioLORD's template
    "[more generic concept] which [relationship] [related concept]".

    The generic term is the name of a random ancestor, else "something". Hierarchy edges read
    "which has subtype <child>" and, towards a parent, "something which is a kind of <parent's
    name>" (an ancestor as the generic term would misread there; another label of the parent may
    be an entry of it rather than its title).
    """
    node = graph.nodes[key]
    ancestors = [a for a in graph.ancestors(key) if a in allowed]
    generic = graph.nodes[rng.choice(ancestors)].name if ancestors else "something"
    texts = [f"something which {KIND_OF} {graph.nodes[p].name}" for p in node.parents if p in allowed]
    edges = [(generic, SUBTYPE, c) for c in node.children]
    edges += [(generic, verb, t) for verb, t in node.relations]
    return texts + [f"{subject} which {verb} {_label(graph, target, rng)}" for subject, verb, target in edges if target in allowed]


def meaning(graph: OntologyGraph, key: Key, allowed: set[Key], rng: random.Random) -> str:
    """What a concept means, for distillation targets: its first definition, else one of its
    descriptions, else its name."""
    node = graph.nodes[key]
    return (node.definitions or descriptions(graph, key, allowed, rng) or [node.name])[0]


def description_pairs(graph: OntologyGraph, allowed: set[Key], per_concept: int, rng: random.Random) -> list[Pair]:
    """Columns ``(anchor, positive)`` = (a name or synonym, a generated description); at most
    ``per_concept`` descriptions of each concept, each with a random label of it."""
    pairs: list[Pair] = []
    for key in sorted(allowed):
        texts = descriptions(graph, key, allowed, rng)
        for text in rng.sample(texts, min(per_concept, len(texts))):
            pairs.append((rng.choice(graph.nodes[key].labels), text))
    return pairs


def synonym_pairs(graph: OntologyGraph, allowed: set[Key], per_concept: int, rng: random.Random) -> list[Pair]:
    """Columns ``(anchor, positive)`` = two different labels of one concept (SapBERT-style)."""
    pairs: list[Pair] = []
    for key in sorted(allowed):
        candidates = list(permutations(graph.nodes[key].labels, 2))
        pairs.extend(rng.sample(candidates, min(per_concept, len(candidates))))
    return pairs


def entry_descriptions(graph: OntologyGraph, allowed: set[Key]) -> list[Pair]:
    """Columns ``(anchor, positive)`` = (a concept's name, "<entry term> which is a kind of <name>").

    ICD-10-CM's inclusion terms are narrower or sibling conditions ("Pedestrian on hoverboard" under
    a segway code), so they describe the code rather than name it: never a synonym pair.
    """
    pairs: list[Pair] = []
    for key in sorted(allowed):
        name = graph.nodes[key].name
        pairs.extend((name, f"{entry} which {KIND_OF} {name}") for entry in graph.nodes[key].entries)
    return pairs


def hierarchy_rows(graph: OntologyGraph, allowed: set[Key], rng: random.Random) -> list[Triplet]:
    """Columns ``(anchor, positive, negative)`` = (a label of a concept, its parent's name, an uncle's
    name): the parent is near and a branch over is far, for every concept that has both."""
    rows: list[Triplet] = []
    for key in sorted(allowed):
        parents = [p for p in graph.nodes[key].parents if p in allowed]
        uncles = [u for u in graph.uncles(key) if u in allowed]
        if parents and uncles:
            parent, uncle = rng.choice(parents), rng.choice(uncles)
            rows.append((_label(graph, key, rng), graph.nodes[parent].name, graph.nodes[uncle].name))
    return rows


def lay_pairs(graph: OntologyGraph, allowed: set[Key]) -> list[Pair]:
    """Columns ``(anchor, positive)`` = (a layperson synonym, each other label of its concept that
    is not lay wording): what a patient says, pulled towards how clinicians name it."""
    pairs: list[Pair] = []
    for key in sorted(allowed):
        node = graph.nodes[key]
        formal = [label for label in node.labels if label not in node.lay]
        pairs.extend((lay, label) for lay in node.lay for label in formal)
    return pairs


def triplets(graph: OntologyGraph, allowed: set[Key], rng: random.Random) -> list[Triplet]:
    """Columns ``(anchor, positive, negative)``, Triplet-BERT's Algorithm 1 less its parent-as-negative row.

    For each ordered pair of distinct labels (l1, l2) of a concept, with a random label p of a
    direct parent and a random label o of a sibling or uncle: (l1, l2, o), (l1, p, o). Algorithm 1's
    (l1, l2, p) is left out: it pushes the parent away, the leaf → parent failure. A triplet whose
    parent or other label is missing is skipped.
    """
    out: list[Triplet] = []
    for key in sorted(allowed):
        node = graph.nodes[key]
        parents = [p for p in node.parents if p in allowed]
        others = [o for o in graph.siblings(key) + graph.uncles(key) if o in allowed]
        for first, second in permutations(node.labels, 2):
            parent = _label(graph, rng.choice(parents), rng) if parents else None
            other = _label(graph, rng.choice(others), rng) if others else None
            out.extend(t for t in ((first, second, other), (first, parent, other)) if None not in t)
    return out


def sample(items: Iterable, limit: int | None, rng: random.Random) -> list:
    """At most ``limit`` items, uniformly, in a shuffled order."""
    items = list(items)
    rng.shuffle(items)
    return items if limit is None else items[:limit]


def _label(graph: OntologyGraph, key: Key, rng: random.Random) -> str:
    return rng.choice(graph.nodes[key].labels)
