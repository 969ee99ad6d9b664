"""Prefix-aware search: completions by frequency, one per stem; what the encoder is asked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from app.search.autocomplete import Autocomplete, partial_word
from app.search.loader import open_search_service
from app.search.vocabulary import Vocabulary
from indexer.encoders import FakeEncoder
from indexer.settings import Settings
from tests.api.conftest import built  # noqa: F401 - the toy bundle fixture

LABELS = ["Hearing loss", "Hearing impairment", "Heart murmur", "Heart failure", "Heartburn", "Hearts and minds"]


def test_completions_are_the_most_frequent_words_one_per_stem() -> None:
    vocabulary = Vocabulary(LABELS)
    assert vocabulary.completions("hear", 2) == ("hearing", "heart")  # "hearts" shares heart's stem
    assert vocabulary.completions("hear", 10) == ("hearing", "heart", "heartburn")
    assert vocabulary.completions("xyz", 3) == ()


def test_membership_is_of_whole_folded_words() -> None:
    vocabulary = Vocabulary(["Café au lait spots"])
    assert "cafe" in vocabulary and "caf" not in vocabulary and "au" in vocabulary


@pytest.mark.parametrize(
    ("text", "partial"), [("hearing lo", "lo"), ("Tachyc", "tachyc"), ("hearing ", None), ("fever,", None)]
)
def test_the_last_word_is_partial_until_a_space_or_punctuation(text: str, partial: str | None) -> None:
    assert partial_word(text) == partial


class CountingEncoder(FakeEncoder):
    def __init__(self) -> None:
        super().__init__(32)
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return super().encode(texts)


@pytest.fixture
def typing(built: Settings) -> tuple[Autocomplete, CountingEncoder, list[tuple[int, int]]]:  # noqa: F811
    encoder = CountingEncoder()
    service = open_search_service(built, encoder)
    return Autocomplete(service, completions=8), encoder, [service.bundle.systems["toy"].label_range(False)]


def test_the_encoder_sees_finished_words_once_while_a_word_is_typed(typing) -> None:  # noqa: ANN001
    autocomplete, encoder, ranges = typing
    tops = [autocomplete.rank(text, ranges, 5)[0].concept for text in ("hearing l", "hearing lo", "hearing los")]
    assert encoder.texts == ["hearing"]
    assert autocomplete.service.bundle.concepts[tops[-1]].display == "Hearing impairment"


def test_a_lone_fragment_is_lexical_unless_it_matches_nothing(typing) -> None:  # noqa: ANN001
    autocomplete, encoder, ranges = typing
    assert autocomplete.rank("tachyc", ranges, 5) and encoder.texts == []
    assert autocomplete.rank("qzx", ranges, 5) and encoder.texts == ["qzx"]


def test_the_vocabulary_is_ready_when_the_service_opens(built: Settings) -> None:  # noqa: F811
    """Built at start-up (or by the bundle watcher), not by the first filtered request."""
    service = open_search_service(built, FakeEncoder(32))
    assert "vocabulary" in vars(service)  # the cached property is filled
    assert "tachycardia" in service.vocabulary and service.vocabulary.completions("tachyc", 3) == ("tachycardia",)
