"""The words of a bundle's labels, for completing a partly typed word (``app.search.autocomplete``)."""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from indexer.lexical.normalise import stem, words


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
