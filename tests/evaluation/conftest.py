from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from indexer.records import CodeSystemInfo, Concept
from indexer.settings import Settings
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.toy import ListSource

MINI = CodeSystemInfo("mini", "http://example.org/mini", "Mini terminology", "1")


@pytest.fixture
def reader_of(settings: Settings) -> Iterator[Callable[[list[Concept]], StoreReader]]:
    """Load a list of concepts as the system ``mini`` into a fresh store and read it."""
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)

    def load(concepts: list[Concept]) -> StoreReader:
        load_source(engine, ListSource(MINI, concepts))
        return StoreReader(engine)

    yield load
    engine.dispose()
