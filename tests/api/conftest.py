from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.settings import Settings
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.toy import toy_sources


@pytest.fixture
def built(settings: Settings) -> Settings:
    """Settings whose store holds the toy systems and whose bundles dir serves them."""
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    for source in toy_sources():
        load_source(engine, source)
    build_bundle(settings, StoreReader(engine), FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    engine.dispose()
    return settings


@pytest.fixture
def client(built: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(built, encoder=FakeEncoder(32))) as test_client:
        yield test_client
