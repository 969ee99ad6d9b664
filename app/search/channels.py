"""The retrieval channels: each brings a scope's best concepts for a text, a concept's best label each.

- **dense**: cosine of the encoder's vectors (the meaning: "heart attack" → myocardial infarction);
- **lexical**: BM25 over the shared normaliser's tokens;
- **char**: character 3-gram TF-IDF, which finds misspellings ("pnemonia") and unfinished words: searched
  for a text with a word no label has;
- **code**: the query as a code of a loaded system, in any usual form ("i219", "HP_0001649").

The dense and lexical channels are index searches behind one small interface,
:data:`LabelSearch`; :meth:`Channels.best` turns any of them into a scope's best concepts.
Encoding and vector searches run on the dense threads (``dense_slots`` at once) while the
request's thread searches BM25 and scores n-grams: ONNX Runtime and FAISS let go of the GIL (and
a remote index is waited on, not run). BM25 had a thread of its own: handing each search to it
and back cost more than it overlapped (a new query's ranking 0.7-1.3 ms slower at the median).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import TypeVar

import numpy as np

from app.search.scope import Scope
from app.search.values import Hit, Mode
from app.settings import SearchSettings
from indexer.bundle import Bundle
from indexer.encoders import Encoder
from indexer.lexical.base import LexicalIndex
from indexer.lexical.chargrams import top as chargram_top
from indexer.lexical.normalise import name_key, tokens
from indexer.vector import search_on_one_core

T = TypeVar("T")
LabelSearch = Callable[[int, tuple[int, int]], tuple[np.ndarray, np.ndarray]]
"""(how many labels, id range) -> (scores, label ids), best first."""

# The most labels a channel asks of one range while admitted concepts are too few (a filter the
# index cannot apply: kinds, billable, a subtree the lexical index does not know).
MAX_CHANNEL_DEPTH = 4096
# The most labels a lexical search is given to keep to (Elasticsearch's terms limit; a tantivy
# term set this large costs as much as the search).
MAX_LEXICAL_FILTER = 65_536


@dataclass(frozen=True)
class Where:
    """What a scope lets the channels search, worked out once a call."""

    mask: np.ndarray  # admitted catalog rows (Scope.mask)
    ranges: list[tuple[int, int]]  # label-id ranges (Scope.ranges)
    depth: int  # concepts each channel brings
    left_out: np.ndarray | None  # label ids never matched
    allowed: np.ndarray | None  # a subtree's labels, for the vector search
    narrow: np.ndarray | None  # the same for the lexical search, when few enough and the subtree has no root
    within: int | None  # the subtree's root, for the lexical search (Scope.root)
    subtree: bool  # the scope has a subtree (Scope.subtree): the n-gram channel keeps to the mask


@dataclass(frozen=True)
class Searches:
    """A text's index searches, running: (vector, hits) of the dense one, hits of BM25."""

    dense: Future[tuple[np.ndarray, dict[int, Hit]]] | None
    lexical: Future[dict[int, Hit]] | None


@dataclass
class Asked:
    """One text the query is searched as: its index searches (started as soon as the text is
    known), char n-gram vector, tokens and whether every word of it is known."""

    text: str
    searches: Searches
    chars: object
    tokens: list[str]
    known: bool  # every word of it is a word of the labels (none misspelled or unfinished)
    corrected: bool = False  # a rewrite: the spelling corrected, or a bridge
    via: str | None = None  # the bridge

    @property
    def vector(self) -> np.ndarray | None:
        """Its vector (waits for its dense search); None without one (lexical mode)."""
        return self.searches.dense.result()[0] if self.searches.dense else None


