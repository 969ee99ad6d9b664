"""Explicit value sets: a ValueSet's compose (concept lists, filters, excludes, imports) passed
inline as ``valueSet`` or found among ``tx-resource`` s by ``url``, for $expand and $validate-code."""

from __future__ import annotations

import json
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
    ("compose", "status", "code", "tx_code", "text", "expression"),
    [
        ({"include": []}, 400, "invalid", "vs-invalid", "valueSet.compose.include: at least one include is required",
         "ValueSet.compose.include"),
        ({"include": [{"system": "http://example.org/nope"}]}, 404, "not-found", "not-found",
         f"code system 'http://example.org/nope' is not loaded; loaded: {TOY.uri}, {TOYICD.uri}", None),
        ({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "generalizes", "value": "T:1"}]}]},
         400, "invalid", "vs-invalid",
         "valueSet.compose.include[0].filter[0].op: 'generalizes' on concept is not supported "
         "(is-a, descendent-of, is-not-a, child-of, =, in, not-in, regex)", "ValueSet.compose.include[0].filter[0].op"),
        ({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a"}]}]}, 400, "invalid", "vs-invalid",
         "valueSet.compose.include[0].filter[0]: expected property, op and value strings", "ValueSet.compose.include[0].filter[0]"),
        ({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:999"}]}]},
         400, "invalid", "vs-invalid",
         f"valueSet.compose.include[0].filter[0].value: 'T:999' is not in {TOY.uri} version {TOY.version}",
         "ValueSet.compose.include[0].filter[0].value"),  # an unknown code a filter names: the element, not a 404
    ],
)
def test_a_bad_compose_is_refused_naming_the_element(
    client: TestClient, compose: dict[str, Any], status: int, code: str, tx_code: str, text: str, expression: str | None
) -> None:
    body = resource(_post(client, "expand", {"name": "valueSet", "resource": _vs(compose)}), "OperationOutcome", status)
    [found] = body["issue"]
    assert (found["code"], found["details"]["coding"][0]["code"], found["details"]["text"]) == (code, tx_code, text)
    assert found.get("expression") == ([expression] if expression else None)


def test_a_value_set_may_draw_on_two_code_systems(client: TestClient) -> None:
    compose = {"include": [{"system": TOY.uri, "concept": [{"code": "T:2"}]}, {"system": TOYICD.uri, "concept": [{"code": "R00.0"}]}]}
    given = {"name": "valueSet", "resource": _vs(compose)}
    body = resource(_post(client, "expand", given), "ValueSet")
    assert sorted((e["system"], e["code"]) for e in body["expansion"]["contains"]) == [(TOY.uri, "T:2"), (TOYICD.uri, "R00.0")]
    used = [p["valueUri"] for p in body["expansion"]["parameter"] if p["name"] == "used-codesystem"]
    assert used == [f"{TOY.uri}|{TOY.version}", f"{TOYICD.uri}|{TOYICD.version}"]
    ranked = resource(_post(client, "expand", given, {"name": "filter", "valueString": "fast heart"}), "ValueSet")
    assert {e["code"] for e in ranked["expansion"]["contains"]} <= {"T:2", "R00.0"}
    for system, code, valid in ((TOYICD.uri, "R00.0", True), (TOYICD.uri, "I10", False), (TOY.uri, "T:3", False)):
        coding = {"name": "coding", "valueCoding": {"system": system, "code": code}}
        answer = resource(_post(client, "validate-code", given, coding), "Parameters")
        assert {"name": "result", "valueBoolean": valid} in answer["parameter"]


def test_a_listed_code_the_system_lacks_is_left_out(client: TestClient) -> None:
    compose = {"include": [{"system": TOY.uri, "concept": [{"code": "T:99"}, {"code": "T:2"}]}]}
    assert _codes(resource(_post(client, "expand", {"name": "valueSet", "resource": _vs(compose)}), "ValueSet")) == ["T:2"]


def test_loaded_code_systems_are_read_and_searched(client: TestClient) -> None:
    toy = resource(client.get("/fhir/CodeSystem/toy"), "CodeSystem")
    assert (toy["url"], toy["version"], toy["content"], toy["count"]) == (TOY.uri, TOY.version, "not-present", 8)
    assert [p["code"] for p in toy["property"]] == ["parent", "child", "inactive", "notSelectable"]
    found = resource(client.get("/fhir/CodeSystem", params={"url": TOYICD.uri}), "Bundle")
    assert found["total"] == 1 and found["entry"][0]["resource"]["id"] == "toyicd"
    marked = {p["code"]: p["type"] for p in found["entry"][0]["resource"]["property"]}  # it marks billable codes
    assert (marked["kind"], marked["billable"], marked["notSelectable"]) == ("code", "boolean", "boolean")
    none = resource(client.get("/fhir/CodeSystem", params={"url": TOY.uri, "version": "1999"}), "Bundle")
    assert none["total"] == 0 and "entry" not in none
    outcome(client.get("/fhir/CodeSystem/nope"), 404, "not-found", "not-found", "CodeSystem/nope is unknown; loaded: toy, toyicd")
    assert client.get("/fhir/CodeSystem/$lookup", params={"system": TOY.uri, "code": "T:2"}).status_code == 200


HEART = {"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:1"}]}]}


