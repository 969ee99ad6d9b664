"""Codeable validation: the implicit value set of a system's billable codes
(``{system}?fhir_vs=billable``) holds only what a claim or form may record; ``$validate-code``
says of a chapter, block, category or subcategory that is not billable what it is, and
``$expand`` lists only billable codes. Over the toy ICD (I00-I99 chapter, I10 billable category,
I21 category, I21.0 billable code, R00.0 of no kind); ICD-10-CM itself: test_billable_icd10cm.py."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import TOYICD_VS, out, outcome, parameters, resource
from tests.toy import TOY, TOYICD

BILLABLE = f"{TOYICD.uri}?fhir_vs=billable"
VS_VALIDATE = "/fhir/ValueSet/$validate-code"


def _validated(client: TestClient, code: str, **more: str) -> tuple[bool, list[str], list[tuple[str, str, str]]]:
    """result, message and (severity, issue type, tx-issue-type) of each issue."""
    body = resource(client.get(VS_VALIDATE, params={"url": BILLABLE, "system": TOYICD.uri, "code": code, **more}), "Parameters")
    issues = out(body, "issues")[0]["issue"] if out(body, "issues") else []
    found = [(i["severity"], i["code"], i["details"]["coding"][0]["code"]) for i in issues]
    return out(body, "result")[0], out(body, "message"), found


@pytest.mark.parametrize("code", ["I10", "I21.0"])
def test_a_billable_code_is_valid(client: TestClient, code: str) -> None:
    assert _validated(client, code) == (True, [], [])


@pytest.mark.parametrize(
    ("code", "what"),
    [
        ("I21", "is a category, not a billable code (not selectable), so not in the value set {vs}; "
                "record a billable code below it"),
        ("I00-I99", "is a chapter, not a billable code (not selectable), so not in the value set {vs}; "
                    "record a billable code below it"),
        ("R00.0", "is not a billable code (not selectable), so not in the value set {vs}"),  # no kind, nothing below it
    ],
)
def test_a_code_that_is_not_billable_is_named_as_what_it_is(client: TestClient, code: str, what: str) -> None:
    message = f"{TOYICD.uri}#{code} {what.format(vs=BILLABLE)}"
    assert _validated(client, code) == (False, [message], [("error", "code-invalid", "not-in-vs")])
    assert _validated(client, code, abstract="true")[0] is False  # not billable, whatever the context allows


def test_the_whole_system_still_holds_every_code(client: TestClient) -> None:
    body = resource(client.get(VS_VALIDATE, params={"url": TOYICD_VS, "system": TOYICD.uri, "code": "I21"}), "Parameters")
    assert out(body, "result") == [True]


def test_a_codeable_concept_is_valid_by_its_billable_coding(client: TestClient) -> None:
    concept = {"coding": [{"system": TOYICD.uri, "code": "I21"}, {"system": TOYICD.uri, "code": "I21.0"}]}
    given = {"url": {"valueUri": BILLABLE}, "codeableConcept": {"valueCodeableConcept": concept}}
    body = resource(client.post(VS_VALIDATE, json=parameters(given)), "Parameters")
    assert (out(body, "result"), out(body, "code")) == ([True], ["I21.0"])


def _codes(body: dict[str, Any]) -> list[str]:
    return [entry["code"] for entry in body["expansion"].get("contains", [])]


def test_the_billable_value_set_expands_to_billable_codes_only(client: TestClient) -> None:
    body = resource(client.get("/fhir/ValueSet/$expand", params={"url": BILLABLE}), "ValueSet")
    assert (_codes(body), body["expansion"]["total"]) == (["I10", "I21.0"], 2)
    assert not any(entry.get("abstract") for entry in body["expansion"]["contains"])
    ranked = client.get("/fhir/ValueSet/$expand", params={"url": BILLABLE, "filter": "myocardial infarction"})
    assert _codes(resource(ranked, "ValueSet")) == ["I21.0"]  # never I21, the category


def test_a_system_without_billable_codes_has_no_billable_value_set(client: TestClient) -> None:
    text = (
        f"value set '{TOY.uri}?fhir_vs=billable' is unknown; known: {TOY.uri}?fhir_vs, {TOYICD.uri}?fhir_vs, "
        f"{{system}}?fhir_vs=isa/{{code}} for a subtree, and {BILLABLE} for the billable codes"
    )
    response = client.get("/fhir/ValueSet/$expand", params={"url": f"{TOY.uri}?fhir_vs=billable"})
    outcome(response, 404, "not-found", "not-found", text)


def test_a_compose_may_import_the_billable_value_set(client: TestClient) -> None:
    value_set = {
        "resourceType": "ValueSet", "url": "http://example.org/vs/billable-mi", "status": "active",
        "compose": {"include": [{"valueSet": [BILLABLE, f"{TOYICD.uri}?fhir_vs=isa/I21"]}]},
    }
    body = client.post("/fhir/ValueSet/$expand", json={"resourceType": "Parameters", "parameter": [
        {"name": "valueSet", "resource": value_set}]})
    assert _codes(resource(body, "ValueSet")) == ["I21.0"]