class Channels:
    def __init__(self, bundle: Bundle, encoder: Encoder, settings: SearchSettings) -> None:
        self.bundle = bundle
        self.encoder = encoder
        self.settings = settings
        # A pool's idle threads end once it is collected (a swapped-out bundle's service, no longer used).
        self.dense_work = ThreadPoolExecutor(
            max_workers=settings.dense_slots, thread_name_prefix="dense", initializer=search_on_one_core
        )
        self.vector = lru_cache(maxsize=4096)(self._encode_one)
        self.denied: np.ndarray | None = None  # label ids a curator denied (the overlay's), never matched

    def _encode_one(self, text: str) -> np.ndarray:
        """A text's vector (cached as :attr:`vector`): a label's own when the text is a label, as
        the build encoded it with this encoder (the same vector), so that a bridge or a taught
        phrasing's concept name costs no encoding; else encoded alone
        (dynamic int8 quantisation scales per batch, so a batch would make a text's vector depend
        on its neighbours)."""
        matrix = getattr(self.bundle.vectors, "matrix", None)  # embedded indexes keep them; a remote one does not
        if matrix is not None and (label := self._label_named(text)) is not None:
            return np.array(matrix[label], dtype=np.float32)
        return self.encoder.encode([text])[0]

    def _label_named(self, text: str) -> int | None:
        """A label whose text is ``text`` (exactly: another case may be another vector)."""
        texts = self.bundle.label_text
        return next((label for label in self.bundle.labels_named(name_key(text)) if texts[label] == text), None)

    def where(self, scope: Scope, k: int) -> Where:
        bundle = self.bundle
        mask = scope.mask(bundle)
        excluded = scope.exclude_labels
        left_out = np.fromiter(excluded, dtype=np.int64, count=len(excluded)) if excluded else None
        if self.denied is not None:
            left_out = self.denied if left_out is None else np.union1d(left_out, self.denied)
        # An index that keeps each label's lineage (Elasticsearch) filters a rooted subtree by
        # its root alone: its labels are not worked out.
        by_root = scope.root is not None and bundle.vectors.keeps_lineage
        allowed = self._subtree_labels(mask) if scope.subtree is not None and not by_root else None
        return Where(
            mask,
            scope.ranges(bundle),
            max(k, self.settings.fusion_depth),
            left_out,
            allowed,
            allowed if allowed is not None and scope.root is None and len(allowed) <= MAX_LEXICAL_FILTER else None,
            scope.root,
            scope.subtree is not None,
        )

    def start(self, text: str, where: Where, mode: Mode) -> Searches:
        """Start a text's index searches (those ``mode`` uses): the dense one on its thread, then
        the lexical one on this thread while it runs."""
        lexical = partial(_lexical_search, self.bundle.lexical, text, where)
        return Searches(
            self.dense_work.submit(self._dense, text, where) if mode is not Mode.LEXICAL else None,
            _done(partial(self.best, lexical, where)) if mode is not Mode.DENSE else None,
        )

    def ask(self, text: str, searches: Searches, corrected: bool = False, via: str | None = None) -> Asked:
        bundle = self.bundle
        return Asked(text, searches, bundle.chargrams.vector(text), tokens(text), bundle.vocabulary.knows(text), corrected, via)

    def _dense(self, text: str, where: Where) -> tuple[np.ndarray, dict[int, Hit]]:
        """A text's vector and the dense channel's hits (on a dense thread)."""
        vector = self.vector(text)
        return vector, self.best(partial(self.bundle.vectors.search, vector, allowed=where.allowed, within=where.within), where)

    def chars(self, asked: Asked, where: Where) -> dict[int, Hit]:
        """The character n-gram channel (a subtree's labels only, when ``where`` has one), for a text
        with a word no label has, misspelled or unfinished: a text of known words is found by them
        (the other channels), and its candidates' n-grams are still scored as features."""
        if asked.known:
            return {}
        every = self.bundle.chargrams.scores(asked.chars)
        if where.subtree:  # the labels of the admitted concepts: read off the mask, unsorted
            inside = where.mask[self.bundle.label_concept[every[0]]]
            every = (every[0][inside], every[1][inside])
        return self.best(lambda n, r: chargram_top(*every, n, r), where)

    def codes(self, text: str, where: Where) -> list[int]:
        """The code channel: the admitted concepts whose code ``text`` is, in any usual form."""
        return [row for row in self.bundle.rows_by_code(text) if where.mask[row]]

    def _subtree_labels(self, mask: np.ndarray) -> np.ndarray | None:
        """The labels of a subtree's admitted concepts, for the vector index to search among
        (sorted); None when they fill most of their span (the search over the span, which the
        scope's ranges already narrow to, then passes over the few outside) or are more than
        the index takes as a filter (Elasticsearch's terms limit)."""
        labels = self.bundle.labels_admitted(mask)
        limit = self.bundle.vectors.filter_limit
        if not len(labels) or (limit is not None and len(labels) > limit) or labels[-1] - labels[0] + 1 <= 2 * len(labels):
            return None
        return labels

    def best(self, search: LabelSearch, where: Where) -> dict[int, Hit]:
        """The best ``where.depth`` admitted concepts of each range (best label each), asking for
        more labels until so many are found or :data:`MAX_CHANNEL_DEPTH` labels were asked (a
        subtree's labels are given to the vector search itself; the lexical channels add what
        they find among their best)."""
        k, mask, left_out = where.depth, where.mask, where.left_out
        best: dict[int, Hit] = {}
        for id_range in where.ranges:
            size = id_range[1] - id_range[0]
            wanted = min(size, k * self.settings.label_oversample)
            while wanted > 0:
                scores, labels = search(wanted, id_range)
                concepts = self.bundle.label_concept[labels]
                admitted = mask[concepts] if left_out is None else mask[concepts] & ~np.isin(labels, left_out)
                # Hits come best first, so a concept's first admitted hit is its best label.
                unique, first = np.unique(concepts[admitted], return_index=True)
                if len(unique) >= k or len(labels) < wanted or wanted >= min(size, MAX_CHANNEL_DEPTH):
                    break
                wanted = min(size, wanted * 4, MAX_CHANNEL_DEPTH)
            scores, labels = scores[admitted][first], labels[admitted][first]
            for concept, score, label in zip(unique.tolist(), scores.tolist(), labels.tolist(), strict=True):
                if concept not in best or score > best[concept].score:
                    best[concept] = Hit(concept, score, label)
        return best


def _done(work: Callable[[], T]) -> Future[T]:
    """``work`` run now, as a finished future: a failure is raised when its result is asked, in
    turn with the other searches' (a dense failure is the one reported)."""
    done: Future[T] = Future()
    try:
        done.set_result(work())
    except Exception as exc:  # noqa: BLE001 - kept for Future.result, which raises it
        done.set_exception(exc)
    return done


def _lexical_search(
    index: LexicalIndex, text: str, where: Where, k: int, id_range: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """A lexical index's hits as a :data:`LabelSearch` gives them: (scores, label ids)."""
    hits = index.search(text, k, id_range, allowed=where.narrow, within=where.within)
    return np.fromiter((s for _, s in hits), np.float32, len(hits)), np.fromiter((i for i, _ in hits), np.int64, len(hits))
