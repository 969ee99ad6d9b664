"""Explicit value sets: a ValueSet's compose (concept lists, filters, excludes, imports) passed
inline as ``valueSet`` or found among ``tx-resource`` s by ``url``, for $expand and $validate-code."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import outcome, resource
from tests.toy import TOY, TOYICD

CARDIO = {"resourceType": "ValueSet", "url": "http://example.org/vs/cardio", "version": "1", "status": "active"}


def _vs(compose: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {**CARDIO, **more, "compose": compose}


def _post(client: TestClient, operation: str, *parameters: dict[str, Any]) -> Any:
    return client.post(f"/fhir/ValueSet/${operation}", json={"resourceType": "Parameters", "parameter": list(parameters)})


def _codes(body: dict[str, Any]) -> list[str]:
    return [entry["code"] for entry in body["expansion"].get("contains", [])]


@pytest.mark.parametrize(
    ("compose", "codes"),
    [
        ({"include": [{"system": TOY.uri, "concept": [{"code": "T:3"}, {"code": "T:2"}]}]}, ["T:2", "T:3"]),
        ({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:1"}]}]},
         ["T:1", "T:2", "T:3", "T:7"]),
        ({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "descendent-of", "value": "T:1"}]}],
          "exclude": [{"system": TOY.uri, "concept": [{"code": "T:7"}]}]}, ["T:2", "T:3"]),
        ({"include": [{"system": TOY.uri, "filter": [{"property": "code", "op": "regex", "value": "T:[45]"}]}]}, ["T:4", "T:5"]),
        ({"include": [{"system": TOYICD.uri, "version": TOYICD.version,
                       "filter": [{"property": "kind", "op": "=", "value": "category"}]}]}, ["I10", "I21"]),
        ({"include": [{"system": TOYICD.uri, "filter": [{"property": "billable", "op": "=", "value": "true"}]}]}, ["I10", "I21.0"]),
    ],
)
def test_an_inline_compose_expands_to_its_codes(client: TestClient, compose: dict[str, Any], codes: list[str]) -> None:
    body = resource(_post(client, "expand", {"name": "valueSet", "resource": _vs(compose)}), "ValueSet")
    assert sorted(_codes(body)) == codes
    assert (body["url"], body["version"], body["expansion"]["total"]) == (CARDIO["url"], "1", len(codes))


def test_a_filter_ranks_within_the_compose_only(client: TestClient) -> None:
    compose = {"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:1"}]}]}
    body = resource(
        _post(client, "expand", {"name": "valueSet", "resource": _vs(compose)}, {"name": "filter", "valueString": "hearing loss"}),
        "ValueSet",
    )
    assert "T:4" not in _codes(body)  # Hearing impairment is outside the value set
    fast = resource(
        _post(client, "expand", {"name": "valueSet", "resource": _vs(compose)}, {"name": "filter", "valueString": "fast heart"}),
        "ValueSet",
    )
    assert _codes(fast)[0] == "T:2"


def test_a_url_is_found_among_tx_resources_and_imports_resolve(client: TestClient) -> None:
    heart = _vs({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:1"}]}]},
                url="http://example.org/vs/heart")
    fast_only = _vs({"include": [{"valueSet": ["http://example.org/vs/heart"], "system": TOY.uri,
                                  "concept": [{"code": "T:2"}, {"code": "T:4"}]}]})
    response = _post(
        client, "expand",
        {"name": "url", "valueUri": CARDIO["url"]},
        {"name": "tx-resource", "resource": heart},
        {"name": "tx-resource", "resource": fast_only},
    )
    assert _codes(resource(response, "ValueSet")) == ["T:2"]  # T:4 is not in the imported value set


def test_validate_code_against_an_inline_value_set(client: TestClient) -> None:
    compose = {"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:1"}]}]}
    inside = resource(_post(client, "validate-code", {"name": "valueSet", "resource": _vs(compose)},
                            {"name": "system", "valueUri": TOY.uri}, {"name": "code", "valueCode": "T:2"}), "Parameters")
    assert {"name": "result", "valueBoolean": True} in inside["parameter"]
    outside = resource(_post(client, "validate-code", {"name": "valueSet", "resource": _vs(compose)},
                             {"name": "system", "valueUri": TOY.uri}, {"name": "code", "valueCode": "T:4"}), "Parameters")
    assert {"name": "result", "valueBoolean": False} in outside["parameter"]


@pytest.mark.parametrize(
    ("compose", "status", "code", "tx_code", "text"),
    [
        ({"include": []}, 400, "invalid", "invalid-data", "valueSet.compose.include: at least one include is required"),
        ({"include": [{"system": "http://example.org/nope"}]}, 404, "not-found", "not-found",
         f"code system 'http://example.org/nope' is not loaded; loaded: {TOY.uri}, {TOYICD.uri}"),
        ({"include": [{"system": TOY.uri, "concept": [{"code": "T:99"}]}]}, 404, "code-invalid", "invalid-code",
         f"valueSet.compose.include[0].concept[0].code: 'T:99' is not in {TOY.uri} version {TOY.version}"),
        ({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "generalizes", "value": "T:1"}]}]},
         400, "invalid", "invalid-data",
         "valueSet.compose.include[0].filter[0].op: 'generalizes' on concept is not supported (is-a, descendent-of, is-not-a, =, in, not-in, regex)"),
        ({"include": [{"system": TOY.uri}, {"system": TOYICD.uri}]}, 400, "invalid", "invalid-data",
         f"compose: a value set over more than one code system ({TOY.uri}, {TOYICD.uri}) is not supported"),
    ],
)
def test_a_bad_compose_is_refused_naming_the_element(
    client: TestClient, compose: dict[str, Any], status: int, code: str, tx_code: str, text: str
) -> None:
    outcome(_post(client, "expand", {"name": "valueSet", "resource": _vs(compose)}), status, code, tx_code, text)


def test_loaded_code_systems_are_read_and_searched(client: TestClient) -> None:
    toy = resource(client.get("/fhir/CodeSystem/toy"), "CodeSystem")
    assert (toy["url"], toy["version"], toy["content"], toy["count"]) == (TOY.uri, TOY.version, "not-present", 8)
    found = resource(client.get("/fhir/CodeSystem", params={"url": TOYICD.uri}), "Bundle")
    assert found["total"] == 1 and found["entry"][0]["resource"]["id"] == "toyicd"
    none = resource(client.get("/fhir/CodeSystem", params={"url": TOY.uri, "version": "1999"}), "Bundle")
    assert none["total"] == 0 and "entry" not in none
    outcome(client.get("/fhir/CodeSystem/nope"), 404, "not-found", "not-found", "CodeSystem/nope is unknown; loaded: toy, toyicd")
    assert client.get("/fhir/CodeSystem/$lookup", params={"system": TOY.uri, "code": "T:2"}).status_code == 200
