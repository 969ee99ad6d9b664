"""The words of a bundle's labels: completing a partly typed word, spelling suggestions, and the
document frequency behind the word-coverage feature of the ranking core.

Built with the bundle (:meth:`Vocabulary.from_texts`, :meth:`Vocabulary.save` into
``vocabulary/``) and read back as arrays when it opens (:meth:`Vocabulary.load`): a serving
process never walks every label."""

from __future__ import annotations

import heapq
import json
import math
import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from functools import cached_property, lru_cache
from pathlib import Path

import jellyfish
import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import DamerauLevenshtein
from scipy import sparse

from indexer.lexical.normalise import stem, words

DIRECTORY = "vocabulary"
MIN_SUGGESTED = 5  # shorter unknown words get no spelling suggestion ("hear" is no typo of "heart")
SUGGEST_CUTOFF = 80  # rapidfuzz ratio a suggestion needs
SEGMENTED_MIN = 7  # shorter unknown words are not split into known ones ("lowbackpain": low back pain)
SEGMENT_PART_MIN = 3  # the shortest known word a split gives
SEGMENT_PARTS = 3  # the most words a split gives
SPOKEN_CUTOFF = 85  # the ratio of spoken forms a suggestion needs when the written forms are not close
SOUNDS_LIKE_CUTOFF = 75  # the ratio a word that sounds the same needs ("numonia" -> pneumonia: 87)
SOUNDS_LIKE_MIN = 6  # shorter unknown words are not matched by sound (too many sound alike)
FREQUENCY_WEIGHT = 4.0  # ratio points per tenfold more labels holding a candidate word


