from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.store import StoreReader


@pytest.fixture
def built(settings: Settings, toy_reader: StoreReader) -> Settings:
    """Settings whose store holds the toy systems and whose bundles dir serves them."""
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    return settings


@pytest.fixture
def client(built: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(built, encoder=FakeEncoder(32))) as test_client:
        yield test_client
