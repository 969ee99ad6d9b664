"""The character n-gram index: a query's vector is the fitted vectoriser's own, and the nearest
labels of a misspelling are the right ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.lexical import chargrams
from indexer.lexical.chargrams import CharGramIndex, _vectorizer, build_chargrams

LABELS = ["Pneumonia", "Alzheimer disease", "Essential (primary) hypertension", "Tachycardia", "Hearing impairment"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("chargrams")
    build_chargrams(directory, LABELS, block=2)  # three blocks
    return directory


@pytest.fixture(scope="module", params=[False, True], ids=["read", "mapped"])
def index(built: Path, request: pytest.FixtureRequest) -> CharGramIndex:
    return CharGramIndex(built, mapped=request.param)


def test_the_build_by_blocks_gives_the_vectorisers_matrix(built: Path) -> None:
    """Two passes a block at a time: the same n-grams, idf and rows as ``fit_transform``."""
    expected = _vectorizer().fit_transform(LABELS)
    for mapped in (False, True):
        labels = CharGramIndex(built, mapped)._labels
        assert abs(labels - expected).max() < 1e-6 and labels.shape == expected.shape


@pytest.mark.parametrize("query", ["pnemonia", "alzhimers disease", "HYPERTENSION essential", "tachy tachy", "zzzz", ""])
def test_a_query_vector_equals_the_vectorisers_transform(index: CharGramIndex, query: str) -> None:
    fitted = _vectorizer().fit(LABELS)
    expected = fitted.transform([query]).toarray()
    assert np.allclose(index.vector(query).toarray(), expected, atol=1e-6)


def test_a_misspelling_finds_its_label(index: CharGramIndex) -> None:
    scores, labels = index.search("pnemonia", 2, (0, len(LABELS)))
    assert labels[0] == 0 and scores[0] > 0.5
    _, labels = index.search("alzhimers", 1, (0, len(LABELS)))
    assert labels.tolist() == [1]


@pytest.mark.parametrize("query", ["pnemonia", "hypertension essential", "heart"])
def test_postings_sum_the_same_into_an_array_over_every_label_or_by_sorting(
    index: CharGramIndex, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two ways :meth:`CharGramIndex.scores` sums postings (chosen by the bundle's size) agree."""
    vector = index.vector(query)
    monkeypatch.setattr(chargrams, "DENSE_SUM_RATIO", 10**9)  # always the array
    dense = index.scores(vector)
    monkeypatch.setattr(chargrams, "DENSE_SUM_RATIO", 0)  # always sorting
    sorted_ = index.scores(vector)
    assert dense[0].tolist() == sorted_[0].tolist() and len(dense[0])
    assert np.allclose(dense[1], sorted_[1], atol=1e-6)
