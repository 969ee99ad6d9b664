"""The ranking core: every surface that ranks concepts (``/search``, the ``$expand``
autocomplete, ``/similar``, ``$translate`` candidates, ``/match``) calls :meth:`SearchService.rank`.

For one query within a :class:`~app.search.scope.Scope`, four channels retrieve candidate
concepts, each keeping a concept's best label:

- **dense**: cosine of the encoder's vectors (the meaning: "heart attack" → myocardial infarction);
- **lexical**: BM25 over the shared normaliser's tokens;
- **char**: character 3-gram TF-IDF, which finds misspellings ("pnemonia");
- **code**: the query as a code of a loaded system, in any usual form ("i219", "HP_0001649").

Every candidate is then described by the same features (:data:`~app.search.confidence.FEATURES`,
over all its labels), and the hybrid ranking orders concepts by the calibrated confidence those
features give (:mod:`app.search.confidence`); ``dense`` and ``lexical`` modes order by cosine or
BM25 alone. A code match always ranks first. When a query word is unknown to the labels'
vocabulary and a close word exists, the corrected query is searched too and offered as
``suggestion``. When the query is exactly a name of a concept of another loaded terminology
than those searched ("heart attack", a layperson synonym of HPO's *Myocardial infarction*,
searched in ICD-10-CM), that concept's preferred name is searched too (a *bridge*), and rows it
finds say so ("via HPO HP:0001658 Myocardial infarction: 'Heart attack'"); a lay "cannot X"
("can't hear") is also searched as the terminologies word it (:mod:`app.search.lay`), and an
abbreviation among other words as what it stands for ("old MI": "old myocardial infarction").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache, partial

import numpy as np
import scipy.sparse as sp

from indexer.bundle import Bundle
from indexer.encoders import Encoder
from indexer.knowledge.term_tables import expansion
from indexer.lexical.base import LexicalIndex
from indexer.lexical.chargrams import top as chargram_top
from indexer.lexical.normalise import fold, label_key, name_key, tokens, words
from indexer.settings import SearchSettings
from indexer.vector import search_on_one_core

from app.search import lay
from app.search.confidence import FEATURES, Calibration
from app.search.scope import Scope
from indexer.lexical.vocabulary import Vocabulary

LabelSearch = Callable[[int, tuple[int, int]], tuple[np.ndarray, np.ndarray]]
"""(how many labels, id range) -> (scores, label ids), best first."""

_WORD_SPLIT = re.compile(r"(\W+)")
_COS, _CHAR, _WORDS, _LABEL_WORDS, _CODE, _REWRITTEN, _COS_TOP, _CHAR_TOP = range(len(FEATURES))
MAX_BRIDGES = 3  # concepts of other terminologies a query may bridge through
# The most labels a channel asks of one range while admitted concepts are too few (a filter the
# index cannot apply: kinds, billable, a subtree the lexical index does not know).
MAX_CHANNEL_DEPTH = 4096
# The most labels a lexical search is given to keep to (Elasticsearch's terms limit; a tantivy
# term set this large costs as much as the search).
MAX_LEXICAL_FILTER = 65_536


class Mode(StrEnum):
    DENSE = "dense"
    LEXICAL = "lexical"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class Hit:
    concept: int  # row in the bundle catalog
    score: float
    label: int  # best-matching label id


@dataclass(frozen=True)
class Why:
    """Why a row was returned: the label that matched (its kind and, for knowledge the
    terminology does not state, its origin) and each channel's part."""

    matched_term: str
    matched_type: str
    origin: str | None  # of the matched label, or the bridge the row was found through
    cosine: float
    bm25: float | None  # raw BM25 of the best label; None when BM25 did not retrieve the concept
    char: float
    words: float
    code: bool
    corrected: bool


@dataclass(frozen=True)
class Ranked:
    concept: int
    label: int  # the label shown as matched
    score: float  # hybrid: the confidence; dense: cosine; lexical: BM25
    confidence: float
    features: tuple[float, ...] = field(repr=False)
    bm25: float | None = None
    via: str | None = None  # the bridge that found it, when a bridge did


@dataclass(frozen=True)
class Ranking:
    rows: list[Ranked]
    suggestion: str | None = None  # the query with unknown words corrected, when any was
    # Candidates at or above the minimum confidence, ``rows`` and those past ``k`` (the size of a
    # thresholded result, as a filtered $expand's ``total``; ``k`` within ``fusion_depth`` leaves
    # the candidates, hence this count, unchanged).
    above: int = 0


