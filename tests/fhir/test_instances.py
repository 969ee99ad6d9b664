"""The operations on one resource: ``ValueSet/{id}/$expand`` and ``$validate-code`` on a stored
ValueSet, ``CodeSystem/{id}/$lookup``, ``$validate-code`` and ``$subsumes`` on a loaded code system
(the calls fhirpy's ``execute``, fhir-kit-client's ``operation({id})`` and HAPI's ``onInstance``
make). Each answers as the type-level operation given the instance's url or system does."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import TOY_VS, out, outcome, parameters, resource
from tests.toy import TOY, TOYICD

HEART = {
    "resourceType": "ValueSet", "id": "heart", "url": "http://example.org/vs/heart", "version": "1", "status": "active",
    "compose": {"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:1"}]}]},
}


@pytest.fixture
def heart(client: TestClient) -> TestClient:
    """The toy client with ValueSet/heart stored (T:1 and below)."""
    assert client.put("/fhir/ValueSet/heart", json=HEART).status_code == 201
    return client


def _codes(body: dict[str, Any]) -> list[str]:
    return [entry["code"] for entry in body["expansion"].get("contains", [])]


def _same(instance: dict[str, Any], typed: dict[str, Any]) -> None:
    """Two Parameters or expansions alike but for the expansion's identifier and timestamp."""
    for body in (instance, typed):
        body.get("expansion", {}).pop("identifier", None)
        body.get("expansion", {}).pop("timestamp", None)
    assert instance == typed


def test_a_stored_value_set_expands_on_its_instance_as_by_its_url(heart: TestClient) -> None:
    instance = resource(heart.get("/fhir/ValueSet/heart/$expand"), "ValueSet")
    assert _codes(instance) == ["T:1", "T:2", "T:3", "T:7"]
    assert (instance["id"], instance["url"], instance["version"]) == ("heart", HEART["url"], "1")
    _same(instance, resource(heart.get("/fhir/ValueSet/$expand", params={"url": HEART["url"]}), "ValueSet"))
    posted = heart.post("/fhir/ValueSet/heart/$expand", json=parameters({"filter": {"valueString": "fast heart"}}))
    assert _codes(resource(posted, "ValueSet"))[0] == "T:2"
    paged = resource(heart.get("/fhir/ValueSet/heart/$expand", params={"count": 2, "offset": 1}), "ValueSet")
    assert (_codes(paged), paged["expansion"]["total"]) == (["T:2", "T:3"], 4)


def test_a_stored_value_set_validates_codes_on_its_instance(heart: TestClient) -> None:
    body = resource(heart.get("/fhir/ValueSet/heart/$validate-code", params={"system": TOY.uri, "code": "T:2"}), "Parameters")
    assert (out(body, "result"), out(body, "display")) == ([True], ["Tachycardia"])
    posted = heart.post(
        "/fhir/ValueSet/heart/$validate-code", json=parameters({"coding": {"valueCoding": {"system": TOY.uri, "code": "T:4"}}})
    )
    body = resource(posted, "Parameters")
    assert out(body, "result") == [False]
    assert out(body, "message") == [f"{TOY.uri}#T:4 is not in the value set {HEART['url']}|1"]
    typed = heart.post(
        "/fhir/ValueSet/$validate-code",
        json=parameters({"url": {"valueUri": HEART["url"]}, "coding": {"valueCoding": {"system": TOY.uri, "code": "T:4"}}}),
    )
    _same(body, resource(typed, "Parameters"))


def test_the_instance_is_the_stored_resource_not_the_newest_of_its_url(heart: TestClient) -> None:
    newer = HEART | {"id": "heart2", "version": "2", "compose": {"include": [{"system": TOY.uri, "concept": [{"code": "T:3"}]}]}}
    assert heart.put("/fhir/ValueSet/heart2", json=newer).status_code == 201
    assert _codes(resource(heart.get("/fhir/ValueSet/$expand", params={"url": HEART["url"]}), "ValueSet")) == ["T:3"]
    assert _codes(resource(heart.get("/fhir/ValueSet/heart/$expand"), "ValueSet")) == ["T:1", "T:2", "T:3", "T:7"]
    body = resource(heart.get("/fhir/ValueSet/heart/$expand", params={"url": f"{HEART['url']}|1"}), "ValueSet")
    assert body["version"] == "1"  # the instance's own canonical may be named


@pytest.mark.parametrize(
    ("path", "params", "status", "code", "tx_code", "text"),
    [
        ("/fhir/ValueSet/nothing/$expand", {}, 404, "not-found", "not-found", "ValueSet/nothing is unknown"),
        ("/fhir/ValueSet/nothing/$validate-code", {"system": TOY.uri, "code": "T:2"}, 404, "not-found", "not-found",
         "ValueSet/nothing is unknown"),
        ("/fhir/ValueSet/heart/$expand", {"url": TOY_VS}, 400, "invalid", "invalid-data",
         f"url: ValueSet/heart is {HEART['url']}|1, not {TOY_VS}"),
        ("/fhir/ValueSet/heart/$expand", {"valueSetVersion": "2"}, 400, "invalid", "invalid-data",
         f"valueSetVersion: ValueSet/heart is {HEART['url']}|1, not version '2'"),
        ("/fhir/ValueSet/heart/$validate-code", {"url": TOY_VS, "system": TOY.uri, "code": "T:2"}, 400, "invalid",
         "invalid-data", f"url: ValueSet/heart is {HEART['url']}|1, not {TOY_VS}"),
        ("/fhir/ValueSet/heart/$validate-code", {"system": TOY.uri}, 400, "invalid", "invalid-data",
         "code: required (or coding, or codeableConcept)"),
    ],
)
def test_value_set_instance_errors(
    heart: TestClient, path: str, params: dict, status: int, code: str, tx_code: str, text: str
) -> None:
    outcome(heart.get(path, params=params), status, code, tx_code, text)


