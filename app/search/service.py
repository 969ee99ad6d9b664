"""The ranking core: every surface that ranks concepts (``/search``, the ``$expand``
autocomplete, ``/similar``, ``$translate`` candidates, ``/match``) calls :meth:`SearchService.rank`.

For one query within a :class:`~app.search.scope.Scope`, the core runs its stages, one module each:

1. **query analysis** (:mod:`app.search.rewrite`): the texts the query is also searched as (a
   spelling correction, bridges through other terminologies, abbreviations written out, lay
   wordings), each with why;
2. **channels** (:mod:`app.search.channels`): dense, lexical, character n-gram and code
   retrieval of candidate concepts for every text;
3. **features** (:mod:`app.search.features`): every candidate described by the same numbers
   over all its labels;
4. the **ranker** (:mod:`app.search.ranker`): calibrated confidence and the mode's order;
5. **descent** (:mod:`app.search.descent`): a category's billable code, the one its details select;
6. **rows** (:mod:`app.search.rows`): what a surface shows, explaining itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from functools import partial

import numpy as np
from cachetools import LRUCache

from app.feedback.overlay import Overlay
from app.search import ranker, rows
from app.search.channels import Asked, Channels, Searches, Where
from app.search.confidence import Calibration
from app.search.descent import Descent, detail_weights
from app.search.details import Details
from app.search.features import FeatureScorer
from app.search.rewrite import QueryRewriter
from app.search.scope import Scope
from app.search.values import Mode, Ranked, Ranking, Result, Threshold
from app.settings import SearchSettings
from indexer.bundle import Bundle
from indexer.encoders import Encoder
from indexer.lexical.normalise import tokens
from indexer.lexical.vocabulary import Vocabulary

DESCENT_MARGIN = 10  # more rows ranked when codes are required, as categories give way to their codes


class SearchService:
    def __init__(
        self, bundle: Bundle, encoder: Encoder, settings: SearchSettings, calibration: Calibration | None = None
    ) -> None:
        self.bundle = bundle
        self.encoder = encoder
        self.settings = settings
        self.rewriter = QueryRewriter(bundle, settings)
        self.channels = Channels(bundle, encoder, settings)
        calibration = calibration or Calibration.of_bundle(bundle)
        self.scorer = FeatureScorer(bundle, calibration, self.rewriter.ordinary, settings.detail_margin)
        self.descent = self._descent(calibration)
        self.rankings: LRUCache[Hashable, Ranking] = LRUCache(maxsize=max(settings.ranking_cache, 1))
        self._rankings_lock = threading.Lock()

    def forget(self) -> None:
        """Drop the rankings kept: after the bundle's knowledge is changed in place (benchmarks)."""
        with self._rankings_lock:
            self.rankings.clear()

    @property
    def overlay(self) -> Overlay:
        """What curators approved since the bundle was built (:mod:`app.feedback.overlay`)."""
        return self.rewriter.overlay

    @overlay.setter
    def overlay(self, overlay: Overlay) -> None:
        self.rewriter.overlay = overlay
        self.channels.denied = overlay.denied
        self.forget()

    @property
    def calibration(self) -> Calibration:
        """The ranker's model: features to confidence (the features' and the descent's weights)."""
        return self.scorer.calibration

    @calibration.setter
    def calibration(self, calibration: Calibration) -> None:
        self.scorer.calibration = calibration
        self.descent = self._descent(calibration)
        self.forget()

    def _descent(self, calibration: Calibration) -> Descent:
        """The descent and ascent stage for ``calibration`` (its detail weights and its own scale)."""
        margin = self.settings.ascent_margin
        return Descent(self.bundle, detail_weights(calibration.weights), self.scorer.details, margin, calibration.own_scale)

    @property
    def vocabulary(self) -> Vocabulary:
        """The labels' words, built with the bundle."""
        return self.bundle.vocabulary

    def warm(self) -> None:
        """Encode a query now, so that no request waits for the encoder's first run."""
        self.channels.vector("warm")

    # --- the one entry point ----------------------------------------------------------------------

    def rank(
        self,
        query: str,
        scope: Scope,
        k: int = 10,
        mode: Mode = Mode.HYBRID,
        min_confidence: float = 0.0,
        spare_whole_words: bool = False,
    ) -> Ranking:
        """The top ``k`` concepts of ``scope`` for ``query`` with at least ``min_confidence`` (or,
        with ``spare_whole_words``, a label holding every word of the query, as a text filter keeps)."""
        return self.rank_many([query], scope, k, mode, min_confidence, spare_whole_words)[0]

    def rank_many(
        self,
        queries: Sequence[str],
        scope: Scope,
        k: int = 10,
        mode: Mode = Mode.HYBRID,
        min_confidence: float = 0.0,
        spare_whole_words: bool = False,
    ) -> list[Ranking]:
        """:meth:`rank` for several queries (each text's searches started once, as soon as it is
        known); a ranking asked before with the same scope, settings and arguments is the one kept."""
        key = self._key(scope, k, mode, min_confidence, spare_whole_words)
        if key is None:
            return self._rank_many(queries, scope, k, mode, min_confidence, spare_whole_words)
        with self._rankings_lock:
            kept = {query: found for query in queries if (found := self.rankings.get((query, key))) is not None}
        missing = [query for query in dict.fromkeys(queries) if query not in kept]
        if missing:
            ranked = self._rank_many(missing, scope, k, mode, min_confidence, spare_whole_words)
            with self._rankings_lock:
                for query, ranking in zip(missing, ranked, strict=True):
                    self.rankings[(query, key)] = kept[query] = ranking
        return [replace(kept[query], rows=list(kept[query].rows)) for query in queries]

    def _key(self, scope: Scope, k: int, mode: Mode, min_confidence: float, spare_whole_words: bool) -> Hashable | None:
        """What a ranking depends on besides the query, or None when it is not kept (no cache; a
        subtree without a root, such as a composed value set's rows; labels left out)."""
        if not self.settings.ranking_cache or (scope.subtree is not None and scope.root is None) or scope.exclude_labels:
            return None
        where = (scope.systems, scope.exclude, scope.kinds, scope.billable, scope.include_inactive, scope.root, scope.learned)
        # The overlay by identity: a ranking made with an older one is never answered again.
        return (where, k, mode, min_confidence, spare_whole_words, tuple(vars(self.settings).values()), self.overlay)

    def _rank_many(
        self,
        queries: Sequence[str],
        scope: Scope,
        k: int,
        mode: Mode,
        min_confidence: float,
        spare_whole_words: bool,
    ) -> list[Ranking]:
        required = scope.billable is True  # categories are ranked too, then descend to their codes
        ranked_scope = replace(scope, billable=None) if required else scope
        depth = k + DESCENT_MARGIN if required else k
        where = self.channels.where(ranked_scope, depth)
        codes = where.mask & self.bundle.billable if required else where.mask
        searches: dict[str, Searches] = {}

        def search(text: str) -> Searches:
            if text not in searches:
                searches[text] = self.channels.start(text, where, mode)
            return searches[text]

        ask = self.channels.ask
        asked = [[ask(query, search(query))] for query in queries]
        corrections = [self.rewriter.correct(query) for query in queries]
        bridging = self.settings.bridges and mode is not Mode.LEXICAL
        readings = [self.rewriter.read(query, scope) for query in queries]
        for query, correction, reading, texts in zip(queries, corrections, readings, asked, strict=True):
            if correction and mode is not Mode.LEXICAL:
                texts.append(ask(correction, search(correction), corrected=True))
            for text, via in self.rewriter.rewrites(query, scope, reading, correction) if bridging else ():
                texts.append(ask(text, search(text), corrected=True, via=via))
        rankings = []
        threshold = Threshold(min_confidence, spare_whole_words)
        for query, correction, reading, texts in zip(queries, corrections, readings, asked, strict=True):
            said = f"{reading.text} {correction}" if correction else reading.text  # a misspelled word as meant too
            # Separate texts: no qualifier runs from one into the next.
            stated = Details.of("; ".join(text for text in (query, reading.text, correction) if text))
            # A category's details are its code's; what the query negates it does not say.
            said_tokens = frozenset(tokens(said)) - stated.negated
            named_by = partial(self.descent.named_by, stated=stated, query_tokens=said_tokens, mask=codes)
            found, above = self._rank(texts, stated, named_by, ranked_scope, where, depth, mode, threshold)
            found = self.descent.apply(found, stated, said, codes, required, k, ascend=mode is Mode.HYBRID)
            rankings.append(Ranking(found, correction, above))
        return rankings

    def _rank(
        self,
        asked: list[Asked],
        stated: Details,
        named_by: Callable[[int], int],
        scope: Scope,
        where: Where,
        k: int,
        mode: Mode,
        threshold: Threshold,
    ) -> tuple[list[Ranked], int]:
        """The best ``k`` rows the ``threshold`` keeps, and how many candidates it keeps."""
        bundle = self.bundle
        excluded = scope.exclude_labels
        code_rows = self.channels.codes(asked[0].text, where)
        try:  # while the dense searches run on their thread
            chars = [self.channels.chars(query, where) for query in asked if mode is Mode.HYBRID and not query.corrected]
            meanings = self.rewriter.meanings(asked[0].text, scope.systems or bundle.systems)
        finally:  # every search has ended; a dense failure is the one reported, then a lexical one
            dense = [query.searches.dense.result() if query.searches.dense else (None, {}) for query in asked]
            lexical = [query.searches.lexical.result() if query.searches.lexical else {} for query in asked]
        candidates: dict[int, None] = dict.fromkeys(code_rows)
        for channel in (*(hits for _, hits in dense), *lexical, *chars):
            candidates.update(dict.fromkeys(channel))
        if excluded:  # a concept all of whose labels are left out cannot match
            candidates = {c: None for c in candidates if set(bundle.concept_labels(c)) - excluded}
        if not candidates:
            return [], 0
        found = np.fromiter(candidates, dtype=np.int64, count=len(candidates))
        features, labels, via, name_cosine = self.scorer.features(
            asked, found, set(code_rows), where.left_out, stated, mode is Mode.DENSE, named_by
        )
        bm25 = lexical[0]  # the query's own BM25 hits
        spared = self.scorer.naming_every_word(asked[0].tokens, found) if threshold.spare_whole_words else None
        named = np.isin(found, bundle.named_in_release(asked[0].text))
        return ranker.order(
            bundle,
            self.calibration,
            found,
            features,
            labels,
            via,
            bm25,
            meanings,
            mode,
            k,
            threshold.min_confidence,
            ranker.TieBreaks(named, name_cosine),
            spared,
        )

    # --- rows --------------------------------------------------------------------------------------

    def result(self, rank: int, ranked: Ranked) -> Result:
        return rows.result(self.bundle, rank, ranked)

    def results(self, ranking: Ranking) -> list[Result]:
        return rows.results(self.bundle, ranking)
