"""Codeable validation on the real ICD-10-CM (tests/real_data.py): against
``http://hl7.org/fhir/sid/icd-10-cm?fhir_vs=billable`` a block and the categories and
subcategories that are not billable (E11, H91.9, which LHC-Forms stored) are not valid, each named
as what it is; E11.9 is. Instance-level operations and $subsumes on the real code system too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import out, resource
from tests.real_data import real_client

pytestmark = pytest.mark.model

ICD10CM = "http://hl7.org/fhir/sid/icd-10-cm"
BILLABLE = f"{ICD10CM}?fhir_vs=billable"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    yield from real_client()


def _validate(client: TestClient, code: str) -> dict:
    params = {"url": BILLABLE, "system": ICD10CM, "code": code}
    return resource(client.get("/fhir/ValueSet/$validate-code", params=params), "Parameters")


@pytest.mark.parametrize(
    ("code", "what"),
    [
        ("E11", "a category"),
        ("I20-I25", "a block"),
        ("H91.9", "a subcategory"),
    ],
)
def test_a_code_that_is_not_billable_is_not_valid_in_the_billable_value_set(client: TestClient, code: str, what: str) -> None:
    body = _validate(client, code)
    assert out(body, "result") == [False]
    assert out(body, "message") == [
        f"{ICD10CM}#{code} is {what}, not a billable code (not selectable), so not in the value set {BILLABLE}; "
        "record a billable code below it"
    ]


@pytest.mark.parametrize("code", ["E11.9", "I10", "H91.90", "S72.001A"])
def test_a_billable_code_is_valid(client: TestClient, code: str) -> None:
    body = _validate(client, code)
    assert out(body, "result") == [True] and "message" not in [p["name"] for p in body["parameter"]]


def test_a_filtered_billable_expansion_lists_only_billable_codes(client: TestClient) -> None:
    params = {"url": BILLABLE, "filter": "type 2 diabetes", "count": 10}
    body = resource(client.get("/fhir/ValueSet/$expand", params=params), "ValueSet")
    codes = [entry["code"] for entry in body["expansion"]["contains"]]
    assert codes and "E11" not in codes and all(code.startswith("E11.") for code in codes[:3])


def test_instance_operations_and_subsumes_on_icd10cm(client: TestClient) -> None:
    lookup = resource(client.get("/fhir/CodeSystem/icd10cm/$lookup", params={"code": "E11.9"}), "Parameters")
    assert out(lookup, "display") == ["Type 2 diabetes mellitus without complications"]
    valid = resource(client.get("/fhir/CodeSystem/icd10cm/$validate-code", params={"code": "E11.9"}), "Parameters")
    assert out(valid, "result") == [True]
    for a, b, outcome in [("E11", "E11.9", "subsumes"), ("E11.9", "E00-E89", "subsumed-by"), ("E11", "I10", "not-subsumed")]:
        answer = client.get("/fhir/CodeSystem/$subsumes", params={"system": ICD10CM, "codeA": a, "codeB": b})
        assert out(resource(answer, "Parameters"), "outcome") == [outcome]
