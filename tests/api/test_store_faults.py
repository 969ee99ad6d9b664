"""Fault suite, the store: PostgreSQL that accepts connections and never answers (at start-up and
while serving), and a store error during a match job. Search answers from the bundle throughout;
what needs the store answers 503 within its timeouts (a statement the silent server holds is cut
on the client side); jobs resume once the store is back."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from app.main import create_app
from app.matching import jobs as jobs_module
from app.matching.matcher import Matcher
from app.settings import ApiSettings, MatchSettings, Settings
from indexer.encoders import FakeEncoder
from indexer.settings import StoreSettings
from indexer.store import load_source, make_engine, migrate
from indexer.store.db import WATCHDOG_GRACE_S
from tests.hanging_store import HangingProxy
from tests.toy import toy_sources

STORE_DOWN = {
    "type": "/problems/store-unavailable",
    "title": "Concept store unavailable",
    "status": 503,
    "detail": "the concept store cannot be reached; try again later",
}
BODY = {"target_system": "toy", "source_system": "toyicd", "k": 3}


def _bounded(settings: Settings, url: str) -> Settings:
    """Small pool, short timeouts: a hang costs each store request about a second."""
    store = StoreSettings(url=url, connect_timeout_s=2, statement_timeout_s=1, pool_size=2, max_overflow=0, pool_timeout_s=1)
    return settings.model_copy(update={"store": store, "api": ApiSettings(bundle_check_s=0)})


def _within(seconds: float, call: Callable[[], httpx.Response]) -> httpx.Response:
    """``call``'s answer, failing the test (instead of hanging it) when none comes in time."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result(timeout=seconds)


def _search_answers(client: TestClient) -> None:
    search = _within(30, lambda: client.get("/search", params={"q": "fast heart rate", "system": "toy"}))
    assert search.status_code == 200 and search.json()["results"][0]["code"] == "T:2"


@pytest.fixture
def hung() -> Iterator[HangingProxy]:
    proxy = HangingProxy()
    yield proxy
    proxy.close()


def test_a_store_that_never_answers_does_not_block_start_up(built: Settings, hung: HangingProxy) -> None:
    settings = _bounded(built, f"postgresql+psycopg://postgres@127.0.0.1:{hung.port}/test")
    client = _within(60, lambda: TestClient(create_app(settings, encoder=FakeEncoder(32))).__enter__())
    try:
        assert _within(30, lambda: client.get("/health")).json() == {"status": "ok"}
        _search_answers(client)
        concept = _within(30, lambda: client.get("/concepts/toy/T:2"))
        assert (concept.status_code, concept.json()) == (503, STORE_DOWN)
        ready = _within(30, lambda: client.get("/ready"))
        assert (ready.status_code, ready.json()["checks"]["store"]["up"]) == (503, False)
        deadline = time.monotonic() + 30
        while client.app.state.jobs.error is None and time.monotonic() < deadline:
            time.sleep(0.1)
        job = _within(30, lambda: client.post("/match/jobs", json=BODY))
        assert (job.status_code, job.json()["detail"]) == (
            503, "the concept store cannot be reached; match jobs resume once it answers"
        )
    finally:
        hung.close()  # the worker's connection attempt ends at once
        client.__exit__(None, None, None)


@pytest.fixture
def postgres_toy(store_url: str) -> str:
    migrate(store_url)
    engine = make_engine(store_url)
    for source in toy_sources():
        load_source(engine, source)
    engine.dispose()
    return store_url


