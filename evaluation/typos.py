"""Realistic misspellings of a term, for typo-tolerance benchmarks (fixed seed, no network).

One or two edits of the kinds people make when typing clinical words: a dropped letter, a
doubled or undoubled letter, two neighbouring letters swapped, a neighbouring key, a vowel
confused with another. Edits touch words of four letters or more and never the first letter.
"""

from __future__ import annotations

import random
import re

_NEIGHBOURS = {
    row[i]: row[max(0, i - 1) : i] + row[i + 1 : i + 2]
    for row in ("qwertyuiop", "asdfghjkl", "zxcvbnm")
    for i in range(len(row))
}
_VOWELS = "aeiou"
_WORD = re.compile(r"[A-Za-z]{4,}")


def _edit(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word))
    kind = rng.choice(("drop", "double", "swap", "neighbour", "vowel"))
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    if kind == "double":
        return word[:i] + word[i] + word[i:]
    if kind == "swap" and i < len(word) - 1:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    lower = word[i].lower()
    if kind == "vowel" and lower in _VOWELS:
        return word[:i] + rng.choice([v for v in _VOWELS if v != lower]) + word[i + 1 :]
    if lower in _NEIGHBOURS:
        return word[:i] + rng.choice(_NEIGHBOURS[lower]) + word[i + 1 :]
    return word[:i] + word[i + 1 :]


def misspell(term: str, rng: random.Random, edits: int = 1) -> str | None:
    """``term`` with ``edits`` edits in its longer words, or None when it has no word to edit."""
    spans = [m.span() for m in _WORD.finditer(term)]
    if not spans:
        return None
    out = term
    for _ in range(edits):
        spans = [m.span() for m in _WORD.finditer(out)]
        if not spans:
            break
        start, stop = rng.choice(spans)
        out = out[:start] + _edit(out[start:stop], rng) + out[stop:]
    return out if out.casefold() != term.casefold() else None
