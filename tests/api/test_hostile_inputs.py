"""Hostile input (issue 17): lone surrogates, deep nesting, type confusion, repeated parameters,
wrong media types and methods each get one exact 4xx naming the problem, in problem JSON or,
under /fhir, an OperationOutcome; HEAD works where GET does; every answer has security headers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import TOY_VS, outcome

EXPAND = "/fhir/ValueSet/$expand"
LOOKUP = "/fhir/CodeSystem/$lookup"
INVALID = ("invalid", "invalid-data")
JSON = {"content-type": "application/json"}
FHIR = {"content-type": "application/fhir+json"}


def problem(response: Any, status: int, detail: str, param: str | None, slug: str = "invalid-parameter") -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    titles = {"invalid-parameter": "Invalid parameter", "malformed-body": "Malformed request body",
              "unsupported-media-type": "Unsupported media type", "method-not-allowed": "Method not allowed"}
    expected = {"type": f"/problems/{slug}", "title": titles[slug], "status": status, "detail": detail}
    assert response.json() == expected | ({"param": param} if param else {})


def raw(value: Any) -> bytes:
    """JSON with lone surrogates written as escapes (as a hostile client sends them)."""
    return json.dumps(value, ensure_ascii=True).encode()


def test_a_huge_integer_is_refused_not_a_crash(client: TestClient) -> None:
    huge = b'{"resourceType": "Parameters", "parameter": [{"name": "count", "valueInteger": ' + b"9" * 5000 + b"}]}"
    outcome(client.post(EXPAND, content=huge, headers=FHIR), 400, *INVALID, "body: an integer of 5000 digits, more than 100")
    body = b'{"target_system": "toy", "k": ' + b"1" * 4301 + b', "concepts": []}'
    problem(client.post("/match", content=body, headers=JSON), 400, "body: an integer of 4301 digits, more than 100", "body", "malformed-body")


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/match", {"target_system": "toy", "concepts": [{"id": "a", "labels": ["ok", "x\ud800"]}]}, "concepts.0.labels.1"),
        ("/match", {"target_system": "toy", "concepts": [{"id": "\ud800", "labels": ["fast"]}]}, "concepts.0.id"),
        ("/match", {"target_system": "\udfff", "concepts": [{"id": "a", "labels": ["fast"]}]}, "target_system"),
        ("/evaluate", {"system": "toy", "items": [{"query": "\ud800", "gold": ["T:1"]}]}, "items.0.query"),
    ],
)
def test_a_lone_surrogate_in_a_rest_body_is_refused_naming_its_field(client: TestClient, path: str, body: dict, param: str) -> None:
    at = 1 if param.endswith("labels.1") else 0
    detail = f"{param}: not valid Unicode text (a lone surrogate at character {at})"
    problem(client.post(path, content=raw(body), headers=JSON), 422, detail, param)


@pytest.mark.parametrize(
    ("path", "body", "param", "at"),
    [
        ("/feedback", {"query": "fast\u0000heart", "action": "abandoned", "surface": "widget"}, "query", 4),
        ("/match", {"target_system": "toy", "concepts": [{"id": "a", "labels": ["\u0000"]}]}, "concepts.0.labels.0", 0),
        ("/evaluate", {"system": "toy", "run_name": "run\u0000", "items": [{"query": "fast", "gold": ["T:2"]}]}, "run_name", 3),
    ],
)
def test_a_nul_character_in_a_body_is_refused_naming_its_field(
    client: TestClient, path: str, body: dict, param: str, at: int
) -> None:
    """No text here means a NUL, and PostgreSQL cannot store one (before, a 500 there)."""
    detail = f"{param}: holds a NUL character (U+0000) at character {at}"
    problem(client.post(path, content=raw(body), headers=JSON), 422, detail, param)


def test_a_lone_surrogate_in_a_fhir_filter_is_an_operation_outcome(client: TestClient) -> None:
    body = {"resourceType": "Parameters", "parameter": [{"name": "url", "valueUri": TOY_VS}, {"name": "filter", "valueString": "a\ud800"}]}
    text = "parameter.1.valueString: not valid Unicode text (a lone surrogate at character 1)"
    outcome(client.post(EXPAND, content=raw(body), headers=FHIR), 400, *INVALID, text)


def test_deep_nesting_is_refused_not_a_crash(client: TestClient) -> None:
    deep = b"[" * 20_000 + b"]" * 20_000
    outcome(client.post(EXPAND, content=deep, headers=FHIR), 400, *INVALID, "body: nested deeper than 32 levels")
    problem(client.post("/match", content=deep, headers=JSON), 400, "body: nested deeper than 32 levels", "body", "malformed-body")
    moderate = b'{"a":' * 40 + b"1" + b"}" * 40  # within Python's recursion limit, over ours
    outcome(client.post(EXPAND, content=moderate, headers=FHIR), 400, *INVALID, "body: nested deeper than 32 levels")


@pytest.mark.parametrize(
    ("parameters", "text"),
    [
        (5, "parameter: expected a list of parameters (got an integer)"),
        ([{"name": "url", "valueUri": 5}], "url: valueUri must be a string (got an integer)"),
        ([{"name": "url", "valueUri": TOY_VS}, {"name": "offset", "valueInteger": 10**30}],
         f"offset: valueInteger must be a 32-bit integer (got {10**30})"),
        ([{"name": "url", "valueUri": TOY_VS}, {"name": "activeOnly", "valueBoolean": "yes"}],
         "activeOnly: valueBoolean must be true or false (got a string)"),
        ([{"name": "coding", "valueCoding": [1]}], "coding: valueCoding must be an object (got a list)"),
    ],
)
def test_fhir_parameter_types_are_checked(client: TestClient, parameters: Any, text: str) -> None:
    body = {"resourceType": "Parameters", "parameter": parameters}
    outcome(client.post(EXPAND, json=body, headers=FHIR), 400, *INVALID, text)


@pytest.mark.parametrize(
    ("coding", "text"),
    [
        ({"system": ["x"], "code": "T:1"}, "coding.system: expected a string (got a list)"),
        ({"system": {"a": 1}, "code": "T:1"}, "coding.system: expected a string (got an object)"),
        ({"system": "urn:toy", "code": "T:1", "display": 7}, "coding.display: expected a string (got an integer)"),
    ],
)
def test_coding_elements_of_the_wrong_type_are_refused(client: TestClient, coding: dict, text: str) -> None:
    body = {"resourceType": "Parameters", "parameter": [{"name": "coding", "valueCoding": coding}]}
    outcome(client.post(LOOKUP, json=body), 400, *INVALID, text)


def test_repeated_rest_parameters_are_refused_naming_them(client: TestClient) -> None:
    problem(client.get("/search?q=fast&k=3&k=5"), 422, "k: given 2 times, allowed once", "k")
    problem(client.get("/concepts/toy/T:1/similar?mode=dense&mode=lexical"), 422, "mode: given 2 times, allowed once", "mode")
    text = "url: given 2 times, allowed once"
    outcome(client.get(EXPAND, params=[("url", TOY_VS), ("url", TOY_VS)]), 400, *INVALID, text)


def test_invalid_json_and_wrong_media_types(client: TestClient) -> None:
    detail = "body: not valid JSON: Expecting property name enclosed in double quotes (line 1, column 26)"
    problem(client.post("/match", content=b'{"target_system": "toy", }', headers=JSON), 400, detail, "body", "malformed-body")
    detail = "content-type: expected application/json or application/fhir+json (got 'text/plain')"
    problem(client.post("/match", content=b"{}", headers={"content-type": "text/plain"}), 415, detail, "content-type",
            "unsupported-media-type")
    response = client.post(EXPAND, content=b"url=x", headers={"content-type": "application/x-www-form-urlencoded"})
    text = "content-type: expected application/json or application/fhir+json (got 'application/x-www-form-urlencoded')"
    outcome(response, 415, "not-supported", "invalid-data", text)


def test_405_names_the_allowed_methods_and_head_works_on_get_routes(client: TestClient) -> None:
    refused = client.delete("/search")
    problem(refused, 405, "DELETE is not allowed here; allowed: GET, HEAD", None, "method-not-allowed")
    assert refused.headers["allow"] == "GET, HEAD"
    assert client.get("/match").headers["allow"] == "POST"
    for path in ("/health", "/search?q=fast", "/fhir/metadata"):
        head, get = client.head(path), client.get(path)
        assert (head.status_code, head.content) == (200, b"")
        assert head.headers["content-type"] == get.headers["content-type"]


def test_security_headers_on_data_and_pages(client: TestClient) -> None:
    for path in ("/health", "/nowhere", "/fhir/metadata"):
        headers = client.get(path).headers
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    page = client.get("/")
    # its own scripts keep working; nothing loads from another origin
    assert page.headers["content-security-policy"] == "default-src 'self' 'unsafe-inline' data: blob:; frame-ancestors 'none'"
    assert page.headers["x-frame-options"] == "DENY"
