"""140 clients PUT one ValueSet id at once over real HTTP (issue 36: on PostgreSQL, 87 of 140
answered 500 before the writes were upserts): no 5xx, and one consistent resource stored, on
SQLite and on PostgreSQL."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.settings import StoreSettings
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.toy import TOY, toy_sources

WRITERS = 140


@pytest.fixture
def base(serve_app: Callable[[FastAPI], str], tmp_path: Path, store_url: str) -> str:
    # The writes' consistency is tested, not the shedding of an overload: a writer waits for a
    # connection as long as it takes (the default 2 s answers 503 on a busy machine, by design).
    store = StoreSettings(url=store_url, pool_timeout_s=60)
    settings = Settings(data_dir=tmp_path / "var", store=store, _env_file=None)
    migrate(store_url)
    engine = make_engine(store_url)
    for source in toy_sources():
        load_source(engine, source)
    build_bundle(settings, StoreReader(engine), FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    engine.dispose()
    return serve_app(create_app(settings, encoder=FakeEncoder(32)))


def test_concurrent_puts_of_one_id_answer_no_5xx_and_store_one_consistent_resource(base: str) -> None:
    def resource(n: int) -> dict:
        return {
            "resourceType": "ValueSet", "id": "shared", "url": "http://example.org/vs/shared", "version": str(n),
            "status": "active", "compose": {"include": [{"system": TOY.uri, "concept": [{"code": "T:2"}]}]},
        }  # fmt: skip

    start = threading.Barrier(WRITERS)

    def put(n: int) -> int:
        with httpx.Client(base_url=base, timeout=60) as client:
            start.wait()
            return client.put("/fhir/ValueSet/shared", json=resource(n)).status_code

    with ThreadPoolExecutor(WRITERS) as pool:
        statuses = Counter(pool.map(put, range(WRITERS)))
    assert set(statuses) <= {200, 201}, statuses
    assert statuses[201] == 1  # one created it, every other one replaced it
    stored = httpx.get(f"{base}/fhir/ValueSet/shared").json()
    assert stored["url"] == "http://example.org/vs/shared" and int(stored["version"]) in range(WRITERS)
    assert stored == {**resource(int(stored["version"])), **{k: v for k, v in stored.items() if k == "meta"}}
    found = httpx.get(f"{base}/fhir/ValueSet", params={"url": "http://example.org/vs/shared"}).json()
    assert found["total"] == 1
    expansion = httpx.get(f"{base}/fhir/ValueSet/$expand", params={"url": "http://example.org/vs/shared"}).json()
    assert [c["code"] for c in expansion["expansion"]["contains"]] == ["T:2"]
