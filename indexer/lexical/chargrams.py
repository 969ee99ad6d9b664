"""Character n-gram TF-IDF over labels: the typo-tolerant channel ("pnemonia" → Pneumonia).

scispaCy's candidate generator in miniature: each folded label becomes a TF-IDF vector of its
character 3-grams within word boundaries (scikit-learn's ``char_wb`` analyser), unit length, and
a query is scored against every label by cosine similarity through the transposed matrix (an
inverted index: only the postings of the query's n-grams are touched). Saved into the bundle as
the vocabulary of n-grams, their idf and the sparse label matrix both ways (n-grams × labels to
search, labels × n-grams to score given labels: read, never transposed, at start). A query is vectorised by the
fitted analyser and the saved idf directly (:meth:`CharGramIndex.vector`: the same vector as the
vectoriser's ``transform``, without its per-call input validation, which cost more than the rest).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from indexer.columns import spans
from indexer.lexical.normalise import fold

DIRECTORY = "chargrams"
NGRAMS = (3, 3)
# Postings a query's candidate search reads at most: its cost grows with them (about 1 ms per
# 40,000 at 3M labels). On HPO + ICD-10-CM, 1,218 everyday and misspelled queries ranked the same
# top 10 with 300,000, 50,000 and 20,000 (4 differed at 5,000; bench/RESULTS.md): the candidates
# the rare n-grams find are the ones the whole vector then scores best.
POSTINGS_BUDGET = 50_000
# Postings are summed per label through an array over every label when they are at least this
# share of the labels (clearing and scanning it costs less than sorting them), else by sorting them:
# the two cost the same at about 2,500 postings for 193,000 labels and 50,000 for 3M.
DENSE_SUM_RATIO = 64


def _vectorizer(vocabulary: dict[str, int] | None = None) -> TfidfVectorizer:
    return TfidfVectorizer(
        analyzer="char_wb", ngram_range=NGRAMS, preprocessor=fold, sublinear_tf=True, dtype=np.float32,
        vocabulary=vocabulary,
    )


def build_chargrams(directory: Path, texts: Sequence[str], block: int = 100_000) -> None:
    """Fit the n-gram vocabulary and idf on ``texts`` (label id = position) and save the index.

    Two passes of ``block`` texts at a time (the n-grams' document frequencies, then each block's
    TF-IDF rows): the same matrix as the vectoriser's ``fit_transform``, without holding its
    intermediate lists for every text at once."""
    directory.mkdir(parents=True, exist_ok=True)
    analyse = _vectorizer().build_analyzer()
    held: Counter[str] = Counter()
    for start in range(0, len(texts), block):
        for text in texts[start : start + block]:
            held.update(set(analyse(text)))
    vocabulary = {gram: column for column, gram in enumerate(sorted(held))}
    frequency = np.fromiter((held[gram] for gram in vocabulary), dtype=np.float64, count=len(vocabulary))
    idf = (np.log((1 + len(texts)) / (1 + frequency)) + 1).astype(np.float32)  # smooth idf, as sklearn's
    del held
    rows = []
    if vocabulary:
        vectorizer = _vectorizer(vocabulary)
        vectorizer.idf_ = idf
        rows = [vectorizer.transform(texts[start : start + block]) for start in range(0, len(texts), block)]
    matrix = sp.vstack(rows, format="csr", dtype=np.float32) if rows else sp.csr_matrix((len(texts), 0), dtype=np.float32)
    del rows
    (directory / "vocabulary.json").write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
    np.save(directory / "idf.npy", idf)
    _save_csr(directory, "grams", matrix)
    _save_csr(directory, "labels", matrix.T.tocsr())


def _save_csr(directory: Path, name: str, matrix: sp.csr_matrix) -> None:
    """As three ``.npy`` arrays, indices and offsets of one integer type (so that reading them
    back, mapped or not, copies nothing)."""
    index = np.int32 if matrix.nnz < 2**31 else np.int64
    np.save(directory / f"{name}.data.npy", matrix.data.astype(np.float32, copy=False))
    np.save(directory / f"{name}.indices.npy", matrix.indices.astype(index, copy=False))
    np.save(directory / f"{name}.indptr.npy", matrix.indptr.astype(index, copy=False))
    (directory / f"{name}.shape.json").write_text(json.dumps(matrix.shape), encoding="utf-8")


def _load_csr(directory: Path, name: str, mapped: bool) -> sp.csr_matrix:
    mode = "r" if mapped else None
    arrays = [np.load(directory / f"{name}.{part}.npy", mmap_mode=mode) for part in ("data", "indices", "indptr")]
    shape = tuple(json.loads((directory / f"{name}.shape.json").read_text(encoding="utf-8")))
    return sp.csr_matrix(tuple(arrays), shape=shape, copy=False)


class CharGramIndex:
    """Cosine similarity of character 3-gram TF-IDF vectors, query against labels. ``mapped``:
    the matrices are memory-mapped rather than read (a bundle of millions of labels: they are
    its largest part after the vectors; shared by the workers, in the page cache)."""

    def __init__(self, directory: Path, mapped: bool = False) -> None:
        vocabulary = json.loads((directory / "vocabulary.json").read_text(encoding="utf-8"))
        self._postings = _load_csr(directory, "labels", mapped)  # (n-grams, labels)
        self._labels = _load_csr(directory, "grams", mapped)  # (labels, n-grams), for scoring given labels
        self._columns: dict[str, int] = vocabulary
        self._idf = np.load(directory / "idf.npy") if vocabulary else np.empty(0, np.float32)
        self._analyse = _vectorizer().build_analyzer()

    def vector(self, query: str) -> sp.csr_matrix:
        """The query's unit TF-IDF vector (sublinear tf, the labels' idf), one row."""
        width = len(self._columns)
        counts = Counter(column for gram in self._analyse(query) if (column := self._columns.get(gram)) is not None)
        if not counts:
            return sp.csr_matrix((1, width), dtype=np.float32)
        columns = np.fromiter(sorted(counts), dtype=np.int32, count=len(counts))
        tf = np.fromiter((counts[c] for c in columns.tolist()), dtype=np.float32, count=len(columns))
        values = (1.0 + np.log(tf)) * self._idf[columns]
        values /= np.linalg.norm(values)
        return sp.csr_matrix((values.astype(np.float32), columns, np.array([0, len(columns)])), shape=(1, width))

    def search(self, query: str, k: int, id_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, label ids)`` of the ``k`` labels in ``id_range`` most similar to ``query``."""
        return top(*self.scores(self.vector(query)), k, id_range)

    def scores(self, vector: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """``(label ids, cosines)`` of every label sharing an n-gram with a query :meth:`vector`
        (computed once per query; :func:`top` then picks from it per id range). The query's
        commonest n-grams, which say least, are left out of this candidate search until their
        postings fit :data:`POSTINGS_BUDGET` (the ranking core re-scores its candidates with the
        whole vector: :meth:`similarity`). The postings are summed into an array over every label
        when they are many for the bundle's size (:data:`DENSE_SUM_RATIO`), else by sorting them:
        at 3M labels such an array is 24 MB to clear for a few thousand postings."""
        if not vector.nnz:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        weights, indptr = vector.data, self._postings.indptr
        starts, stops = indptr[vector.indices], indptr[vector.indices + 1]
        held = stops - starts
        if held.sum() > POSTINGS_BUDGET:  # the rarest n-grams first
            rarest = np.argsort(held, kind="stable")
            keep = rarest[: max(int(np.searchsorted(np.cumsum(held[rarest]), POSTINGS_BUDGET, side="right")), 1)]
            starts, stops, weights, held = starts[keep], stops[keep], weights[keep], held[keep]
        at = spans(starts, stops)
        found, values = self._postings.indices[at], self._postings.data[at] * np.repeat(weights, held)
        if len(found) * DENSE_SUM_RATIO >= self._postings.shape[1]:  # summed into an array over every label
            sums = np.bincount(found, weights=values, minlength=self._postings.shape[1])
            labels = np.flatnonzero(sums > 0)  # the same labels (every posting is positive), 8 times sooner than of the sums
            return labels.astype(np.int64), sums[labels].astype(np.float32)
        labels, position = np.unique(found, return_inverse=True)
        return labels.astype(np.int64), np.bincount(position, weights=values).astype(np.float32)

    def similarity(self, vectors: Sequence[sp.csr_matrix], label_ids: np.ndarray) -> np.ndarray:
        """``(labels, queries)`` cosines of query :meth:`vector` s with each of ``label_ids``."""
        if not vectors or not len(label_ids) or not any(v.nnz for v in vectors):
            return np.zeros((len(label_ids), len(vectors)), np.float32)
        queries = np.zeros((self._labels.shape[1], len(vectors)), np.float32)  # dense: a few columns of n-grams
        for number, vector in enumerate(vectors):
            queries[vector.indices, number] = vector.data
        return np.asarray(self._labels[label_ids] @ queries, dtype=np.float32)


def top(ids: np.ndarray, values: np.ndarray, k: int, id_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, label ids)`` of the best ``k`` of ``ids`` inside ``id_range``, best first."""
    inside = (ids >= id_range[0]) & (ids < id_range[1])
    ids, values = ids[inside], values[inside]
    if k <= 0:
        return np.empty(0, np.float32), np.empty(0, np.int64)
    if len(ids) > k:
        best = np.argpartition(-values, k - 1)[:k]
        ids, values = ids[best], values[best]
    order = np.lexsort((ids, -values))
    return values[order].astype(np.float32), ids[order].astype(np.int64)
