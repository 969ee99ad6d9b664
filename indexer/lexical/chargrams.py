"""Character n-gram TF-IDF over labels: the typo-tolerant channel ("pnemonia" → Pneumonia).

scispaCy's candidate generator in miniature: each folded label becomes a TF-IDF vector of its
character 3-grams within word boundaries (scikit-learn's ``char_wb`` analyser), unit length, and
a query is scored against every label by cosine similarity through the transposed matrix (an
inverted index: only the postings of the query's n-grams are touched). Saved into the bundle as
the vocabulary of n-grams, their idf and the sparse label matrix.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

from indexer.lexical.normalise import fold

DIRECTORY = "chargrams"
NGRAMS = (3, 3)


def _vectorizer(vocabulary: dict[str, int] | None = None) -> TfidfVectorizer:
    return TfidfVectorizer(
        analyzer="char_wb", ngram_range=NGRAMS, preprocessor=fold, sublinear_tf=True, dtype=np.float32,
        vocabulary=vocabulary,
    )


def build_chargrams(directory: Path, texts: Sequence[str]) -> None:
    """Fit the n-gram vocabulary and idf on ``texts`` (label id = position) and save the index."""
    directory.mkdir(parents=True, exist_ok=True)
    vectorizer = _vectorizer()
    matrix = vectorizer.fit_transform(texts) if texts else sp.csr_matrix((0, 0), dtype=np.float32)
    vocabulary = {gram: int(column) for gram, column in getattr(vectorizer, "vocabulary_", {}).items()}
    (directory / "vocabulary.json").write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
    np.save(directory / "idf.npy", getattr(vectorizer, "idf_", np.empty(0, np.float32)).astype(np.float32))
    sp.save_npz(directory / "labels.npz", sp.csr_matrix(matrix.T, dtype=np.float32), compressed=False)


class CharGramIndex:
    """Cosine similarity of character 3-gram TF-IDF vectors, query against labels."""

    def __init__(self, directory: Path) -> None:
        vocabulary = json.loads((directory / "vocabulary.json").read_text(encoding="utf-8"))
        self._postings = sp.load_npz(directory / "labels.npz").tocsr()  # (n-grams, labels)
        self._labels = self._postings.T.tocsr()  # (labels, n-grams), for scoring given labels
        self._vectorizer = _vectorizer(vocabulary or None)
        if vocabulary:
            self._vectorizer.fit([""])  # sets the fixed vocabulary; idf comes from the bundle
            self._vectorizer.idf_ = np.load(directory / "idf.npy")

    def vector(self, query: str) -> sp.csr_matrix:
        if not self._postings.shape[0]:
            return sp.csr_matrix((1, 0), dtype=np.float32)
        return self._vectorizer.transform([query])

    def search(self, query: str, k: int, id_range: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, label ids)`` of the ``k`` labels in ``id_range`` most similar to ``query``."""
        return top(*self.scores(self.vector(query)), k, id_range)

    def scores(self, vector: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """``(label ids, cosines)`` of every label sharing an n-gram with a query :meth:`vector`
        (computed once per query; :func:`top` then picks from it per id range)."""
        if not vector.nnz:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        scores = (vector @ self._postings).tocsr()  # (1, labels), only labels sharing an n-gram
        return scores.indices, scores.data

    def similarity(self, vector: sp.csr_matrix, label_ids: np.ndarray) -> np.ndarray:
        """Cosine of a query :meth:`vector` with each of ``label_ids``."""
        if not vector.nnz or not len(label_ids):
            return np.zeros(len(label_ids), np.float32)
        return np.asarray((self._labels[label_ids] @ vector.T).todense(), dtype=np.float32).ravel()


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