class Vocabulary:
    """The distinct folded words of a set of labels and the labels holding each; and which
    stemmed tokens each label holds (:attr:`token_columns`, :attr:`label_tokens`), whose column
    counts are the tokens' document frequencies."""

    def __init__(
        self, words: list[str], postings: sparse.csr_matrix, stems: list[str], label_tokens: sparse.csr_matrix,
        by_sound: dict[str, list[str]] | None = None,
    ) -> None:
        """``postings``: a row a word (sorted), its columns the labels holding it;
        ``label_tokens``: a row a label, its columns the stems (``stems``) it holds."""
        self._words = words
        self._postings = postings
        self.token_columns = {token: column for column, token in enumerate(stems)}
        self.label_tokens = label_tokens
        self._frequency = np.bincount(label_tokens.indices, minlength=label_tokens.shape[1])
        self._by_initial: dict[str, list[str]] = defaultdict(list)
        self._by_second: dict[str, list[str]] = defaultdict(list)  # a silent first letter left out: "soriasis"
        self._by_spoken_initial: dict[str, list[str]] = defaultdict(list)
        for word in self._words:
            self._by_initial[word[:1]].append(word)
            self._by_second[word[1:2]].append(word)
            if (spoken := _spoken(word))[:1] != word[:1]:  # the others are among the words of their written first letter
                self._by_spoken_initial[spoken[:1]].append(word)
        self._labels = max(label_tokens.shape[0], 1)
        if by_sound is not None:
            self.__dict__["by_sound"] = by_sound
        self.completions = lru_cache(maxsize=50_000)(self._completions)
        self.correction = lru_cache(maxsize=50_000)(self._correction)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Vocabulary:
        postings: dict[str, list[int]] = defaultdict(list)
        token_columns: dict[str, int] = {}
        indptr, indices = [0], []
        for label, text in enumerate(texts):
            folded = set(words(text))
            for word in folded:
                postings[word].append(label)
            indices.extend(sorted({token_columns.setdefault(stem(word), len(token_columns)) for word in folded}))
            indptr.append(len(indices))
        labels = len(indptr) - 1
        known = sorted(postings)
        held = [postings[word] for word in known]
        offsets = np.cumsum([0, *map(len, held)])
        rows = np.fromiter((label for labels_of in held for label in labels_of), dtype=np.int32, count=int(offsets[-1]))
        by_word = sparse.csr_matrix((np.ones(len(rows), np.int8), rows, offsets), shape=(len(known), max(labels, 1)))
        by_label = sparse.csr_matrix(
            (np.ones(len(indices), np.float32), np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int64)),
            shape=(labels, max(len(token_columns), 1)),
        )
        return cls(known, by_word, list(token_columns), by_label)

    def save(self, directory: Path) -> None:
        directory.mkdir(exist_ok=True)
        sparse.save_npz(directory / "postings.npz", self._postings, compressed=False)
        sparse.save_npz(directory / "label_tokens.npz", self.label_tokens, compressed=False)
        names = {"words": self._words, "stems": list(self.token_columns), "by_sound": self.by_sound}
        (directory / "words.json").write_text(json.dumps(names, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> Vocabulary:
        names = json.loads((directory / "words.json").read_text(encoding="utf-8"))
        postings = sparse.load_npz(directory / "postings.npz").tocsr()
        label_tokens = sparse.load_npz(directory / "label_tokens.npz").tocsr()
        return cls(names["words"], postings, names["stems"], label_tokens, names["by_sound"])

    def _posting(self, i: int) -> np.ndarray:
        """Sorted ids of the labels holding word ``i``."""
        return self._postings.indices[self._postings.indptr[i] : self._postings.indptr[i + 1]].astype(np.int64)

    def __contains__(self, word: object) -> bool:
        return self._index(word) is not None  # type: ignore[arg-type]

    def knows(self, text: str) -> bool:
        """Whether every word of ``text`` is a word of the labels (none misspelled or unfinished)."""
        return all(word in self for word in words(text))

    def _index(self, word: str) -> int | None:
        i = bisect_left(self._words, word)
        return i if i < len(self._words) and self._words[i] == word else None

    def idf(self, token: str) -> float:
        """Smoothed inverse document frequency of a stemmed token over the labels."""
        column = self.token_columns.get(token)
        frequency = int(self._frequency[column]) if column is not None else 0
        return math.log((self._labels + 1) / (frequency + 1)) + 1.0

    def labels_with(self, word: str) -> np.ndarray:
        i = self._index(word)
        return self._posting(i) if i is not None else np.empty(0, np.int64)

    def _completions(self, prefix: str, ranges: tuple[tuple[int, int], ...], n: int) -> tuple[str, ...]:
        """The ``n`` words starting with ``prefix`` held by the most labels in ``ranges``, one per stem."""
        lo, hi = bisect_left(self._words, prefix), bisect_left(self._words, prefix + "\U0010ffff")
        counts = {i: _count_in(self._posting(i), ranges) for i in range(lo, hi)}
        chosen: dict[str, str] = {}
        for i in heapq.nlargest(n * 3, (i for i, c in counts.items() if c), key=counts.__getitem__):
            chosen.setdefault(stem(self._words[i]), self._words[i])
            if len(chosen) == n:
                break
        return tuple(chosen.values())

    def completions_among(self, prefix: str, labels: np.ndarray, limit: int = 2000) -> str | None:
        """The word starting with ``prefix`` held by most of ``labels`` (sorted label ids), or
        None when none is (or more than ``limit`` words start with it: too short to tell)."""
        lo, hi = bisect_left(self._words, prefix), bisect_left(self._words, prefix + "\U0010ffff")
        if not labels.size or hi - lo > limit or hi == lo:
            return None
        # The words' postings lie side by side (the words are sorted): one membership test for all.
        bounds = self._postings.indptr[lo : hi + 1].astype(np.int64)
        held = np.isin(self._postings.indices[bounds[0] : bounds[-1]], labels)
        running = np.concatenate(([0], np.cumsum(held)))
        counts = running[bounds[1:] - bounds[0]] - running[bounds[:-1] - bounds[0]]
        best = int(np.argmax(counts))  # the first of equals, as in word order
        return self._words[lo + best] if counts[best] else None

    def _correction(self, word: str) -> str | None:
        """The closest known word to an unknown one ("pnemonia" → "pneumonia"), or None; for
        the start of known words ("hypertens"), the most frequent of them ("hypertension")."""
        if word in self or len(word) < MIN_SUGGESTED or not word.isalpha():
            return None
        lo, hi = bisect_left(self._words, word), bisect_left(self._words, word + "\U0010ffff")
        if hi > lo:
            held = np.diff(self._postings.indptr[lo : hi + 1])
            return self._words[lo + int(np.argmax(held))]
        initial, spoken = word[:1], _spoken(word)
        # Words of the same first letter, as written, with a silent first letter left out, or as spoken
        # ("sistitis": cystitis, spoken "sistitis").
        near = dict.fromkeys(
            (*self._by_initial.get(initial, ()), *self._by_second.get(initial, ()), *self._by_spoken_initial.get(spoken[:1], ()))
        )
        # Lengths compared as spoken: "hemroids" is three letters short of "hemorrhoids", one of "hemorhoids".
        candidates = {w: _spoken(w) for w in near if abs(len(_spoken(w)) - len(spoken)) <= 2}
        # Close by either measure: the ratio (an insertion or deletion one edit, a substitution two)
        # or the Damerau-Levenshtein similarity (a substitution or transposition one edit), scored
        # by their mean ("bronchitus" is one substitution from "bronchitis"); else by the ratio of the
        # spoken forms, ten points lower ("emfazema" is "emfasema" spoken, 88 from "emfisema").
        close: dict[str, float] = {}
        for known, ratio, _ in process.extract(word, list(candidates), scorer=fuzz.ratio, score_cutoff=SUGGEST_CUTOFF - 10, limit=None):
            edits = 100 * DamerauLevenshtein.normalized_similarity(word, known)
            # A word spelled as it sounds is that word ("hypotonya": hypotonia, not hypotony;
            # "skitsophrenia": schizophrenia, though five letters differ).
            if candidates[known] == spoken:
                close[known] = 100.0
            elif max(ratio, edits) >= SUGGEST_CUTOFF:
                close[known] = (ratio + edits) / 2
        by_sound = process.extract(spoken, candidates, scorer=fuzz.ratio, score_cutoff=SPOKEN_CUTOFF, limit=None)
        for _, ratio, known in by_sound if len(word) >= SOUNDS_LIKE_MIN else ():  # a short mash sounds like too much
            close[known] = max(close.get(known, 0.0), 100.0 if ratio == 100 else ratio - 10)
        if not close and len(word) >= SOUNDS_LIKE_MIN:  # spelt as it sounds: "numonia" (pneumonia)
            sounding = process.extract(
                word, self._sounding_like(word), scorer=fuzz.ratio, score_cutoff=SOUNDS_LIKE_CUTOFF, limit=None
            )
            close = {known: score for known, score, _ in sounding}
        if not close:
            return None
        # Among close words, the likelier one: similarity plus a prior on how common the word is
        # ("artheritis" → arthritis, held by hundreds of labels, not arteritis, as close but rare).
        return max(close.items(), key=lambda c: c[1] + FREQUENCY_WEIGHT * math.log10(1 + len(self.labels_with(c[0]))))[0]

    def segmentation(self, word: str) -> str | None:
        """An unknown word that is known words run together, split ("lowbackpain" → "low back
        pain", "sleepapnea" → "sleep apnea"): the fewest words of SEGMENT_PART_MIN letters or more,
        of those the commonest (by the labels holding each), or None."""
        if word in self or len(word) < SEGMENTED_MIN or not word.isalpha():
            return None

        def fewest_then_commonest(parts: list[str]) -> tuple[int, float]:
            return len(parts), -sum(math.log10(1 + len(self.labels_with(part))) for part in parts)

        best = min(self._known_splits(word, SEGMENT_PARTS), key=fewest_then_commonest, default=None)
        return " ".join(best) if best else None

    def _known_splits(self, word: str, most: int) -> Iterable[list[str]]:
        """Every way to cut ``word`` into two to ``most`` known words of SEGMENT_PART_MIN letters or
        more, in order (a cut is followed only after a known head: linear in the word's length, not
        quadratic, for a long run of letters)."""
        for cut in range(SEGMENT_PART_MIN, len(word) - SEGMENT_PART_MIN + 1):
            head, tail = word[:cut], word[cut:]
            if head not in self:
                continue
            if tail in self:
                yield [head, tail]
            if most > 2:
                yield from ([head, *rest] for rest in self._known_splits(tail, most - 1))

    @cached_property
    def by_sound(self) -> dict[str, list[str]]:
        """Known words by phonetic key (a quarter of a second per 100k words)."""
        out: dict[str, list[str]] = defaultdict(list)
        for known in self._words:
            if known.isalpha() and len(known) >= SOUNDS_LIKE_MIN - 1:
                for key in _sounds(known):
                    out[key].append(known)
        return out

    def _sounding_like(self, word: str) -> list[str]:
        """Known words with the same Metaphone or NYSIIS key as ``word``."""
        return list(dict.fromkeys(w for key in _sounds(word) for w in self.by_sound.get(key, ())))


# Spellings that sound alike, written one way: a doubled letter once, "ph" as "f", "rh" as "r", "ts",
# "z" and a soft "c" as "s", a hard "c", "ck" and "sch" as "k" ("sk"), "x" within a word as "ks",
# "y" as "i", "ae" and "oe" as "e".
_SPOKEN = re.compile(r"sch|ph|ae|oe|rh|ts|ck|(?P<soft>c(?=[eiy]))|c|(?<=\w)x|y|z|(?P<doubled>.)(?P=doubled)")
_SPOKEN_AS = {
    "sch": "sk", "ph": "f", "ae": "e", "oe": "e", "rh": "r", "ts": "s", "ck": "k", "c": "k", "x": "ks", "y": "i", "z": "s",
}  # fmt: skip


@lru_cache(maxsize=200_000)
def _spoken(word: str) -> str:
    """``word`` with its spellings that sound alike written one way (``_SPOKEN``), until none is
    left ("rrh" → "rh" → "r")."""
    while (spoken := _SPOKEN.sub(_spoken_as, word)) != word:
        word = spoken
    return word


def _spoken_as(found: re.Match[str]) -> str:
    return "s" if found.group("soft") else found.group("doubled") or _SPOKEN_AS[found.group(0)]


def _sounds(word: str) -> set[str]:
    return {f"m:{jellyfish.metaphone(word)}", f"n:{jellyfish.nysiis(word)}"}


def _count_in(ids: np.ndarray, ranges: tuple[tuple[int, int], ...]) -> int:
    return sum(int(np.searchsorted(ids, b) - np.searchsorted(ids, a)) for a, b in ranges)