def test_an_inline_value_set_is_refused_on_an_instance(heart: TestClient) -> None:
    body = {"resourceType": "Parameters", "parameter": [{"name": "valueSet", "resource": HEART}]}
    text = "valueSet: the operation is on ValueSet/heart; give no other value set"
    outcome(heart.post("/fhir/ValueSet/heart/$expand", json=body), 400, "invalid", "invalid-data", text)


def test_a_code_system_looks_up_on_its_instance_as_by_its_url(client: TestClient) -> None:
    instance = resource(client.get("/fhir/CodeSystem/toy/$lookup", params={"code": "T:2"}), "Parameters")
    typed = resource(client.get("/fhir/CodeSystem/$lookup", params={"system": TOY.uri, "code": "T:2"}), "Parameters")
    assert instance == typed and out(instance, "display") == ["Tachycardia"]
    posted = client.post("/fhir/CodeSystem/toyicd/$lookup", json=parameters({"coding": {"valueCoding": {"code": "I21"}}}))
    assert out(resource(posted, "Parameters"), "display") == ["Acute myocardial infarction"]


def test_a_code_system_validates_codes_on_its_instance(client: TestClient) -> None:
    body = resource(client.get("/fhir/CodeSystem/toy/$validate-code", params={"code": "T:2"}), "Parameters")
    assert (out(body, "result"), out(body, "system")) == ([True], [TOY.uri])
    body = resource(client.get("/fhir/CodeSystem/toy/$validate-code", params={"code": "I10"}), "Parameters")
    assert (out(body, "result"), out(body, "message")) == ([False], [f"unknown code 'I10' in {TOY.uri} version {TOY.version}"])
    posted = client.post(
        "/fhir/CodeSystem/toy/$validate-code", json=parameters({"coding": {"valueCoding": {"system": TOYICD.uri, "code": "I10"}}})
    )
    body = resource(posted, "Parameters")  # a coding of another system: an answer, as at type level
    assert (out(body, "result"), out(body, "message")) == ([False], [f"the coding's system {TOYICD.uri} is not {TOY.uri}"])


@pytest.mark.parametrize(
    ("path", "params", "status", "code", "tx_code", "text"),
    [
        ("/fhir/CodeSystem/nothing/$lookup", {"code": "T:2"}, 404, "not-found", "not-found",
         "CodeSystem/nothing is unknown; loaded: toy, toyicd"),
        ("/fhir/CodeSystem/nothing/$validate-code", {"code": "T:2"}, 404, "not-found", "not-found",
         "CodeSystem/nothing is unknown; loaded: toy, toyicd"),
        ("/fhir/CodeSystem/nothing/$subsumes", {"codeA": "T:1", "codeB": "T:2"}, 404, "not-found", "not-found",
         "CodeSystem/nothing is unknown; loaded: toy, toyicd"),
        ("/fhir/CodeSystem/toy/$lookup", {"system": TOYICD.uri, "code": "T:2"}, 400, "invalid", "invalid-data",
         f"system: CodeSystem/toy is {TOY.uri}, not {TOYICD.uri}"),
        ("/fhir/CodeSystem/toy/$validate-code", {"url": TOYICD.uri, "code": "T:2"}, 400, "invalid", "invalid-data",
         f"url: CodeSystem/toy is {TOY.uri}, not {TOYICD.uri}"),
        ("/fhir/CodeSystem/toy/$lookup", {"code": "T:99"}, 404, "code-invalid", "invalid-code",
         f"code 'T:99' is not in {TOY.uri} version {TOY.version}"),
    ],
)
def test_code_system_instance_errors(
    client: TestClient, path: str, params: dict, status: int, code: str, tx_code: str, text: str
) -> None:
    outcome(client.get(path, params=params), status, code, tx_code, text)


def test_a_coding_of_another_system_than_the_one_named_is_refused_by_lookup(client: TestClient) -> None:
    body = parameters({"coding": {"valueCoding": {"system": TOYICD.uri, "code": "I10"}}})
    text = f"coding.system: {TOYICD.uri} is not the system {TOY.uri}"
    outcome(client.post("/fhir/CodeSystem/toy/$lookup", json=body), 400, "invalid", "invalid-data", text)


def test_operations_are_never_read_as_ids_and_unknown_ones_are_no_route(client: TestClient) -> None:
    assert client.get("/fhir/CodeSystem/toy").json()["id"] == "toy"
    answer = client.get("/fhir/CodeSystem/$subsumes", params={"system": TOY.uri, "codeA": "T:1", "codeB": "T:2"})
    assert out(resource(answer, "Parameters"), "outcome") == ["subsumes"]
    for path in ("/fhir/CodeSystem/$frobnicate", "/fhir/CodeSystem/toy/$frobnicate", "/fhir/ValueSet/heart/$frobnicate"):
        outcome(client.get(path), 404, "not-found", "not-found", "no route serves this path")
    refused = client.delete("/fhir/CodeSystem/toy/$lookup")
    assert refused.status_code == 405 and set(refused.headers["allow"].split(", ")) >= {"GET", "POST"}
