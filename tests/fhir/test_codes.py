"""CodeSystem/$lookup, CodeSystem/$validate-code and ValueSet/$validate-code: answers checked
against the toy records, negative validations as 200 result=false, errors as OperationOutcomes."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import TOY_VS, TX, outcome, out, parameters, resource
from tests.toy import TOY, TOYICD, toy_concepts

LOOKUP = "/fhir/CodeSystem/$lookup"
CS_VALIDATE = "/fhir/CodeSystem/$validate-code"
VS_VALIDATE = "/fhir/ValueSet/$validate-code"
TOY_CONCEPTS = {concept.code: concept for concept in toy_concepts()}


def properties(body: dict[str, Any], code: str) -> list[Any]:
    found = []
    for parts in out(body, "property"):
        named = {p["name"]: next(v for k, v in p.items() if k.startswith("value")) for p in parts}
        if named["code"] == code:
            found.append(named["value"])
    return found


def test_lookup_answers_display_designations_and_properties(client: TestClient) -> None:
    body = resource(client.get(LOOKUP, params={"system": TOY.uri, "code": "T:2"}), "Parameters")
    tachycardia = TOY_CONCEPTS["T:2"]
    assert out(body, "name") == [TOY.name]
    assert out(body, "version") == [TOY.version]
    assert out(body, "display") == [tachycardia.display]
    values = [{p["name"]: p for p in parts}["value"]["valueString"] for parts in out(body, "designation")]
    assert values == [d.text for d in tachycardia.designations]
    assert properties(body, "parent") == tachycardia.parents
    assert properties(body, "definition") == [d.text for d in tachycardia.definitions]
    assert properties(body, "inactive") == [False]
    children = resource(client.get(LOOKUP, params={"system": TOY.uri, "code": "T:1"}), "Parameters")
    assert properties(children, "child") == sorted(c.code for c in toy_concepts() if "T:1" in c.parents)


def test_lookup_by_post_coding_with_a_property_filter(client: TestClient) -> None:
    body = {"resourceType": "Parameters", "parameter": [
        {"name": "coding", "valueCoding": {"system": TOYICD.uri, "code": "I10"}},
        {"name": "property", "valueCode": "billable"},
        {"name": "property", "valueCode": "kind"},
    ]}
    answer = resource(client.post(LOOKUP, json=body), "Parameters")
    assert out(answer, "display") == ["Essential (primary) hypertension"]
    assert (properties(answer, "billable"), properties(answer, "kind")) == ([True], ["category"])
    assert out(answer, "designation") == [] and properties(answer, "parent") == []


@pytest.mark.parametrize(
    ("params", "status", "code", "tx_code", "text"),
    [
        ({"system": TOY.uri}, 400, "invalid", "invalid-data", "code: required (or coding)"),
        ({"code": "T:2"}, 400, "invalid", "invalid-data", "system: required"),
        ({"system": "http://example.org/none", "code": "T:2"}, 404, "not-found", "not-found",
         "code system 'http://example.org/none' is not loaded; loaded: http://example.org/toy, http://example.org/toyicd"),
        ({"system": TOY.uri, "code": "T:99"}, 404, "code-invalid", "invalid-code",
         f"code 'T:99' is not in {TOY.uri} version {TOY.version}"),
        ({"system": TOY.uri, "code": "T:2", "version": "1999"}, 404, "not-found", "not-found",
         f"version '1999' of {TOY.uri} is not loaded; loaded: {TOY.version}"),
    ],
)
def test_lookup_errors(client: TestClient, params: dict, status: int, code: str, tx_code: str, text: str) -> None:
    outcome(client.get(LOOKUP, params=params), status, code, tx_code, text)


def _result(response: Any) -> tuple[bool, dict[str, list[Any]]]:
    body = resource(response, "Parameters")
    named = {p["name"]: out(body, p["name"]) for p in body["parameter"]}
    return named["result"][0], named


def _issue_code(named: dict[str, list[Any]]) -> str:
    details = named["issues"][0]["issue"][0]["details"]
    assert details["coding"][0]["system"] == TX
    return details["coding"][0]["code"]


@pytest.mark.parametrize("display", [None, "Tachycardia", "fast HEART rate"])
def test_code_system_validate_code_accepts_a_code_with_any_of_its_labels(
    client: TestClient, display: str | None
) -> None:
    params = {"url": TOY.uri, "code": "T:2"} | ({"display": display} if display else {})
    result, named = _result(client.get(CS_VALIDATE, params=params))
    assert result is True
    assert named["display"] == ["Tachycardia"] and named["version"] == [TOY.version]


@pytest.mark.parametrize(
    ("params", "tx_code", "message"),
    [
        ({"url": TOY.uri, "code": "T:99"}, "invalid-code", f"unknown code 'T:99' in {TOY.uri} version {TOY.version}"),
        ({"url": TOY.uri, "code": "T:2", "display": "Slow heart"}, "invalid-display",
         f"wrong display 'Slow heart' for {TOY.uri}#T:2: it is 'Tachycardia'"),
        ({"url": TOY.uri, "code": "T:2", "version": "1999"}, "not-found",
         f"version '1999' of {TOY.uri} is not loaded; loaded: {TOY.version}"),
    ],
)
def test_code_system_validate_code_negative_answers_are_200(
    client: TestClient, params: dict, tx_code: str, message: str
) -> None:
    result, named = _result(client.get(CS_VALIDATE, params=params))
    assert result is False
    assert named["message"] == [message]
    assert _issue_code(named) == tx_code
    assert named["issues"][0]["issue"][0]["details"]["text"] == message


def test_inactive_code_validates_and_says_so(client: TestClient) -> None:
    result, named = _result(client.get(CS_VALIDATE, params={"url": TOY.uri, "code": "T:6"}))
    assert (result, named["inactive"]) == (True, [True])


def test_value_set_validate_code_follows_the_subtree(client: TestClient) -> None:
    subtree = f"{TOY.uri}?fhir_vs=isa/T:1"
    inside, _ = _result(client.get(VS_VALIDATE, params={"url": subtree, "system": TOY.uri, "code": "T:3"}))
    assert inside is True
    result, named = _result(client.get(VS_VALIDATE, params={"url": subtree, "system": TOY.uri, "code": "T:4"}))
    assert result is False and _issue_code(named) == "not-in-vs"
    assert named["message"] == [f"{TOY.uri}#T:4 is not in the value set {subtree}"]
    body = parameters({"url": {"valueUri": TOY_VS}, "coding": {"valueCoding": {"system": TOYICD.uri, "code": "I10"}}})
    result, named = _result(client.post(VS_VALIDATE, json=body))
    assert result is False and _issue_code(named) == "not-in-vs"


@pytest.mark.parametrize(
    ("path", "params", "status", "code", "tx_code", "text"),
    [
        (VS_VALIDATE, {"system": TOY.uri, "code": "T:2"}, 400, "invalid", "invalid-data", "url: required"),
        (VS_VALIDATE, {"url": TOY_VS, "code": "T:2"}, 400, "invalid", "invalid-data", "system: required with code"),
        (CS_VALIDATE, {"code": "T:2"}, 400, "invalid", "invalid-data", "url: required (or a coding with a system)"),
        (CS_VALIDATE, {"url": "http://example.org/none", "code": "T:2"}, 404, "not-found", "not-found",
         "code system 'http://example.org/none' is not loaded; loaded: http://example.org/toy, http://example.org/toyicd"),
    ],
)
def test_validate_code_errors(
    client: TestClient, path: str, params: dict, status: int, code: str, tx_code: str, text: str
) -> None:
    outcome(client.get(path, params=params), status, code, tx_code, text)
