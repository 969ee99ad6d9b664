"""Search as you type: a query rewrite on the ranking core, not a second ranker.

The finished words carry the meaning. While the last word is unfinished (the text does not end
with a space or punctuation), it is completed to a word of the scope's labels: among the words
it begins, the one held by most labels that also hold the finished words ("heart att" →
"attack", as in *Heart attack*), else the one held by most labels of the scope ("tachyc" →
"tachycardia"); a fragment that begins no word is kept as typed (the character channel still
finds a misspelling). The rewritten text is ranked by :meth:`SearchService.rank`, exactly as
``/search`` would rank it, so "heart att" lists what "heart attack" lists.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from app.search.scope import Scope
from app.search.service import Mode, Ranking, SearchService
from indexer.lexical.normalise import fold, words

MIN_PREFIX = 2  # shorter fragments are not completed
_LAST_WORD = re.compile(r"(\w+)$")


def partial_word(text: str) -> str | None:
    """The folded last word, unless the text ends with a space or punctuation (a finished word)."""
    match = _LAST_WORD.search(fold(text))
    return match.group(1) if match else None


def without_last_word(text: str) -> str:
    return re.sub(r"\w+$", "", text).strip()


class Autocomplete:
    """Completes the unfinished last word within the scope, then ranks with the core."""

    def __init__(self, service: SearchService, completions: int) -> None:
        self.service = service
        self.completions = completions

    def rewrite(self, text: str, scope: Scope) -> str:
        """The text the core ranks: ``text`` with its unfinished last word completed."""
        partial = partial_word(text)
        if partial is None or len(partial) < MIN_PREFIX or not self.completions:
            return text.strip()
        vocabulary = self.service.vocabulary
        ranges = tuple(scope.ranges(self.service.bundle))
        options = list(vocabulary.completions(partial, ranges, self.completions))
        if partial in vocabulary and partial not in options:
            options.insert(0, partial)
        if not options:
            return text.strip()
        finished = without_last_word(text)
        best = self._with_finished(options, words(finished), ranges) or options[0]
        return f"{finished} {best}".strip()

    def _with_finished(self, options: Sequence[str], finished: list[str], ranges: tuple[tuple[int, int], ...]) -> str | None:
        """The option held by most labels of the scope that also hold every finished word."""
        if not finished:
            return None
        vocabulary = self.service.vocabulary
        labels = vocabulary.labels_with(finished[0])
        for word in finished[1:]:
            labels = np.intersect1d(labels, vocabulary.labels_with(word), assume_unique=True)
        labels = labels[_inside(labels, ranges)]
        counts = {option: vocabulary.cooccurring(option, labels) for option in options}
        best = max(options, key=counts.__getitem__)
        return best if counts[best] else None

    def rank(self, text: str, scope: Scope, k: int, min_confidence: float = 0.0) -> Ranking:
        return self.service.rank(self.rewrite(text, scope), scope, k, Mode.HYBRID, min_confidence)


def _inside(labels: np.ndarray, ranges: tuple[tuple[int, int], ...]) -> np.ndarray:
    keep = np.zeros(len(labels), dtype=bool)
    for start, stop in ranges:
        keep |= (labels >= start) & (labels < stop)
    return keep