@dataclass(frozen=True)
class Result:
    rank: int
    system: str
    code: str
    display: str
    kind: str | None
    billable: bool | None
    inactive: bool
    score: float
    confidence: float
    matched_term: str
    why: Why


@dataclass
class _Query:
    """One text's retrieval inputs: its index searches (started as soon as the text is known),
    char n-gram vector and tokens."""

    text: str
    searches: _Searches
    chars: object
    tokens: list[str]
    corrected: bool = False  # a rewrite: the spelling corrected, or a bridge
    via: str | None = None  # the bridge

    @property
    def vector(self) -> np.ndarray | None:
        """Its vector (waits for its dense search); None without one (lexical mode)."""
        return self.searches.dense.result()[0] if self.searches.dense else None


@dataclass(frozen=True)
class _Where:
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
class _Searches:
    """A text's index searches, running: (vector, hits) of the dense one, hits of BM25."""

    dense: Future[tuple[np.ndarray, dict[int, Hit]]] | None
    lexical: Future[dict[int, Hit]] | None


class SearchService:
    def __init__(
        self, bundle: Bundle, encoder: Encoder, settings: SearchSettings, calibration: Calibration | None = None
    ) -> None:
        self.bundle = bundle
        self.encoder = encoder
        self.settings = settings
        self.calibration = calibration or Calibration.of_bundle(bundle)
        # Encoding and vector searches run on the dense threads (``dense_slots`` at once), BM25
        # searches on the lexical one, while the request's thread scores n-grams: ONNX Runtime,
        # FAISS and tantivy let go of the GIL (and a remote index is waited on, not run). A pool's
        # idle threads end once it is collected (a swapped-out bundle's service, no longer used).
        self._dense_work = ThreadPoolExecutor(
            max_workers=settings.dense_slots, thread_name_prefix="dense", initializer=search_on_one_core
        )
        self._lexical_work = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lexical")
        self.vector = lru_cache(maxsize=4096)(self._encode_one)
        self._abbreviation = lru_cache(maxsize=20_000)(self._abbreviation_of)

    @property
    def vocabulary(self) -> Vocabulary:
        """The labels' words, built with the bundle."""
        return self.bundle.vocabulary

    def warm(self) -> None:
        """Encode a query now, so that no request waits for the encoder's first run."""
        self.vector("warm")

    # --- the one entry point ----------------------------------------------------------------------

    def rank(
        self,
        query: str,
        scope: Scope,
        k: int = 10,
        mode: Mode = Mode.HYBRID,
        min_confidence: float = 0.0,
    ) -> Ranking:
        """The top ``k`` concepts of ``scope`` for ``query`` with at least ``min_confidence``."""
        return self.rank_many([query], scope, k, mode, min_confidence)[0]

    def rank_many(
        self,
        queries: Sequence[str],
        scope: Scope,
        k: int = 10,
        mode: Mode = Mode.HYBRID,
        min_confidence: float = 0.0,
    ) -> list[Ranking]:
        """:meth:`rank` for several queries (each text encoded once, alone: :meth:`_encode_one`)."""
        where = self._where(scope, k)
        searches: dict[str, _Searches] = {}

        def search(text: str) -> _Searches:  # each text's index searches start once, when it is known
            if text not in searches:
                lexical = partial(_lexical_search, self.bundle.lexical, text, where)
                searches[text] = _Searches(
                    self._dense_work.submit(self._dense, text, where) if mode is not Mode.LEXICAL else None,
                    self._lexical_work.submit(self._channel, lexical, where) if mode is not Mode.DENSE else None,
                )
            return searches[text]

        asked = [[self._query(query, search(query))] for query in queries]
        corrections = [self.correct(query) for query in queries]
        bridging = self.settings.bridges and mode is not Mode.LEXICAL
        rankings = []
        for query, correction, texts in zip(queries, corrections, asked, strict=True):
            if correction and mode is not Mode.LEXICAL:
                texts.append(self._query(correction, search(correction), corrected=True))
            said = {label_key(query)}  # a bridge that says what the query says adds nothing
            bridged = [
                *self.bridges(query, scope),
                *self.expansions(query),
                *((text, f"lay wording read as '{text}'") for text in lay.rewrites(query)),
            ] if bridging else []  # fmt: skip
            for text, via in bridged:
                if (key := label_key(text)) not in said:
                    said.add(key)
                    texts.append(self._query(text, search(text), corrected=True, via=via))
        for query, correction, texts in zip(queries, corrections, asked, strict=True):
            rows, above = self._rank(texts, scope, where, k, mode, min_confidence)
            rankings.append(Ranking(rows, correction, above))
        return rankings

    def bridges(self, query: str, scope: Scope) -> list[tuple[str, str]]:
        """(preferred name, why) of the concepts of terminologies outside ``scope`` that
        ``query`` names exactly, by one of its exact names (its own, or one a knowledge source
        gave it: "ED" names HPO's Erectile dysfunction by the abbreviation table); and the
        heading of a MeSH descriptor ``query`` is an entry term of ("cold sore")."""
        searched = set(scope.systems or self.bundle.systems)
        found: dict[int, str] = {}
        key = name_key(query)
        labels = [label for label in self.bundle.labels_named(key) if label not in scope.exclude_labels]  # never matched
        rows = self.bundle.label_concept[labels]
        elsewhere = ~np.isin(self.bundle.system_of(rows), list(searched)) & self.bundle.concepts.active[rows]
        for label, row in zip(np.asarray(labels)[elsewhere].tolist(), rows[elsewhere].tolist(), strict=True):
            if row not in found and len(found) < MAX_BRIDGES:
                concept = self.bundle.concepts[row]
                found[row] = f"via {concept.system.upper()} {concept.code} {concept.display}: '{self.bundle.label_text[label]}'"
        out = [(self.bundle.concepts[row].display, via) for row, via in found.items()]
        term = self.bundle.entry_terms.get(key)
        if term is not None and len(out) < MAX_BRIDGES:
            out.append((term.heading, f"via {term.source} {term.id} {term.heading}: '{term.term}'"))
        return out

    def expansions(self, query: str) -> list[tuple[str, str]]:
        """``query`` with each abbreviation among its other words written out ("old MI" → "old
        myocardial infarction"), and why; none when no word is an abbreviation of one meaning
        (in every loaded system) that no other label uses as a word ("PE" and "all" stay)."""
        if len(words(query)) < 2:
            return []
        out, said = query, []
        for word in dict.fromkeys(words(query)):
            written = self._abbreviation(word)
            if written is not None:
                out = _replace_word(out, word, written)
                said.append(f"'{word}' as '{written}'")
        return [(out, f"abbreviation read: {', '.join(said)}")] if said else []

    def _abbreviation_of(self, word: str) -> str | None:
        """What the abbreviation ``word`` (folded) stands for, if it is one, of one meaning."""
        bundle = self.bundle
        holding = self.vocabulary.labels_with(word).tolist()
        if any(bundle.label_kind[label] != "abbreviation" for label in holding):
            return None
        exact = [label for label in holding if fold(bundle.label_text[label]).strip() == word]
        if not exact or any(count > 1 for count in self.meanings(word, bundle.systems).values()):
            return None
        for label in exact:  # a table's expansion, else the concept's name
            if (origin := bundle.label_origin[label]) and (written := expansion(origin)):
                return written
        return bundle.concepts[int(bundle.label_concept[exact[0]])].display

    def correct(self, query: str) -> str | None:
        """``query`` with each unknown word replaced by the closest known one, if any was."""
        vocabulary = self.vocabulary
        changed = False
        out = query
        for word in dict.fromkeys(words(query)):
            better = vocabulary.correction(word)
            if better is not None:
                out = _replace_word(out, word, better)
                changed = True
        return out if changed else None

    def _encode_one(self, text: str) -> np.ndarray:
        """A text's vector, encoded alone (dynamic int8 quantisation scales per batch, so a batch
        would make a text's vector depend on its neighbours); cached as :attr:`vector`."""
        return self.encoder.encode([text])[0]

    # --- retrieval ---------------------------------------------------------------------------------

    def _query(self, text: str, searches: _Searches, corrected: bool = False, via: str | None = None) -> _Query:
        return _Query(text, searches, self.bundle.chargrams.vector(text), tokens(text), corrected, via)

    def _where(self, scope: Scope, k: int) -> _Where:
        mask = scope.mask(self.bundle)
        excluded = scope.exclude_labels
        # An index that keeps each label's lineage (Elasticsearch) filters a rooted subtree by
        # its root alone: its labels are not worked out.
        by_root = scope.root is not None and self.bundle.vectors.keeps_lineage
        allowed = self._subtree_labels(mask) if scope.subtree is not None and not by_root else None
        return _Where(
            mask,
            scope.ranges(self.bundle),
            max(k, self.settings.fusion_depth),
            np.fromiter(excluded, dtype=np.int64, count=len(excluded)) if excluded else None,
            allowed,
            allowed if allowed is not None and scope.root is None and len(allowed) <= MAX_LEXICAL_FILTER else None,
            scope.root,
            scope.subtree is not None,
        )

    def _dense(self, text: str, where: _Where) -> tuple[np.ndarray, dict[int, Hit]]:
        """A text's vector and the dense channel's hits (on a dense thread)."""
        vector = self.vector(text)
        return vector, self._channel(partial(self.bundle.vectors.search, vector, allowed=where.allowed, within=where.within), where)

    def _rank(
        self, asked: list[_Query], scope: Scope, where: _Where, k: int, mode: Mode, min_confidence: float
    ) -> tuple[list[Ranked], int]:
        """The best ``k`` rows at or above ``min_confidence``, and how many candidates are."""
        bundle = self.bundle
        excluded = scope.exclude_labels
        code_rows = [r for r in bundle.rows_by_code(asked[0].text) if where.mask[r]]
        try:  # while the index searches run on their threads
            chars = [self._chars(query, where) for query in asked if mode is Mode.HYBRID and not query.corrected]
            meanings = self.meanings(asked[0].text, scope.systems or self.bundle.systems)
        finally:  # every search has ended; a dense failure is the one reported, then a lexical one
            dense = [query.searches.dense.result() if query.searches.dense else (None, {}) for query in asked]
            lexical = [query.searches.lexical.result() if query.searches.lexical else {} for query in asked]
        bm25 = lexical[0]  # the query's own BM25 hits
        candidates: dict[int, None] = dict.fromkeys(code_rows)
        for channel in (*(hits for _, hits in dense), *lexical, *chars):
            candidates.update(dict.fromkeys(channel))
        if excluded:  # a concept all of whose labels are left out cannot match
            candidates = {c: None for c in candidates if set(bundle.concept_labels(c)) - excluded}
        if not candidates:
            return [], 0
        rows = np.fromiter(candidates, dtype=np.int64, count=len(candidates))
        features, labels, via = self._features(asked, rows, set(code_rows), where.left_out)
        confidence = self.calibration.confidence(features)
        if any(count > 1 for count in meanings.values()):  # no row of an ambiguous query is certain
            confidence /= np.asarray([max(meanings[key], 1) for key in bundle.system_of(rows)], dtype=np.float32)
        if mode is Mode.DENSE:
            score = features[:, _COS]
        elif mode is Mode.LEXICAL:
            score = np.array([bm25[r].score if r in bm25 else 0.0 for r in rows.tolist()], dtype=np.float32)
        else:
            score = confidence
        keep = confidence >= min_confidence
        if mode is Mode.LEXICAL:
            keep &= (score > 0) | (features[:, _CODE] > 0)
        # Code matches first; then by score; on a tie a billable code first (the one to record).
        order = [i for i in np.lexsort((rows, ~bundle.billable[rows], -score, -features[:, _CODE])) if keep[i]][:k]
        return [
            Ranked(
                int(rows[i]),
                int(labels[i]),
                float(score[i]),
                float(confidence[i]),
                tuple(float(f) for f in features[i]),
                bm25[int(rows[i])].score if int(rows[i]) in bm25 else None,
                via[i],
            )
            for i in order
        ], int(keep.sum())

    def _chars(self, query: _Query, where: _Where) -> dict[int, Hit]:
        """The character n-gram channel (a subtree's labels only, when ``where`` has one)."""
        every = self.bundle.chargrams.scores(query.chars)
        if where.subtree:  # the labels of the admitted concepts: read off the mask, unsorted
            inside = where.mask[self.bundle.label_concept[every[0]]]
            every = (every[0][inside], every[1][inside])
        return self._channel(lambda n, r: chargram_top(*every, n, r), where)

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

    def _channel(self, search: LabelSearch, where: _Where) -> dict[int, Hit]:
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

    # --- features ----------------------------------------------------------------------------------

    def _features(
        self, asked: list[_Query], rows: np.ndarray, code_rows: set[int], left_out: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, list[str | None]]:
        """Per candidate concept: the features (max over its labels and over the asked texts),
        the label to show (the one the calibrated model scores best) and the bridge it came by."""
        bundle = self.bundle
        label_ids, owner = bundle.labels_of(rows)  # every label of every candidate, and whose it is
        if left_out is not None:
            keep = ~np.isin(label_ids, left_out)
            label_ids, owner = label_ids[keep], owner[keep]
        owner_starts = np.searchsorted(owner, np.arange(len(rows)))
        per_label = np.zeros((len(label_ids), len(FEATURES)), dtype=np.float32)
        source = np.zeros(len(label_ids), dtype=np.int64)  # which asked text each label's features come from
        weights = np.asarray(self.calibration.weights, dtype=np.float32)
        cosines = self._cosines(asked, label_ids)  # (labels, asked texts), each computed once
        chars = bundle.chargrams.similarity([query.chars for query in asked], label_ids)
        label_tokens = self.vocabulary.label_tokens[label_ids]
        abbreviations = bundle.label_abbreviation[label_ids]
        # Abbreviations of stop words only ("AS") have no tokens to compare: their text is compared.
        stop_only = np.flatnonzero(abbreviations & (np.diff(label_tokens.indptr) == 0))
        for number, query in enumerate(asked):
            part = np.zeros_like(per_label)
            part[:, _COS] = cosines[:, number]
            part[:, _CHAR] = chars[:, number]
            part[:, _WORDS], part[:, _LABEL_WORDS] = self._word_overlap(query.tokens, label_tokens)
            # An abbreviation matches whole or not at all: "DKA" is not like "dkakyk" ("TTH", "ttwzq").
            whole = part[:, _LABEL_WORDS] >= 1.0
            if stop_only.size:
                typed = set(_WORD_SPLIT.split(fold(query.text)))
                whole[stop_only] = [fold(bundle.label_text[label]).strip() in typed for label in label_ids[stop_only].tolist()]
            part[abbreviations & ~whole, _COS : _CHAR + 1] = 0.0
            part[:, _REWRITTEN] = float(query.corrected)
            better = part @ weights > per_label @ weights
            per_label[better] = part[better]
            source[better] = number
        concept_features = np.maximum.reduceat(per_label, owner_starts, axis=0)
        concept_features[:, _CODE] = [1.0 if r in code_rows else 0.0 for r in rows.tolist()]
        label_score = per_label @ weights
        by_score = np.lexsort((-label_score, owner))  # per candidate, its best-scored label first
        best = by_score[np.searchsorted(owner[by_score], np.arange(len(rows)))]
        concept_features[:, _REWRITTEN] = per_label[best, _REWRITTEN]
        for column, top in ((_COS, _COS_TOP), (_CHAR, _CHAR_TOP)):
            values = concept_features[:, column]
            concept_features[:, top] = np.where(values >= values.max() - 1e-6, values, 0.0)
        if all(word in self.vocabulary for word in words(asked[0].text)):
            concept_features[:, _CHAR_TOP] = 0.0  # every word is known: no misspelling to favour
        return concept_features, label_ids[best], [asked[number].via for number in source[best].tolist()]

    def meanings(self, query: str, systems: Iterable[str]) -> dict[str, int]:
        """Per system, how many distinct meanings ``query`` is exactly a name of (an ambiguous
        abbreviation such as "PE": pulmonary embolism and pleural effusion). Concepts one above
        the other by is-a are one meaning, and so are those one source named together (one row
        of the abbreviation table, one lent name)."""
        bundle = self.bundle
        labels = bundle.labels_named(name_key(query))
        origins = {int(bundle.label_concept[label]): bundle.label_origin[label] for label in labels}
        rows = np.fromiter(origins, dtype=np.int64, count=len(origins))
        system = bundle.system_of(rows)
        group = list(range(len(rows)))  # union-find over positions in rows

        def root(i: int) -> int:
            while group[i] != i:
                i = group[i]
            return i

        by_origin: dict[tuple[str, str], int] = {}
        named_together = [(i, by_origin.setdefault((system[i], origin), i)) for i, origin in enumerate(origins.values()) if origin]
        for lower, upper in [*zip(*(part.tolist() for part in bundle.above_pairs(rows)), strict=True), *named_together]:
            group[root(lower)] = root(upper)
        counted = Counter(system[i] for i in {root(i) for i in range(len(rows))})
        return {key: counted[key] for key in systems}

    def _cosines(self, asked: list[_Query], label_ids: np.ndarray) -> np.ndarray:
        """(labels, asked texts) cosines; 0 for a text without a vector (lexical mode)."""
        out = np.zeros((len(label_ids), len(asked)), np.float32)
        encoded = [number for number, query in enumerate(asked) if query.vector is not None]
        if not encoded:
            return out
        matrix = getattr(self.bundle.vectors, "matrix", None)
        if matrix is None:  # a remote index: cosine of the labels its nearest-label search returned
            for number in encoded:
                scores, ids = self.bundle.vectors.search(asked[number].vector, max(len(label_ids), 1) * 4)
                found = dict(zip(ids.tolist(), scores.tolist(), strict=True))
                out[:, number] = [found.get(i, 0.0) for i in label_ids.tolist()]
            return out
        vectors = np.stack([asked[number].vector for number in encoded], axis=1)
        out[:, encoded] = np.clip(np.asarray(matrix[label_ids] @ vectors, dtype=np.float32), 0.0, 1.0)
        return out

    def _word_overlap(self, query_tokens: list[str], label_tokens: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """idf-weighted share of the query's tokens in each label, and share of each label's
        tokens in the query; ``label_tokens``: the labels' rows of the vocabulary's token matrix."""
        asked = set(query_tokens)
        if not asked:
            zeros = np.zeros(label_tokens.shape[0], np.float32)
            return zeros, zeros
        vocabulary = self.vocabulary
        columns = vocabulary.token_columns
        idf = {token: vocabulary.idf(token) for token in asked}
        known = [token for token in asked if token in columns]
        shared = label_tokens[:, [columns[t] for t in known]]
        covered = shared @ np.asarray([idf[t] for t in known], dtype=np.float32) / sum(idf.values())
        sizes = np.maximum(np.diff(label_tokens.indptr), 1)
        return np.asarray(covered, np.float32).ravel(), (np.asarray(shared.sum(axis=1)).ravel() / sizes).astype(np.float32)

    # --- rows --------------------------------------------------------------------------------------

    def result(self, rank: int, ranked: Ranked) -> Result:
        bundle = self.bundle
        concept = bundle.concepts[ranked.concept]
        features = ranked.features
        code = bool(features[_CODE])
        why = Why(
            matched_term=concept.code if code else bundle.label_text[ranked.label],
            matched_type="code" if code else bundle.label_kind[ranked.label],
            origin=None if code else ranked.via or bundle.label_origin[ranked.label],
            cosine=round(features[_COS], 4),
            bm25=None if ranked.bm25 is None else round(ranked.bm25, 4),
            char=round(features[_CHAR], 4),
            words=round(features[_WORDS], 4),
            code=code,
            corrected=bool(features[_REWRITTEN]) and ranked.via is None,
        )
        return Result(
            rank=rank,
            system=concept.system,
            code=concept.code,
            display=concept.display,
            kind=concept.kind,
            billable=concept.billable,
            inactive=not concept.active,
            score=ranked.score,
            confidence=round(ranked.confidence, 4),
            matched_term=why.matched_term,
            why=why,
        )

    def results(self, ranking: Ranking) -> list[Result]:
        return [self.result(rank, row) for rank, row in enumerate(ranking.rows, start=1)]


def _lexical_search(index: LexicalIndex, text: str, where: _Where, k: int, id_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A lexical index's hits as a :data:`LabelSearch` gives them: (scores, label ids)."""
    hits = index.search(text, k, id_range, allowed=where.narrow, within=where.within)
    return np.fromiter((s for _, s in hits), np.float32, len(hits)), np.fromiter((i for i, _ in hits), np.int64, len(hits))


def _replace_word(text: str, word: str, replacement: str) -> str:
    """``text`` with each whole word whose folded form is ``word`` replaced."""
    return "".join(replacement if fold(part) == word else part for part in _WORD_SPLIT.split(text))
