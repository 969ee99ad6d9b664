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

import heapq
import re
import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Container, Iterable
from functools import lru_cache

from app.search.service import Hit, SearchService, rrf
from indexer.lexical.normalise import fold, stem, words

MIN_PREFIX = 2  # shorter fragments are not completed
PARTIAL_DENSE_WEIGHT = 0.5
VECTOR_CACHE = 4096  # dense query vectors kept
_LAST_WORD = re.compile(r"(\w+)$")


class Vocabulary:
    """The distinct folded words of a set of labels, with the number of labels holding each."""

    def __init__(self, texts: Iterable[str]) -> None:
        counts = Counter(word for text in texts for word in set(words(text)))
        self._words = sorted(counts)
        self._counts = [counts[word] for word in self._words]
        self.completions = lru_cache(maxsize=50_000)(self._completions)

    def __contains__(self, word: object) -> bool:
        i = bisect_left(self._words, word)  # type: ignore[arg-type]
        return i < len(self._words) and self._words[i] == word

    def _completions(self, prefix: str, n: int) -> tuple[str, ...]:
        """The ``n`` most frequent words starting with ``prefix``, one per stem."""
        lo, hi = bisect_left(self._words, prefix), bisect_left(self._words, prefix + "\U0010ffff")
        chosen: dict[str, str] = {}
        for i in heapq.nlargest(n * 3, range(lo, hi), key=self._counts.__getitem__):
            chosen.setdefault(stem(self._words[i]), self._words[i])
            if len(chosen) == n:
                break
        return tuple(chosen.values())


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
        self._vocabulary: Vocabulary | None = None
        self._lock = threading.Lock()
        self._vector = lru_cache(maxsize=VECTOR_CACHE)(service.encode)

    @property
    def vocabulary(self) -> Vocabulary:
        """Built from the bundle's labels on first use (about a second per 150k labels)."""
        with self._lock:
            if self._vocabulary is None:
                self._vocabulary = Vocabulary(self.service.bundle.label_text)
            return self._vocabulary

    def rank(
        self, text: str, ranges: list[tuple[int, int]], depth: int, allowed: Container[int] | None = None
    ) -> list[Hit]:
        """The top ``depth`` concepts; each keeps its best lexical label where it has one."""
        partial = partial_word(text)
        unfinished = partial is not None and partial not in self.vocabulary
        extra = (
            self.vocabulary.completions(partial, self.completions)
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
