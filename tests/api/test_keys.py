"""API keys: the example key of ``.env.example`` is refused at start-up, wrong keys are
throttled per client and key and under a global ceiling (429 with ``Retry-After``) before any
comparison, and refused requests are counted under the route they were sent to."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dotenv import dotenv_values
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.main import create_app
from app.settings import PLACEHOLDER_KEY, ApiSettings, Settings
from indexer.encoders import FakeEncoder

ENV_EXAMPLE = Path(__file__).resolve().parents[2] / ".env.example"


def test_the_example_key_is_refused_when_auth_is_on() -> None:
    assert dotenv_values(ENV_EXAMPLE)["TERMSEARCH_API__API_KEYS"] == PLACEHOLDER_KEY
    with pytest.raises(ValidationError, match="holds the placeholder 'change-me-to-a-long-random-key' from .env.example"):
        ApiSettings(auth_enabled=True, api_keys=f"{'k' * 32},{PLACEHOLDER_KEY}")
    assert ApiSettings(auth_enabled=True, api_keys="k" * 32).keys == ["k" * 32]


KEY = "k" * 32


@pytest.fixture
def guarded(built: Settings) -> Iterator[TestClient]:
    """Auth on; 3 wrong keys per client and key, then one more every 100 s; 5 from everyone, then one every 50 s."""
    api = ApiSettings(
        auth_enabled=True, api_keys=KEY, auth_failure_burst=3, auth_failures_per_s=0.01,
        auth_failure_global_burst=5, auth_failures_global_per_s=0.02, bundle_check_s=0,
    )
    with TestClient(create_app(built.model_copy(update={"api": api}), encoder=FakeEncoder(32))) as client:
        yield client


def _search(client: TestClient, key: str | None, address: str = "testclient") -> httpx.Response:
    headers = {"x-api-key": key} if key else {}
    client._transport.client = (address, 50000)  # noqa: SLF001  (the address the app sees)
    return client.get("/search", params={"q": "heart", "system": "toy"}, headers=headers)


def test_a_wrong_key_is_throttled_per_client_and_key_and_the_right_key_still_passes(guarded: TestClient) -> None:
    assert [_search(guarded, "w" * 32).status_code for _ in range(3)] == [401, 401, 401]
    throttled = _search(guarded, "w" * 32)
    assert (throttled.status_code, throttled.headers["retry-after"]) == (429, "100")
    assert throttled.json() == {
        "type": "/problems/rate-limited",
        "title": "Too many requests",
        "status": 429,
        "detail": "too many wrong API keys; retry after 100 s",
    }
    assert _search(guarded, KEY).status_code == 200  # the right key from the same address is not locked out
    assert _search(guarded, None).status_code == 401  # no key is not a guess
    assert guarded.get("/health").status_code == 200


def test_guesses_spread_over_addresses_and_keys_meet_a_global_ceiling_that_spares_known_clients(guarded: TestClient) -> None:
    assert _search(guarded, KEY, "10.0.0.1").status_code == 200  # a client at work
    answers = [_search(guarded, f"guess-{i:027d}", f"10.9.{i}.1").status_code for i in range(6)]
    assert answers == [401] * 5 + [429]  # every address and key new: only the ceiling stops them
    ceiling = _search(guarded, KEY, "10.0.0.2")
    assert (ceiling.status_code, ceiling.headers["retry-after"]) == (429, "50")  # a new client waits too
    assert _search(guarded, KEY, "10.0.0.1").status_code == 200  # one that sent a right key within the hour does not


def test_refused_requests_are_counted_under_the_route_they_were_sent_to(guarded: TestClient) -> None:
    guarded.post("/match", content=b"x" * (2 << 20), headers={"x-api-key": KEY, "content-type": "application/json"})
    for _ in range(4):
        _search(guarded, "w" * 32)
    registry = guarded.app.state.metrics.registry  # /metrics itself is throttled for this client now
    counts = {
        (route, status): registry.get_sample_value(
            "termsearch_http_requests_total", {"method": method, "route": route, "status": status}
        )
        for method, route, status in (("GET", "/search", "401"), ("GET", "/search", "429"), ("POST", "/match", "413"))
    }
    assert counts == {("/search", "401"): 3.0, ("/search", "429"): 1.0, ("/match", "413"): 1.0}


SECRET = "real-secret-key-" + "s3cr3t" * 8


@pytest.mark.parametrize(
    ("command", "variables", "wrong"),
    [
        (
            ["app", "--help"],
            {"TERMSEARCH_API__AUTH_ENABLED": "true", "TERMSEARCH_API__API_KEYS": f"{SECRET},{PLACEHOLDER_KEY}"},
            f"TERMSEARCH_API: Value error, TERMSEARCH_API__API_KEYS holds the placeholder {PLACEHOLDER_KEY!r} "
            "from .env.example; set a random key (openssl rand -hex 32)",
        ),
        (  # the indexer reads its own settings only: a wrong one of them
            ["indexer", "info"],
            {"TERMSEARCH_ELASTICSEARCH__REQUEST_TIMEOUT": SECRET},
            "TERMSEARCH_ELASTICSEARCH__REQUEST_TIMEOUT: Input should be a valid number, unable to parse string as a number",
        ),
    ],
)
def test_a_configuration_error_names_the_variable_never_the_value(
    command: list[str], variables: dict[str, str], wrong: str
) -> None:
    """pydantic's own message shows the input, whose tail held a key."""
    run = subprocess.run(
        [sys.executable, "-m", *command], env={**os.environ, **variables}, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == f"error: invalid configuration: {wrong}"
    assert "s3cr3t" not in run.stderr + run.stdout
