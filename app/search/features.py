"""Features: every candidate concept described by the same numbers over all its labels
(:data:`~app.search.confidence.FEATURES`), each the best over the texts the query was searched as."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from app.search.channels import Asked
from app.search.confidence import LABEL_FEATURES, Calibration
from app.search.details import DETAIL_FEATURES, Details, agreement
from app.search.rewrite import WORD_SPLIT
from indexer.bundle import Bundle
from indexer.lexical.normalise import fold
from indexer.lexical.vocabulary import Vocabulary

COS, CHAR, WORDS, LABEL_WORDS, CODE, REWRITTEN, COS_TOP, CHAR_TOP, PRIOR = range(len(LABEL_FEATURES))
DETAIL_DEPTH = 60  # candidates, best by their labels, whose names' details are worked out
CONFLICTS = [i for i, name in enumerate(DETAIL_FEATURES) if name.endswith("_conflict")]
# How far below the detail margin a candidate's conflicts are still worked out (logits): further
# down, none rises to the top when the near ones fall by their conflicts.
CONFLICT_MARGIN = 2.0


class FeatureScorer:
    def __init__(self, bundle: Bundle, calibration: Calibration, ordinary: frozenset[str], detail_margin: float) -> None:
        self.bundle = bundle
        self.calibration = calibration
        self.ordinary = ordinary  # abbreviations that are ordinary words: matched only in capitals
        self.detail_margin = detail_margin  # search.detail_margin
        self.details = lru_cache(maxsize=50_000)(self._details_of)
        self.above = lru_cache(maxsize=50_000)(self._above_of)

    @property
    def vocabulary(self) -> Vocabulary:
        return self.bundle.vocabulary

    def features(
        self,
        asked: list[Asked],
        rows: np.ndarray,
        code_rows: set[int],
        left_out: np.ndarray | None,
        stated: Details,
        by_cosine: bool = False,
        named_by: Callable[[int], int] = lambda row: row,
    ) -> tuple[np.ndarray, np.ndarray, list[str | None], np.ndarray]:
        """Per candidate concept: the features (its labels' best over the asked texts, then the
        agreement with the details ``stated`` of the name ``named_by`` gives it: a category's is
        its code's that the descent would choose), the label to show (the one the calibrated
        model scores best, or with ``by_cosine`` the nearest), the bridge it came by, and the
        cosine of the query with its preferred name (a tie-break, :mod:`app.search.ranker`)."""
        labels, shown, via, name_cosine = self._label_features(asked, rows, code_rows, left_out, by_cosine)
        details = np.zeros((len(rows), len(DETAIL_FEATURES)), np.float32)
        details[:, -1] = self.bundle.billable[rows]  # the last detail feature
        # Details decide among near kin: the candidates whose labels score within the margin of the
        # best's, and their relatives two is-a steps up (a child or grandchild of one, or a candidate
        # sharing a parent or grandparent with one: "SNHL AS", H90.42 beside H90.5), so that a
        # detail never lifts a concept that only agrees by it ("right ureteral stone" is no
        # "Malignant neoplasm of right ureter", "b/l epicanthal folds" no "Bilateral cleft lip").
        # A near candidate's details are those of the name ``named_by`` gives it (a category's code's).
        # A conflict only lowers: the other candidates of the detail depth within CONFLICT_MARGIN have
        # their conflicts too, so that none rises unchecked when the near ones fall ("much shorter
        # than the other kids": when *Severe short stature* gives way, *Tall stature* just past the
        # margin is no answer).
        logit = labels @ np.asarray(self.calibration.weights[: len(LABEL_FEATURES)], dtype=np.float32)
        order = np.argsort(-logit, kind="stable")[:DETAIL_DEPTH].tolist()
        floor = (float(logit.max()) if len(logit) else 0.0) - self.detail_margin
        near = {int(rows[i]) for i in order if logit[i] >= floor}
        kin = near.union(*map(self.above, near))
        for i in order:
            row = int(rows[i])
            if logit[i] >= floor or not kin.isdisjoint(self.above(row)):
                named = named_by(row) if logit[i] >= floor else row
                details[i] = agreement(stated, self.details(named), bool(self.bundle.billable[row]))
            elif logit[i] >= floor - CONFLICT_MARGIN:
                agreed = agreement(stated, self.details(row), bool(self.bundle.billable[row]))
                details[i, CONFLICTS] = np.asarray(agreed, np.float32)[CONFLICTS]
        return np.hstack([labels, details]), shown, via, name_cosine

    def naming_every_word(self, query_tokens: list[str], rows: np.ndarray) -> np.ndarray:
        """Per concept of ``rows``: whether one of its labels holds every word of the query (none
        does when a word is in no label)."""
        columns = self.vocabulary.token_columns
        wanted = set(query_tokens)
        if not wanted or not wanted <= columns.keys():
            return np.zeros(len(rows), dtype=bool)
        label_ids, owner = self.bundle.labels_of(rows)
        label_tokens = self.vocabulary.label_tokens
        asked = np.zeros(label_tokens.shape[1], np.float32)
        asked[[columns[token] for token in wanted]] = 1.0
        holds = label_tokens[label_ids] @ asked == len(wanted)  # a label holds each of its tokens once
        named = np.zeros(len(rows), dtype=bool)
        named[owner[holds]] = True
        return named

    def _above_of(self, row: int) -> frozenset[int]:
        """The parents and grandparents of a concept (cached as :attr:`above`)."""
        parents = self.bundle.concepts.parents
        up = set(parents[row].tolist())
        return frozenset(up.union(*(parents[parent].tolist() for parent in up)))

    def _details_of(self, row: int) -> Details:
        """The details a concept's name carries (cached as :attr:`details`)."""
        return Details.of(self.bundle.concepts[row].display)

    def _label_features(
        self, asked: list[Asked], rows: np.ndarray, code_rows: set[int], left_out: np.ndarray | None, by_cosine: bool
    ) -> tuple[np.ndarray, np.ndarray, list[str | None], np.ndarray]:
        bundle = self.bundle
        label_ids, owner = bundle.labels_of(rows)  # every label of every candidate, and whose it is
        if left_out is not None:
            keep = ~np.isin(label_ids, left_out)
            label_ids, owner = label_ids[keep], owner[keep]
        owner_starts = np.searchsorted(owner, np.arange(len(rows)))
        per_label = np.zeros((len(label_ids), len(LABEL_FEATURES)), dtype=np.float32)
        source = np.zeros(len(label_ids), dtype=np.int64)  # which asked text each label's features come from
        weights = np.asarray(self.calibration.weights[: len(LABEL_FEATURES)], dtype=np.float32)
        if by_cosine:
            weights = np.eye(len(LABEL_FEATURES), dtype=np.float32)[COS]
        cosines = self._cosines(asked, label_ids)  # (labels, asked texts), each computed once
        chars = bundle.chargrams.similarity([query.chars for query in asked], label_ids)
        label_tokens = self.vocabulary.label_tokens[label_ids]
        abbreviations = bundle.label_abbreviation[label_ids]
        # Abbreviations of stop words only ("AS") have no tokens to compare: their text is compared;
        # those that are ordinary words ("HE") match only as typed, in capitals ("he" is no HE).
        stop_only = np.flatnonzero(abbreviations & (np.diff(label_tokens.indptr) == 0))
        written = [
            i for i in np.flatnonzero(abbreviations).tolist() if fold(bundle.label_text[label_ids[i]]).strip() in self.ordinary
        ]
        for number, query in enumerate(asked):
            part = np.zeros_like(per_label)
            part[:, COS] = cosines[:, number]
            part[:, CHAR] = chars[:, number]
            part[:, WORDS], part[:, LABEL_WORDS] = self._word_overlap(query.tokens, label_tokens)
            # An abbreviation matches whole or not at all: "DKA" is not like "dkakyk" ("TTH", "ttwzq").
            whole = part[:, LABEL_WORDS] >= 1.0
            if stop_only.size:
                typed = set(WORD_SPLIT.split(fold(query.text)))
                whole[stop_only] = [fold(bundle.label_text[label]).strip() in typed for label in label_ids[stop_only].tolist()]
            if written:
                as_typed = set(WORD_SPLIT.split(query.text))
                whole[written] = [bundle.label_text[label].strip() in as_typed for label in label_ids[written].tolist()]
            part[abbreviations & ~whole, COS : CHAR + 1] = 0.0
            part[:, REWRITTEN] = float(query.corrected)
            better = part @ weights > per_label @ weights
            per_label[better] = part[better]
            source[better] = number
        concept_features = np.maximum.reduceat(per_label, owner_starts, axis=0)
        concept_features[:, CODE] = [1.0 if r in code_rows else 0.0 for r in rows.tolist()]
        concept_features[:, PRIOR] = bundle.prior[rows]
        label_score = per_label @ weights
        by_score = np.lexsort((-label_score, owner))  # per candidate, its best-scored label first
        best = by_score[np.searchsorted(owner[by_score], np.arange(len(rows)))]
        concept_features[:, REWRITTEN] = per_label[best, REWRITTEN]
        for column, top in ((COS, COS_TOP), (CHAR, CHAR_TOP)):
            values = concept_features[:, column]
            concept_features[:, top] = np.where(values >= values.max() - 1e-6, values, 0.0)
        if asked[0].known:
            concept_features[:, CHAR_TOP] = 0.0  # every word is known: no misspelling to favour
        # The query's cosine with each candidate's preferred name (its first label, unless left out).
        first = np.minimum(owner_starts, len(label_ids) - 1)
        named = (owner_starts < len(label_ids)) & (label_ids[first] == bundle.name_labels(rows))
        name_cosine = np.where(named, cosines[first, 0], 0.0).astype(np.float32)
        return concept_features, label_ids[best], [asked[number].via for number in source[best].tolist()], name_cosine

    def _cosines(self, asked: list[Asked], label_ids: np.ndarray) -> np.ndarray:
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
        tokens in the query; ``label_tokens``: the labels' rows of the vocabulary's token matrix
        (one product with the query's weights over every token: no columns cut out of it)."""
        asked = set(query_tokens)
        if not asked:
            zeros = np.zeros(label_tokens.shape[0], np.float32)
            return zeros, zeros
        vocabulary = self.vocabulary
        columns = vocabulary.token_columns
        idf = {token: vocabulary.idf(token) for token in asked}
        known = [token for token in asked if token in columns]
        weights = np.zeros((label_tokens.shape[1], 2), np.float32)  # per token: its idf, and 1 (a count)
        at = [columns[token] for token in known]
        weights[at, 0] = [idf[token] for token in known]
        weights[at, 1] = 1.0
        covered, shared = np.asarray(label_tokens @ weights, np.float32).T
        sizes = np.maximum(np.diff(label_tokens.indptr), 1)
        return covered / np.float32(sum(idf.values())), (shared / sizes).astype(np.float32)
