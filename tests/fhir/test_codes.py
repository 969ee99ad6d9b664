"""CodeSystem/$lookup: answers checked against the toy records, errors as OperationOutcomes
($validate-code: test_validate.py)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import out, outcome, resource
from tests.toy import TOY, TOYICD, toy_concepts

LOOKUP = "/fhir/CodeSystem/$lookup"
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
    own = [d.text for d in tachycardia.designations]
    assert values == own and own[0] == tachycardia.display  # the release's (the display as preferred); a supplement's when asked
    uses = [{p["name"]: p for p in parts}["use"]["valueCoding"]["code"] for parts in out(body, "designation")]
    assert uses[0] == "preferredForLanguage" and (out(body, "code"), out(body, "system")) == (["T:2"], [TOY.uri])
    assert out(body, "definition") == [tachycardia.definitions[0].text] and "abstract" not in dict(
        (p["name"], p) for p in body["parameter"]
    )
    assert properties(body, "parent") == tachycardia.parents
    assert properties(body, "inactive") == [False]
    bundle = client.app.state.service.bundle
    lent = [d for d in bundle.knowledge_labels(bundle.concept_index("toy", "T:2"))]
    supplement = f"urn:termsearch:supplement:{lent[0].knowledge}"
    body = resource(client.get(LOOKUP, params={"system": TOY.uri, "code": "T:2", "useSupplement": supplement}), "Parameters")
    values = [{p["name"]: p for p in parts}["value"]["valueString"] for parts in out(body, "designation")]
    assert values == own + [d.text for d in lent if d.knowledge == lent[0].knowledge] and "tachy" in values
    unknown = client.get(LOOKUP, params={"system": TOY.uri, "code": "T:2", "useSupplement": "urn:termsearch:supplement:x"})
    assert unknown.status_code == 404 and "supplement 'urn:termsearch:supplement:x' is unknown" in unknown.text
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


def test_lookup_property_star_answers_every_property(client: TestClient) -> None:
    every = resource(client.get(LOOKUP, params={"system": TOYICD.uri, "code": "I10"}), "Parameters")
    star = resource(client.get(LOOKUP, params={"system": TOYICD.uri, "code": "I10", "property": "*"}), "Parameters")
    assert star["parameter"] == every["parameter"]
    assert (properties(star, "billable"), properties(star, "kind"), properties(star, "parent")) == ([True], ["category"], ["I00-I99"])
    assert out(star, "designation")


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
