"""Search as you type: hybrid search where the last, partly typed word also matches as a prefix.

The lexical side receives the text plus the most frequent label words that its last word begins
with ("tachyc" → "tachycardia", "tachycardic"), so BM25 over the shared normaliser's tokens
matches them on every lexical backend. The dense side receives the finished words only: while the
last word is not yet a known word it is left out (an encoder reads a fragment as noise; a lone
fragment is searched lexically only, unless it matches nothing) and the dense ranking weighs
half in the fusion. So the dense query stays the same while a word is being typed, and its
vector is cached (LRU): one encoding per finished word, not per keystroke.
"""

from __future__ import annotations

import re
from collections.abc import Container
from functools import lru_cache

from app.search.service import Hit, SearchService, rrf
from indexer.lexical.normalise import fold, words

MIN_PREFIX = 2  # shorter fragments are not completed
PARTIAL_DENSE_WEIGHT = 0.5
VECTOR_CACHE = 4096  # dense query vectors kept
_LAST_WORD = re.compile(r"(\w+)$")


def partial_word(text: str) -> str | None:
    """The folded last word, unless the text ends with a space or punctuation (a finished word)."""
    match = _LAST_WORD.search(fold(text))
    return match.group(1) if match else None


def without_last_word(text: str) -> str:
    return re.sub(r"\w+$", "", text).strip()


class Autocomplete:
    """Prefix-aware hybrid ranking over one search service (its bundle's labels)."""

    def __init__(self, service: SearchService, completions: int) -> None:
        self.service = service
        self.completions = completions
        self._vector = lru_cache(maxsize=VECTOR_CACHE)(service.encode)

    def rank(
        self, text: str, ranges: list[tuple[int, int]], depth: int, allowed: Container[int] | None = None
    ) -> list[Hit]:
        """The top ``depth`` concepts; each keeps its best lexical label where it has one."""
        partial = partial_word(text)
        vocabulary = self.service.vocabulary
        unfinished = partial is not None and partial not in vocabulary
        extra = (
            vocabulary.completions(partial, self.completions)
            if partial is not None and len(partial) >= MIN_PREFIX and self.completions
            else ()
        )
        lexical = self.service.lexical(" ".join((text, *extra)), ranges, depth, allowed)
        finished = without_last_word(text) if unfinished else text.strip()
        if not words(finished):
            if lexical:
                return lexical
            finished = text  # the fragment matched no word (a typo?): the encoder gets it as typed
        dense = self.service.dense(self._vector(finished), ranges, depth, allowed)
        weights = (1.0, PARTIAL_DENSE_WEIGHT if unfinished else 1.0)
        return rrf([lexical, dense], self.service.settings.rrf_k, weights)[:depth]
