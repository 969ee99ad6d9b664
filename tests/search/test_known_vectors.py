"""At most one encoder call per query (issue 42): a text the bundle holds as a label (the query
itself, a bridge's concept name) takes that label's vector, which the build encoded with the
same encoder; only texts it does not hold are encoded, and the rankings are the same."""

from __future__ import annotations

import numpy as np
import pytest

from app.search.loader import open_search_service
from app.search.scope import Scope
from app.search.service import SearchService
from app.settings import Settings
from indexer.encoders import FakeEncoder
from tests.api.conftest import built  # noqa: F401 - the toy bundle fixture


class CountingEncoder(FakeEncoder):
    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return super().encode(texts)


@pytest.fixture
def service(built: Settings) -> SearchService:  # noqa: F811
    built.search.ranking_cache = 0
    return open_search_service(built, CountingEncoder(32))


def test_a_label_is_not_encoded_and_its_vector_is_the_one_encoding_gives(service: SearchService) -> None:
    encoder = service.encoder
    assert isinstance(encoder, CountingEncoder)
    encoder.texts.clear()
    looked_up = service.channels.vector("Tachycardia")
    assert encoder.texts == []
    assert np.array_equal(looked_up, FakeEncoder(32).encode(["Tachycardia"])[0])
    service.channels.vector("tachycardia")  # another case may be another vector: encoded
    assert encoder.texts == ["tachycardia"]


def test_a_bridge_through_another_system_costs_no_encoding(service: SearchService) -> None:
    """'Fast heart rate' names HPO's Tachycardia exactly; searched in ICD-10-CM, the core also
    searches Tachycardia's name, a label of the bundle: only the query is encoded."""
    encoder = service.encoder
    assert isinstance(encoder, CountingEncoder)
    encoder.texts.clear()
    service.rank("Racing heart please", Scope(("toyicd",)), 3)
    assert encoder.texts == ["Racing heart please"]
    encoder.texts.clear()
    bridged = service.rank("Fast heart rate", Scope(("toyicd",)), 3)
    assert encoder.texts == []
    assert any("via TOY T:2 Tachycardia" in (row.via or "") for row in bridged.rows)


def test_a_misspelled_query_bridges_as_its_correction_would(service: SearchService) -> None:
    """'Fast haert rate' is corrected to 'Fast heart rate', HPO's name of Tachycardia: searched in
    ICD-10-CM, it goes through Tachycardia as the correction would."""
    ranking = service.rank("Fast haert rate", Scope(("toyicd",)), 3)
    assert ranking.suggestion == "Fast heart rate"
    assert any("via TOY T:2 Tachycardia" in (row.via or "") for row in ranking.rows)


def test_a_correction_that_is_a_searched_concepts_name_needs_no_bridge(service: SearchService) -> None:
    """'Tachycardai' is corrected to TOY's own Tachycardia: not searched through TOYICD's
    'Tachycardia, unspecified' as well (a bridge would compete with the concept it names)."""
    ranking = service.rank("Tachycardai", Scope(("toy",)), 3)
    assert ranking.suggestion == "tachycardia"
    assert service.bundle.concepts[ranking.rows[0].row].display == "Tachycardia"
    assert not any("via TOYICD" in (row.via or "") for row in ranking.rows)
