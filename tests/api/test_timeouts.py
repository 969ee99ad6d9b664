"""A request that times out is answered 503 with ``Retry-After`` of the time limit, and its work
stops at the next item: nothing is stored for a caller who was told it failed."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient

from app.api.routes import evaluations
from app.main import create_app
from app.ops.limits import RequestCancelled
from app.search.service import SearchService
from app.settings import ApiSettings, Settings
from indexer.encoders import FakeEncoder


def test_a_timed_out_evaluation_stops_and_stores_no_run(built: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    release, ended = threading.Event(), threading.Event()
    calls: list[str] = []
    outcome: list[BaseException | None] = []
    real, real_evaluate = SearchService.rank, evaluations.evaluate

    def first_item_outlasts_the_request(self: SearchService, query: str, *args: object, **kwargs: object) -> object:
        calls.append(query)
        release.wait(30)
        return real(self, query, *args, **kwargs)

    def observed(*args: object, **kwargs: object) -> object:
        try:
            report = real_evaluate(*args, **kwargs)
        except BaseException as exc:
            outcome.append(exc)
            raise
        else:
            outcome.append(None)
            return report
        finally:
            ended.set()

    monkeypatch.setattr(SearchService, "rank", first_item_outlasts_the_request)
    monkeypatch.setattr(evaluations, "evaluate", observed)
    settings = built.model_copy(update={"api": ApiSettings(request_timeout_s=1.5, bundle_check_s=0)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        body = {"system": "toy", "items": [{"query": f"heart {n}", "gold": ["T:2"]} for n in range(5)]}
        response = client.post("/evaluate", json=body)
        assert (response.status_code, response.headers["retry-after"]) == (503, "2")
        assert response.json()["type"] == "/problems/timeout"
        release.set()
        assert ended.wait(30)
        assert [type(exc) for exc in outcome] == [RequestCancelled]
        assert calls == ["heart 0"]  # the items after the timeout were never searched
        assert client.get("/evaluations").json() == []


def test_a_timed_out_match_stops_at_its_next_source(built: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    release, ended = threading.Event(), threading.Event()
    calls: list[list[str]] = []
    real = SearchService.rank_many

    def first_source_outlasts_the_request(self: SearchService, queries: list[str], *args: object, **kwargs: object) -> object:
        calls.append(list(queries))
        if len(calls) == 1:
            release.wait(30)
            ended.set()
        return real(self, queries, *args, **kwargs)

    monkeypatch.setattr(SearchService, "rank_many", first_source_outlasts_the_request)
    settings = built.model_copy(update={"api": ApiSettings(request_timeout_s=1.5, bundle_check_s=0)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        sources = [{"id": str(n), "labels": [f"fast heart {n}"]} for n in range(5)]
        response = client.post("/match", json={"target_system": "toy", "k": 1, "concepts": sources})
        assert (response.status_code, response.json()["type"]) == (503, "/problems/timeout")
        release.set()
        assert ended.wait(30)
        time.sleep(0.5)  # time for a second source, were it searched
    assert calls == [["fast heart 0"]]