def test_a_stored_value_set_is_read_searched_expanded_and_deleted(client: TestClient) -> None:
    stored = client.put("/fhir/ValueSet/heart", json=_vs(HEART, id="heart"))
    assert (stored.status_code, stored.headers["location"]) == (201, "ValueSet/heart")
    assert client.put("/fhir/ValueSet/heart", json=_vs(HEART)).status_code == 200  # replaced
    read = resource(client.get("/fhir/ValueSet/heart"), "ValueSet")
    assert (read["id"], read["url"], read["compose"]) == ("heart", CARDIO["url"], HEART)
    found = resource(client.get("/fhir/ValueSet", params={"url": CARDIO["url"], "version": "1"}), "Bundle")
    assert [e["resource"]["id"] for e in found["entry"]] == ["heart"]
    expanded = resource(client.get("/fhir/ValueSet/$expand", params={"url": CARDIO["url"]}), "ValueSet")
    assert sorted(_codes(expanded)) == ["T:1", "T:2", "T:3", "T:7"]
    pinned = resource(client.get("/fhir/ValueSet/$expand", params={"url": f"{CARDIO['url']}|1", "filter": "fast heart"}), "ValueSet")
    assert _codes(pinned)[0] == "T:2"
    checked = resource(client.get("/fhir/ValueSet/$validate-code", params={"url": CARDIO["url"], "system": TOY.uri, "code": "T:4"}), "Parameters")
    assert {"name": "result", "valueBoolean": False} in checked["parameter"]
    created = client.post("/fhir/ValueSet", json={**_vs(HEART), "url": "http://example.org/vs/other"})
    assert created.status_code == 201 and created.headers["location"].startswith("ValueSet/")
    assert client.delete("/fhir/ValueSet/heart").status_code == 204
    outcome(client.get("/fhir/ValueSet/heart"), 404, "not-found", "not-found", "ValueSet/heart is unknown")


@pytest.mark.parametrize(
    ("path", "body", "status", "text"),
    [
        ("/fhir/ValueSet/a_b", _vs(HEART), 400, "id: 'a_b' is not a FHIR id (1 to 64 letters, digits, '-' and '.')"),
        ("/fhir/ValueSet/one", _vs(HEART, id="two"), 400, "id: the resource's id 'two' is not the id in the URL 'one'"),
        ("/fhir/ValueSet/one", {"resourceType": "CodeSystem"}, 400, "body: expected a ValueSet resource"),
        ("/fhir/ValueSet/one", {**_vs(HEART), "url": None}, 400, "url: a stored ValueSet needs a canonical url"),
        ("/fhir/ValueSet/one", _vs({"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a"}]}]}),
         400, "ValueSet.compose.include[0].filter[0]: expected property, op and value strings"),
    ],
)
def test_a_bad_value_set_is_never_stored(client: TestClient, path: str, body: dict[str, Any], status: int, text: str) -> None:
    response = client.put(path, json=body)
    assert (response.status_code, response.json()["issue"][0]["details"]["text"]) == (status, text)
    assert resource(client.get("/fhir/ValueSet"), "Bundle")["total"] == 0


def test_one_url_and_version_is_one_stored_resource(client: TestClient) -> None:
    compose = {"include": [{"system": TOY.uri, "concept": [{"code": "T:2"}]}]}
    assert client.put("/fhir/ValueSet/first", json={**CARDIO, "id": "first", "compose": compose}).status_code == 201
    twice = client.put("/fhir/ValueSet/second", json={**CARDIO, "id": "second", "compose": compose})
    issue = twice.json()["issue"][0]
    detail = "url: ValueSet/first is already http://example.org/vs/cardio|1; change that one, or give this one another version"
    assert (twice.status_code, issue["code"], issue["details"]["text"]) == (409, "duplicate", detail)
    assert client.get("/fhir/ValueSet/second").status_code == 404
    again = client.put("/fhir/ValueSet/first", json={**CARDIO, "id": "first", "compose": compose, "title": "Cardio"})
    assert again.status_code == 200  # the same resource, changed
    other = client.put("/fhir/ValueSet/second", json={**CARDIO, "id": "second", "version": "2", "compose": compose})
    assert other.status_code == 201


def test_decimals_are_echoed_as_given(client: TestClient) -> None:
    """FHIR keeps a decimal's precision: 1.10 is not 1.1 (issue 36: they were echoed as floats)."""
    weight = {"url": "http://hl7.org/fhir/StructureDefinition/itemWeight", "valueDecimal": "WEIGHT"}
    compose = {"include": [{"system": TOY.uri, "concept": [{"code": "T:2", "extension": [weight]}]}]}
    body = json.dumps({**CARDIO, "id": "weights", "compose": compose}).replace('"WEIGHT"', "1.10")
    stored = client.put("/fhir/ValueSet/weights", content=body, headers={"Content-Type": "application/fhir+json"})
    assert stored.status_code == 201 and '"valueDecimal":1.10' in stored.text
    assert '"valueDecimal":1.10' in client.get("/fhir/ValueSet/weights").text
    expanded = client.get("/fhir/ValueSet/$expand", params={"url": CARDIO["url"]})
    assert expanded.status_code == 200 and '"valueDecimal":1.10' in expanded.text
    given = [{"name": "valueSet", "resource": {**CARDIO, "compose": compose}}]
    inline = json.dumps({"resourceType": "Parameters", "parameter": given})
    posted = client.post("/fhir/ValueSet/$expand", content=inline.replace('"WEIGHT"', "0.100000000000000000001"),
                         headers={"Content-Type": "application/fhir+json"})  # fmt: skip
    assert '"valueDecimal":0.100000000000000000001' in posted.text
