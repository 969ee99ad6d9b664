"""Search as you type: a query rewrite on the ranking core, not a second ranker.

The finished words carry the meaning. While the last word is unfinished (the text does not end
with a space or punctuation), it is completed to a word of the scope's labels: among the words
it begins, the one held by most labels that also hold the finished words ("heart att" →
"attack", as in *Heart attack*, in any loaded system), else the fragment itself when it is a
word ("can't hear" stays), else the one held by most labels of the scope ("tachyc" →
"tachycardia"); a fragment that begins no word is kept as typed (the character channel still
finds a misspelling). The rewritten text is ranked by :meth:`SearchService.rank`, exactly as
``/search`` would rank it, so "heart att" lists what "heart attack" lists.
"""

from __future__ import annotations

import re

import numpy as np

from app.search.scope import Scope
from app.search.values import Mode, Ranking
from app.search.service import SearchService
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
        bundle = self.service.bundle
        finished = without_last_word(text)
        # The finished words choose among the completions, by the labels of every loaded system
        # (HPO's "Heart attack" completes "heart att" for an ICD-10-CM search too). When no
        # completion goes with them, the fragment stays as typed ("can't hear" is no "heart").
        # Alone, a fragment becomes its most common completion in the scope ("tachyc").
        everywhere = tuple(s.label_range(True) for s in bundle.systems.values())
        if finished_words := words(finished):
            best = self._with_finished(partial, finished_words, everywhere)
        else:
            options = vocabulary.completions(partial, tuple(scope.ranges(bundle)), self.completions) or (
                vocabulary.completions(partial, everywhere, self.completions)
            )
            best = None if partial in vocabulary or not options else options[0]
        return f"{finished} {best}".strip() if best else text.strip()

    def _with_finished(self, partial: str, finished: list[str], ranges: tuple[tuple[int, int], ...]) -> str | None:
        """The completion of ``partial`` held by most labels in ``ranges`` that also hold every
        finished word."""
        vocabulary = self.service.vocabulary
        labels = vocabulary.labels_with(finished[0])
        for word in finished[1:]:
            labels = np.intersect1d(labels, vocabulary.labels_with(word), assume_unique=True)
        return vocabulary.completions_among(partial, labels[_inside(labels, ranges)])

    def rank(self, text: str, scope: Scope, k: int, min_confidence: float = 0.0) -> Ranking:
        return self.service.rank(self.rewrite(text, scope), scope, k, Mode.HYBRID, min_confidence)


def _inside(labels: np.ndarray, ranges: tuple[tuple[int, int], ...]) -> np.ndarray:
    keep = np.zeros(len(labels), dtype=bool)
    for start, stop in ranges:
        keep |= (labels >= start) & (labels < stop)
    return keep