@pytest.mark.postgres
@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_a_store_that_hangs_while_serving_costs_store_requests_a_503_not_the_server(built: Settings, postgres_toy: str) -> None:
    url = make_url(postgres_toy)
    proxy = HangingProxy((url.host or "127.0.0.1", url.port or 5432))
    try:
        settings = _bounded(built, url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False))
        with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
            assert client.get("/concepts/toy/T:2").status_code == 200
            proxy.hang()
            with ThreadPoolExecutor(60) as pool:
                answers = [pool.submit(client.get, "/concepts/toy/T:2") for _ in range(60)]
                time.sleep(0.5)  # every worker thread is taken or waiting for a connection
                assert _within(30, lambda: client.get("/health")).status_code == 200
                _search_answers(client)
                refused = [a.result(timeout=60) for a in answers[2:]]  # those past the pool's 2 connections
                # The server is still silent: the watchdog cuts the 2 statements it holds.
                held = [a.result(timeout=1 + WATCHDOG_GRACE_S + 5) for a in answers[:2]]
                proxy.restore()
            # Past the pool, a request gets the store's 503; one that queued for a worker thread
            # behind the hung ones (60 requests, 40 threads) may get the request timeout's 503.
            kinds = {r.json()["type"] for r in refused if r.status_code != 200}
            assert kinds <= {STORE_DOWN["type"], "/problems/timeout"}
            assert all(r.json() == STORE_DOWN for r in refused if r.json()["type"] == STORE_DOWN["type"])
            assert sum(r.status_code == 503 for r in refused) >= 50
            assert [r.json() for r in held] == [STORE_DOWN, STORE_DOWN]
            assert client.get("/concepts/toy/T:2").status_code == 200  # served again
    finally:
        proxy.close()


def test_a_store_error_during_a_job_pauses_it_and_it_finishes_once_the_store_is_back(
    built: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``BEGIN EXCLUSIVE`` held by another process: the job's writes fail on the busy timeout."""
    settings = _bounded(built, built.store.url).model_copy(update={"match": MatchSettings(job_chunk=2)})
    stepping, release = threading.Event(), threading.Event()
    real = Matcher.match

    def held(self: Matcher, *args: object, **kwargs: object) -> object:
        stepping.set()
        release.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(jobs_module.Matcher, "match", held)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        location = client.post("/match/jobs", json=BODY).headers["location"]
        assert stepping.wait(30)
        locker = sqlite3.connect(make_url(built.store.url).database, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        release.set()  # the step's results cannot be saved
        deadline = time.monotonic() + 30
        while client.app.state.jobs.error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        ready = client.get("/ready")
        assert (ready.status_code, ready.json()["checks"]["jobs"]) == (
            503, {"up": False, "error": "the concept store is busy or failing; match jobs resume once it answers"}
        )
        locker.execute("ROLLBACK")
        locker.close()
        deadline = time.monotonic() + 60
        while (job := client.get(location).json())["status"] != "done" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (job["status"], job["progress"], job["error"]) == ("done", {"done": 5, "total": 5}, None)
        assert client.get("/ready").json()["checks"]["jobs"] == {"up": True}
        assert client.app.state.jobs.alive


def test_an_unexpected_failure_ends_the_job_with_a_plain_message_and_the_worker_goes_on(
    built: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    def library_error(*_: object, **__: object) -> None:
        raise TypeError("TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]")

    real = Matcher.match
    with TestClient(create_app(built, encoder=FakeEncoder(32))) as client:
        monkeypatch.setattr(jobs_module.Matcher, "match", library_error)
        location = client.post("/match/jobs", json=BODY).headers["location"]
        deadline = time.monotonic() + 30
        while (job := client.get(location).json())["status"] != "failed" and time.monotonic() < deadline:
            time.sleep(0.05)
        job_id = location.rsplit("/", 1)[1]
        assert job["error"] == f"the job failed on an internal error (logged under job {job_id}); submit it again"
        monkeypatch.setattr(jobs_module.Matcher, "match", real)
        second = client.post("/match/jobs", json=BODY).headers["location"]
        deadline = time.monotonic() + 30
        while client.get(second).json()["status"] != "done" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.get(second).json()["status"] == "done"


@pytest.mark.parametrize(
    "cause",
    [sqlite3.OperationalError("database or disk is full"), OSError(28, "No space left on device")],
    ids=["sqlite", "os"],
)
def test_a_full_disk_is_named_as_such_not_as_an_unreachable_store(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, cause: Exception
) -> None:
    def full(*_: object) -> None:
        raise OperationalError("SELECT ...", {}, cause)

    monkeypatch.setattr(client.app.state.reader, "concept", full)
    response = client.get("/concepts/toy/T:2")
    assert response.json() == {**STORE_DOWN, "detail": "the concept store's disk is full; free space, then try again"}
