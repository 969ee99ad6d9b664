"""Search as you type: a query rewrite on the ranking core, not a second ranker.

The finished words carry the meaning. While the last word is unfinished (the text does not end
with a space or punctuation), it is completed to a word of the scope's labels: among the words
it begins, the one held by most labels that also hold the finished words ("heart att" →
"attack", as in *Heart attack*, in any loaded system), else the fragment itself when it is a
word ("can't hear" stays), else the one held by most labels of the scope ("tachyc" →
"tachycardia"); a fragment that begins no word is kept as typed (the character channel still
finds a misspelling). The rewritten text is ranked by :meth:`SearchService.rank`, exactly as
``/search`` would rank it, so "heart att" lists what "heart attack" lists; while a word is
unfinished the list is never blank (rows below the threshold are listed, with their confidence).
"""

from __future__ import annotations

import re
from functools import cached_property

import numpy as np

from app.search.scope import Scope
from app.search.service import SearchService
from app.search.values import Mode, Ranking
from indexer.lexical.normalise import fold, words

MIN_PREFIX = 2  # shorter fragments are not completed
MIN_FALLBACK = 3  # a text this long whose last word is unfinished lists rows below the threshold rather than none
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

    @cached_property
    def _everywhere(self) -> tuple[tuple[int, int], ...]:
        """The label ranges of every loaded system."""
        return tuple(system.label_range(True) for system in self.service.bundle.systems.values())

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
        if finished_words := words(finished):
            best = self._with_finished(partial, finished_words, self._everywhere)
        else:
            options = vocabulary.completions(partial, tuple(scope.ranges(bundle)), self.completions) or (
                vocabulary.completions(partial, self._everywhere, self.completions)
            )
            best = None if partial in vocabulary or not options else options[0]
        return f"{finished} {best}".strip() if best else text.strip()

    def _unfinished(self, text: str, rewritten: str, ranking: Ranking) -> bool:
        """Whether ``text`` (3 characters or more) ends in a word being typed that goes somewhere:
        completed, corrected, after finished words, or the beginning of a word of the labels."""
        partial = partial_word(text.rstrip("'-/"))  # "can'", "cone-": a word still being typed
        if partial is None or len(text.strip()) < MIN_FALLBACK:
            return False
        if rewritten != text.strip() or ranking.suggestion or words(without_last_word(text)):
            return True
        return bool(self.service.vocabulary.completions(partial, self._everywhere, 1))

    def _with_finished(self, partial: str, finished: list[str], ranges: tuple[tuple[int, int], ...]) -> str | None:
        """The completion of ``partial`` held by most labels in ``ranges`` that also hold every
        finished word."""
        vocabulary = self.service.vocabulary
        labels = vocabulary.labels_with(finished[0])
        for word in finished[1:]:
            labels = np.intersect1d(labels, vocabulary.labels_with(word), assume_unique=True)
        return vocabulary.completions_among(partial, labels[_inside(labels, ranges)])

    def rank(self, text: str, scope: Scope, k: int, min_confidence: float = 0.0, spare_whole_words: bool = False) -> Ranking:
        """The core's ranking of the rewritten text. While the last word is being typed and goes
        somewhere (:meth:`_unfinished`), the list never goes blank: when no
        row reaches ``min_confidence``, the best rows below it are listed (their confidence says
        how low), so a coder's list does not flicker empty mid-word ("left knee o").
        ``spare_whole_words``: as :meth:`SearchService.rank`."""
        rewritten = self.rewrite(text, scope)
        ranking = self.service.rank(rewritten, scope, k, Mode.HYBRID, min_confidence, spare_whole_words)
        if ranking.rows or not min_confidence or not self._unfinished(text, rewritten, ranking):
            return ranking
        below = self.service.rank(rewritten, scope, k, Mode.HYBRID, 0.0)
        return Ranking(below.rows, below.suggestion, len(below.rows))


def _inside(labels: np.ndarray, ranges: tuple[tuple[int, int], ...]) -> np.ndarray:
    keep = np.zeros(len(labels), dtype=bool)
    for start, stop in ranges:
        keep |= (labels >= start) & (labels < stop)
    return keep
