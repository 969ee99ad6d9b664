"""``python -m app``: uvicorn with the settings' limits; SIGTERM drains the requests in flight."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from app.__main__ import uvicorn_args
from bench.common import free_port

# A stand-in app with a slow route, served by the launcher's uvicorn configuration.
SLOW_APP = """
import asyncio, os, pathlib
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

async def slow(request):
    pathlib.Path(os.environ["STARTED_FILE"]).touch()  # the test sends SIGTERM only once we are in flight
    await asyncio.sleep(1.5)
    return PlainTextResponse("finished")

app = Starlette(routes=[Route("/slow", slow), Route("/health", lambda r: PlainTextResponse("ok"))])
"""


def test_limits_come_from_the_settings_and_the_command_line_wins(monkeypatch) -> None:
    monkeypatch.setenv("TERMSEARCH_API__LIMIT_CONCURRENCY", "7")
    monkeypatch.setenv("TERMSEARCH_API__GRACEFUL_SHUTDOWN_S", "9")
    from app.settings import get_settings

    get_settings.cache_clear()
    try:
        args = uvicorn_args(["--port", "1234", "--limit-concurrency", "8"])
    finally:
        get_settings.cache_clear()
    assert args[0] == "app.main:app"
    assert args[args.index("--timeout-graceful-shutdown") + 1] == "9"
    assert args[args.index("--http") + 1] == "app.ops.connections:GuardedHttpToolsProtocol"
    assert args[args.index("--timeout-keep-alive") + 1] == "5"
    assert args[-4:] == ["--port", "1234", "--limit-concurrency", "8"]  # later values win in click
    assert "--no-access-log" in args and "--log-config" in args
    assert args[args.index("--workers") + 1] == str(len(os.sched_getaffinity(0)))  # a worker per usable core


def test_workers_come_from_the_settings_and_the_command_line_wins(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("TERMSEARCH_API__WORKERS", "3")
    from app.settings import get_settings

    get_settings.cache_clear()
    try:
        args = uvicorn_args(["--workers", "5"])
    finally:
        get_settings.cache_clear()
    assert args[args.index("--workers") + 1] == "3"
    assert args[-2:] == ["--workers", "5"]  # click keeps the last


def test_sigterm_drains_the_request_in_flight(tmp_path) -> None:
    (tmp_path / "slow_app.py").write_text(SLOW_APP)
    port = free_port()
    launch = "import sys, uvicorn; from app.__main__ import uvicorn_args; uvicorn.main.main(uvicorn_args(sys.argv[1:], 'slow_app:app'))"
    started = tmp_path / "started"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()]),
        "TERMSEARCH_API__GRACEFUL_SHUTDOWN_S": "10",
        "STARTED_FILE": str(started),
    }
    server = subprocess.Popen([sys.executable, "-c", launch, "--host", "127.0.0.1", "--port", str(port)], env=env, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: _answers(f"{base}/health"), "the server to start")
        answers: list[httpx.Response] = []
        in_flight = threading.Thread(target=lambda: answers.append(httpx.get(f"{base}/slow", timeout=30)))
        in_flight.start()
        _wait_for(started.exists, "the slow request to reach the app")
        server.send_signal(signal.SIGTERM)
        in_flight.join(30)
        assert [(r.status_code, r.text) for r in answers] == [(200, "finished")]
        assert server.wait(30) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once drained
    finally:
        server.kill()


def test_idle_connections_neither_deny_service_nor_stay_open(tmp_path) -> None:
    """300 connections that send nothing, and one that sends half a request: /health still
    answers, and each is closed once ``header_timeout_s`` has passed (the real app, no bundle)."""
    # Every connection here is from one address: uncapped, so that the timeout alone is tested.
    settings = {"TERMSEARCH_API__HEADER_TIMEOUT_S": "2", "TERMSEARCH_API__MAX_CONNECTIONS_PER_CLIENT": "0"}
    idle: list[socket.socket] = []
    with _launched(tmp_path, settings) as (base, port):
        try:
            idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
            idle[0].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # slowloris: the headers never end
            health = httpx.get(f"{base}/health", timeout=30)
            assert (health.status_code, health.json()) == (200, {"status": "ok"})
            for sock in (idle[0], idle[1], idle[-1]):
                sock.settimeout(30)  # a hang fails the test; the server closes them after about 2 s
                assert sock.recv(1024) == b""
        finally:
            for sock in idle:
                sock.close()


@contextmanager
def _launched(tmp_path, settings: dict[str, str]) -> Iterator[tuple[str, int]]:  # noqa: ANN001
    """``python -m app`` (no bundle, bundle checks off) with these settings, once it answers:
    (base URL, port); killed on leaving."""
    port = free_port()
    # One worker: connection caps and timeouts are per process (several: tests/api/test_workers.py).
    env = {
        **os.environ, "TERMSEARCH_DATA_DIR": str(tmp_path), "TERMSEARCH_API__BUNDLE_CHECK_S": "0",
        "TERMSEARCH_API__WORKERS": "1", **settings,
    }  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "--host", "127.0.0.1", "--port", str(port)], env=env, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: _answers(f"{base}/health"), "the server to start")
        yield base, port
    finally:
        server.kill()
        server.wait(30)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def _wait_for(condition, what: str, seconds: float = 60) -> None:  # noqa: ANN001
    """Generous deadlines: CI machines share 2 cores with other work."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_one_client_cannot_hold_more_than_its_connections(tmp_path) -> None:
    """Past ``max_connections_per_client`` open connections from one address, a new one is
    answered 429 (problem JSON) and closed; once the client closes some, it is served again."""
    held: list[socket.socket] = []
    with _launched(tmp_path, {"TERMSEARCH_API__MAX_CONNECTIONS_PER_CLIENT": "5"}) as (base, port):
        try:
            held = [socket.create_connection(("127.0.0.1", port)) for _ in range(5)]
            time.sleep(0.5)  # the server has taken them
            with socket.create_connection(("127.0.0.1", port)) as extra:
                extra.settimeout(30)
                answer = b""
                while chunk := extra.recv(4096):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 429 ") and b"retry-after: 1" in head.lower()
            assert json.loads(body) == {
                "type": "/problems/rate-limited",
                "title": "Too many requests",
                "status": 429,
                "detail": "connections: this address holds 5 open connections, the most one client may; reuse or close them",
            }
            for sock in held:
                sock.close()
            _wait_for(lambda: _answers(f"{base}/health"), "the client to be served again")
        finally:
            for sock in held:
                sock.close()
