"""The routers' route class runs a plain function endpoint on the thread pool once: its answer is
checked against the response model on the event loop, not sent to the pool a second time."""

from __future__ import annotations

import threading

import fastapi.routing
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.exceptions import ResponseValidationError
from fastapi.testclient import TestClient
from pydantic import BaseModel

from app.api.http import Route


class Answer(BaseModel):
    thread: str
    count: int


def _app() -> FastAPI:
    router = APIRouter(route_class=Route)

    @router.get("/plain", response_model=Answer)
    def plain(count: int = 1) -> Answer:
        return Answer(thread=threading.current_thread().name, count=count)

    @router.get("/wrong", response_model=Answer)
    def wrong() -> dict[str, object]:
        return {"thread": "x"}  # no count: not an Answer

    app = FastAPI()
    app.include_router(router)
    return app


def test_a_plain_endpoint_runs_off_the_loop_once_and_its_answer_is_checked_there(monkeypatch: pytest.MonkeyPatch) -> None:
    hops: list[object] = []
    pool = fastapi.routing.run_in_threadpool

    async def counted(function, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        hops.append(function)
        return await pool(function, *args, **kwargs)

    monkeypatch.setattr(fastapi.routing, "run_in_threadpool", counted)
    with TestClient(_app()) as client:
        loop_thread = client.portal.call(lambda: threading.current_thread().name)  # type: ignore[union-attr]
        response = client.get("/plain", params={"count": "3"})
        assert response.status_code == 200
        assert response.json()["count"] == 3
        assert response.json()["thread"] != loop_thread  # the endpoint ran on the pool
        assert hops == []  # FastAPI sent nothing to the pool itself: not the endpoint, not the check
        assert client.get("/plain", params={"count": "x"}).status_code == 422  # parameters as declared
        with pytest.raises(ResponseValidationError):
            client.get("/wrong")  # the answer is still checked against the response model
