"""The character n-gram index: a query's vector is the fitted vectoriser's own, and the nearest
labels of a misspelling are the right ones."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.lexical.chargrams import CharGramIndex, _vectorizer, build_chargrams

LABELS = ["Pneumonia", "Alzheimer disease", "Essential (primary) hypertension", "Tachycardia", "Hearing impairment"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> CharGramIndex:
    directory = tmp_path_factory.mktemp("chargrams")
    build_chargrams(directory, LABELS)
    return CharGramIndex(directory)


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
