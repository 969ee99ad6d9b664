from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
import uvicorn
from fastapi import FastAPI
from sqlalchemy.engine import make_url

from app.settings import Settings
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.elastic_fake import FakeElasticsearch
from tests.toy import toy_sources

POSTGRES_URL = os.environ.get("TERMSEARCH_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a throw-away PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    yield from _postgres_database()


def _postgres_database() -> Iterator[str]:
    admin = make_url(POSTGRES_URL)
    name = f"termsearch_test_{uuid.uuid4().hex[:12]}"
    conninfo = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """The app's settings (the indexer's and the app's sections) over a fresh data directory."""
    return Settings(data_dir=tmp_path / "var", _env_file=None)


@pytest.fixture
def toy_reader(settings: Settings) -> Iterator[StoreReader]:
    """A reader over the settings' store, migrated and holding the two toy systems."""
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    for source in toy_sources():
        load_source(engine, source)
    yield StoreReader(engine)
    engine.dispose()


@pytest.fixture
def fake_es() -> Iterator[FakeElasticsearch]:
    """A stand-in Elasticsearch on a free local port (see tests/elastic_fake.py)."""
    fake = FakeElasticsearch().start()
    yield fake
    fake.stop()


@pytest.fixture
def serve_app() -> Iterator[Callable[[FastAPI], str]]:
    """``serve_app(app) -> base_url``: ``app`` served by uvicorn on a free 127.0.0.1 port, in a
    background thread (lifespan included), until the test ends: ``http://127.0.0.1:PORT``."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def serve(app: FastAPI) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        servers.append((server, thread))
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn stopped before it started serving")
            thread.join(0.02)
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    yield serve
    for server, thread in servers:
        server.should_exit = True
        thread.join(10)
