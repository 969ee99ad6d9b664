"""Concept-disjoint splits: a concept's split depends only on (seed, system, code)."""

from __future__ import annotations

import hashlib
from enum import StrEnum

from indexer.lexical.normalise import fold
from training.data.graph import Key, OntologyGraph


class Split(StrEnum):
    TRAIN = "train"
    DEV = "dev"
    TEST = "test"


def split_of(key: Key, seed: int, dev: float, test: float) -> Split:
    """Stable across runs and machines, and independent of which other concepts exist."""
    digest = hashlib.sha256(f"{seed}\0{key[0]}\0{key[1]}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < test:
        return Split.TEST
    if u < test + dev:
        return Split.DEV
    return Split.TRAIN


def held_out(keys: list[Key], seed: int, dev: float, test: float) -> dict[Split, set[Key]]:
    groups: dict[Split, set[Key]] = {s: set() for s in Split}
    for key in keys:
        groups[split_of(key, seed, dev, test)].add(key)
    return groups


def guarded(graph: OntologyGraph, groups: dict[Split, set[Key]]) -> set[Key]:
    """The training concepts, with no text of a held-out concept: a training label, lay wording or
    entry term that equals (case-folded) a text of a dev or test concept of any system is dropped
    from its node, and a concept whose name does is left out ("Tachycardia" of ICD-10-CM when HPO's
    Tachycardia is held out). Nodes are changed in place."""
    held = {fold(text) for split in (Split.DEV, Split.TEST) for key in groups[split] for text in _texts(graph, key)}
    train = set()
    for key in groups[Split.TRAIN]:
        node = graph.nodes[key]
        if fold(node.name) in held:
            continue
        node.labels, node.lay, node.entries = ([t for t in texts if fold(t) not in held] for texts in (node.labels, node.lay, node.entries))
        train.add(key)
    return train


def _texts(graph: OntologyGraph, key: Key) -> list[str]:
    node = graph.nodes[key]
    return [*node.labels, *node.lay, *node.entries]
