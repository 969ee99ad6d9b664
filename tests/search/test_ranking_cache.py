"""The core keeps its rankings: a repeated query is answered from them, and anything a ranking
depends on (scope, arguments, settings, calibration) asks anew."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.search.loader import open_search_service
from app.search.scope import Scope
from app.search.service import SearchService
from app.settings import Settings
from indexer.encoders import FakeEncoder
from tests.api.conftest import built  # noqa: F401 - the toy bundle fixture


@pytest.fixture
def service(built: Settings) -> Iterator[SearchService]:  # noqa: F811
    yield open_search_service(built, FakeEncoder(32))


def counted(service: SearchService) -> list[list[str]]:
    """The queries each call of the core's computation ranks."""
    calls: list[list[str]] = []
    compute = service._rank_many

    def spy(queries, *args):  # noqa: ANN001, ANN002
        calls.append(list(queries))
        return compute(queries, *args)

    service._rank_many = spy  # type: ignore[method-assign]
    return calls


def test_a_repeated_query_is_answered_from_the_kept_ranking(service: SearchService) -> None:
    calls = counted(service)
    first = service.rank("fast heart rate", Scope(("toy",)), 5)
    again = service.rank("fast heart rate", Scope(("toy",)), 5)
    assert again == first and again.rows is not first.rows  # equal, and the caller's own list
    assert service.rank_many(["fast heart rate", "hearing loss"], Scope(("toy",)), 5)[0] == first
    assert calls == [["fast heart rate"], ["hearing loss"]]  # only the new query was ranked


def test_what_a_ranking_depends_on_asks_anew(service: SearchService) -> None:
    calls = counted(service)
    service.rank("fast heart rate", Scope(("toy",)), 5)
    service.rank("fast heart rate", Scope(("toy",)), 3)  # k
    service.rank("fast heart rate", Scope(("toy",), include_inactive=True), 5)  # scope
    service.rank("fast heart rate", Scope(("toy",)), 5, min_confidence=0.5)  # threshold
    service.settings.bridges = not service.settings.bridges  # a setting
    service.rank("fast heart rate", Scope(("toy",)), 5)
    service.settings.bridges = not service.settings.bridges
    service.calibration = service.calibration  # a new ranker forgets every ranking
    service.rank("fast heart rate", Scope(("toy",)), 5)
    service.rank("fast heart rate", Scope(("toy",), exclude_labels=frozenset({0})), 5)  # never kept
    service.rank("fast heart rate", Scope(("toy",), exclude_labels=frozenset({0})), 5)
    assert len(calls) == 8


def test_no_ranking_is_kept_when_the_cache_is_off(built: Settings) -> None:  # noqa: F811
    built.search.ranking_cache = 0
    service = open_search_service(built, FakeEncoder(32))
    calls = counted(service)
    service.rank("fast heart rate", Scope(("toy",)), 5)
    service.rank("fast heart rate", Scope(("toy",)), 5)
    assert len(calls) == 2
