"""Limits and protection (app/ops): request ids, access log, metrics, body limit, timeout, API keys,
rate limiting, and error bodies that never leak internals."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from app.main import create_app
from app.ops.access import TokenBuckets
from app.ops.logs import JsonFormatter
from app.ops.middleware import HttpMiddleware
from app.settings import ApiSettings, Settings
from indexer.encoders import FakeEncoder

KEY, OTHER_KEY = "k" * 16 + "-first", "k" * 16 + "-second"


def _with_api(settings: Settings, **api: object) -> Settings:
    return settings.model_copy(update={"api": ApiSettings(**{"bundle_check_s": 0, **api})})


def _test_routes(app: FastAPI) -> FastAPI:
    """Routes that only tests need: an echo of the body, a slow answer, a crash."""

    async def echo(request: Request) -> dict[str, int]:
        return {"received": len(await request.body())}

    def slow() -> dict[str, str]:
        time.sleep(1.0)
        return {"status": "late"}

    def crash() -> None:
        raise RuntimeError(f"secret detail in {Path(__file__).resolve()}")

    app.add_api_route("/test/echo", echo, methods=["POST"])
    for prefix in ("/test", "/fhir/test"):
        app.add_api_route(f"{prefix}/slow", slow)
        app.add_api_route(f"{prefix}/crash", crash)
    return app


@pytest.fixture
def make_client(built: Settings) -> Iterator:
    clients: list[TestClient] = []

    def make(**api: object) -> TestClient:
        app = _test_routes(create_app(_with_api(built, **api), encoder=FakeEncoder(32)))
        clients.append(TestClient(app).__enter__())
        return clients[-1]

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def test_every_response_carries_a_request_id(make_client) -> None:
    client = make_client()
    generated = client.get("/health").headers["x-request-id"]
    assert len(generated) == 32 and generated != client.get("/health").headers["x-request-id"]
    assert client.get("/health", headers={"X-Request-ID": "trace-42"}).headers["x-request-id"] == "trace-42"
    assert client.get("/health", headers={"X-Request-ID": "bad id\twith spaces"}).headers["x-request-id"] != "bad id\twith spaces"


def test_one_structured_access_log_line_per_request_without_the_query(make_client, caplog) -> None:
    client = make_client()
    with caplog.at_level(logging.INFO, logger="termsearch.access"):
        response = client.get("/search", params={"q": "private words", "system": "toy"})
    (record,) = [r for r in caplog.records if r.name == "termsearch.access"]
    assert (record.request_id, record.method, record.path, record.route, record.status) == (
        response.headers["x-request-id"], "GET", "/search", "/search", 200
    )
    assert record.duration_ms > 0 and record.response_bytes == len(response.content)
    line = JsonFormatter().format(record)
    assert "\n" not in line and json.loads(line)["request_id"] == record.request_id
    assert "private" not in line


def test_metrics_count_requests_per_route_template_and_name_the_bundle(make_client) -> None:
    client = make_client()
    client.get("/concepts/toy/T:2")
    client.get("/concepts/toy/T:3")
    client.get("/concepts/toy/T:404")
    client.get("/no/such/path")
    text = client.get("/metrics").text
    assert 'termsearch_http_requests_total{method="GET",route="/concepts/{system}/{code}",status="200"} 2.0' in text
    assert 'termsearch_http_requests_total{method="GET",route="/concepts/{system}/{code}",status="404"} 1.0' in text
    assert 'termsearch_http_requests_total{method="GET",route="unmatched",status="404"} 1.0' in text
    assert 'termsearch_http_request_duration_seconds_count{method="GET",route="/concepts/{system}/{code}"} 3.0' in text
    service = client.app.state.service
    assert f'termsearch_bundle_info{{bundle_id="{service.bundle.id}",encoder_id="{service.encoder.id}"}} 1.0' in text
    assert "process_resident_memory_bytes" in text


def test_body_over_the_limit_is_413(make_client) -> None:
    client = make_client(max_body_bytes=1024)
    expected = {
        "type": "/problems/payload-too-large",
        "title": "Payload too large",
        "status": 413,
        "detail": "the request body is limited to 1024 bytes",
    }
    declared = client.post("/test/echo", content=b"x" * 1025)
    assert (declared.status_code, declared.json()) == (413, expected)
    assert declared.headers["content-type"] == "application/problem+json"
    streamed = client.post("/test/echo", content=iter([b"x" * 600, b"x" * 600]))  # chunked: no length
    assert (streamed.status_code, streamed.json()) == (413, expected)
    assert client.post("/test/echo", content=b"x" * 1024).json() == {"received": 1024}


def test_slow_request_times_out_with_503(make_client) -> None:
    client = make_client(request_timeout_s=0.2)
    response = client.get("/test/slow")  # the route answers after 1 s: a 503 is the timeout's, not a late 200
    assert (response.status_code, response.headers["retry-after"]) == (503, "1")
    assert response.json() == {
        "type": "/problems/timeout",
        "title": "Request timed out",
        "status": 503,
        "detail": "no answer within 0.2 s; try a smaller request or again later",
    }


def test_fhir_paths_get_operation_outcomes(make_client) -> None:
    client = make_client(request_timeout_s=0.2)
    response = client.get("/fhir/test/slow")
    assert (response.status_code, response.headers["content-type"]) == (503, "application/fhir+json")
    assert response.json() == {
        "resourceType": "OperationOutcome",
        "issue": [
            {
                "severity": "fatal",
                "code": "timeout",
                "details": {"text": "no answer within 0.2 s; try a smaller request or again later"},
            }
        ],
    }


def test_unhandled_errors_are_500_without_details(make_client, tmp_path: Path) -> None:
    client = make_client()
    response = client.get("/test/crash")
    request_id = response.headers["x-request-id"]
    assert response.status_code == 500
    assert response.json() == {
        "type": "/problems/internal-error",
        "title": "Internal server error",
        "status": 500,
        "detail": f"an unexpected error occurred (request id {request_id})",
    }
    fhir = client.get("/fhir/test/crash").json()
    assert fhir["issue"][0]["code"] == "exception" and "secret" not in json.dumps(fhir)


def test_api_keys_when_enabled(make_client) -> None:
    client = make_client(auth_enabled=True, api_keys=f"{KEY},{OTHER_KEY}")
    missing = client.get("/search", params={"q": "heart"})
    assert (missing.status_code, missing.headers["www-authenticate"]) == (401, 'Bearer realm="termsearch"')
    assert missing.json() == {
        "type": "/problems/unauthorized",
        "title": "Unauthorized",
        "status": 401,
        "detail": "an API key is required: send X-API-Key or Authorization: Bearer",
    }
    wrong = client.get("/search", params={"q": "heart"}, headers={"X-API-Key": KEY[:-1]})
    assert (wrong.status_code, wrong.json()["detail"]) == (401, "invalid API key")
    assert client.get("/search", params={"q": "heart"}, headers={"X-API-Key": KEY}).status_code == 200
    assert client.get("/search", params={"q": "heart"}, headers={"Authorization": f"Bearer {OTHER_KEY}"}).status_code == 200
    assert client.get("/metrics").status_code == 401
    for public in ("/health", "/ready", "/openapi.json"):
        assert client.get(public).status_code == 200, public


def test_auth_needs_keys_of_16_characters() -> None:
    with pytest.raises(ValueError, match="needs TERMSEARCH_API__API_KEYS"):
        ApiSettings(auth_enabled=True)
    with pytest.raises(ValueError, match="at least 16 characters"):
        ApiSettings(auth_enabled=True, api_keys="short")


def test_rate_limit_per_client_is_429_with_retry_after(make_client) -> None:
    client = make_client(rate_limit_per_s=0.5, rate_limit_burst=2, auth_enabled=True, api_keys=f"{KEY},{OTHER_KEY}")
    first = {"X-API-Key": KEY}
    assert [client.get("/concepts/toy/T:2", headers=first).status_code for _ in range(2)] == [200, 200]
    limited = client.get("/concepts/toy/T:2", headers=first)
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "2")
    assert limited.json() == {
        "type": "/problems/rate-limited",
        "title": "Too many requests",
        "status": 429,
        "detail": "rate limit of 0.5 requests/s (burst 2) exceeded; retry after 2 s",
    }
    assert client.get("/concepts/toy/T:2", headers={"X-API-Key": OTHER_KEY}).status_code == 200  # its own bucket
    assert all(client.get("/health").status_code == 200 for _ in range(5))  # probes are never limited


def test_token_bucket_refills_at_its_rate() -> None:
    now = [0.0]
    buckets = TokenBuckets(rate=2.0, burst=3, max_clients=2, clock=lambda: now[0])
    assert [buckets.take("a") for _ in range(4)] == [0, 0, 0, 0.5]
    now[0] = 0.5  # one token back
    assert (buckets.take("a"), buckets.take("a")) == (0, 0.5)
    buckets.take("b"), buckets.take("c")  # "a" is forgotten beyond two clients
    assert buckets.take("a") == 0


FORMS = "https://forms.example.org"
EXPAND = "/fhir/ValueSet/$expand"


def _preflight(client: TestClient, origin: str, path: str = EXPAND):
    headers = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, x-api-key, authorization",
    }
    return client.options(path, headers=headers)


def test_cors_by_default_any_origin_without_credentials_and_before_the_key(make_client) -> None:
    client = make_client(auth_enabled=True, api_keys=KEY)
    preflight = _preflight(client, FORMS)  # a browser sends no key with a preflight
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "*"
    assert preflight.headers["access-control-allow-methods"] == "GET, HEAD, POST, PUT, DELETE"
    allowed = {h.strip().lower() for h in preflight.headers["access-control-allow-headers"].split(",")}
    assert {"authorization", "x-api-key", "content-type", "accept-language"} <= allowed
    assert "access-control-allow-credentials" not in preflight.headers
    params = {"url": "http://example.org/toy?fhir_vs", "filter": "fast heart"}
    answer = client.get(EXPAND, params=params, headers={"Origin": FORMS, "X-API-Key": KEY})
    assert (answer.status_code, answer.headers["access-control-allow-origin"]) == (200, "*")
    exposed = {h.strip() for h in answer.headers["access-control-expose-headers"].split(",")}
    assert exposed == {"Location", "Retry-After", "WWW-Authenticate", "X-Request-ID"}
    refused = client.get(EXPAND, params=params, headers={"Origin": FORMS})  # readable by the page
    assert (refused.status_code, refused.headers["access-control-allow-origin"]) == (401, "*")
    widget = client.get("/web/termsearch-autocomplete.js", headers={"Origin": FORMS, "X-API-Key": KEY})
    assert (widget.status_code, widget.headers["access-control-allow-origin"]) == (200, "*")


def test_cors_configured_origins_only(make_client) -> None:
    client = make_client(cors_origins=[FORMS])
    allowed = _preflight(client, FORMS, "/search")
    assert (allowed.status_code, allowed.headers["access-control-allow-origin"]) == (200, FORMS)
    assert "origin" in allowed.headers["vary"].lower()
    other = _preflight(client, "https://evil.example", "/search")
    assert other.status_code == 400 and "access-control-allow-origin" not in other.headers
    assert client.get("/health", headers={"Origin": FORMS}).headers["access-control-allow-origin"] == FORMS
    assert "access-control-allow-origin" not in client.get("/health", headers={"Origin": "https://evil.example"}).headers
    off = make_client(cors_origins=[])
    assert "access-control-allow-origin" not in off.get("/health", headers={"Origin": FORMS}).headers
    assert _preflight(off, FORMS).status_code == 405  # no CORS: OPTIONS is not served


def test_cors_origins_must_be_origins() -> None:
    with pytest.raises(ValueError, match="'https://forms.example.org/' is not an origin"):
        ApiSettings(cors_origins=["https://forms.example.org/"])


@pytest.mark.parametrize("kind", ["lifespan", "websocket"])
def test_middlewares_pass_other_scopes_through(built: Settings, kind: str) -> None:
    """Every middleware of the stack hands a scope that is not HTTP to the app untouched."""
    app = create_app(_with_api(built, auth_enabled=True, api_keys=KEY, rate_limit_per_s=1.0), encoder=FakeEncoder(32))
    layers, layer = [], app.build_middleware_stack()
    while (layer := getattr(layer, "app", None)) is not None:
        if isinstance(layer, HttpMiddleware):
            layers.append(layer)
    names = {type(layer).__name__ for layer in layers}
    assert names == {"ObserveMiddleware", "ApiKeyMiddleware", "RateLimitMiddleware", "TimeoutMiddleware",
                     "BodyLimitMiddleware", "HeadAsGet", "SecurityHeaders"}
    passed: list[tuple] = []

    async def inner(*call: object) -> None:
        passed.append(call)

    async def receive() -> dict:
        raise AssertionError("a middleware read a message that was not its own")

    async def send(message: dict) -> None:
        raise AssertionError("a middleware answered a message that was not its own")

    for layer in layers:
        layer.app = inner
        scope = {"type": kind, "path": "/search", "method": "HEAD", "headers": []}
        asyncio.run(layer(scope, receive, send))
        assert passed.pop() == (scope, receive, send) and passed == []
        assert scope == {"type": kind, "path": "/search", "method": "HEAD", "headers": []}, type(layer).__name__
