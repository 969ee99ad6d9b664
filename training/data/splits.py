"""Concept-disjoint splits: a concept's split depends only on (seed, system, code)."""

from __future__ import annotations

import hashlib
from enum import StrEnum

from training.data.graph import Key


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
