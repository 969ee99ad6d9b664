"""An inactive code's status (issue 41): the toy's T:6, like an obsolete HPO term, is inactive, and
every answer about it says so: ``$validate-code`` with ``inactive`` true and ``status`` retired (the
outputs HL7's terminology test suite expects of a retired code), ``$expand`` with
``contains.inactive`` true wherever the expansion includes it (unfiltered, filtered, ``activeOnly=false``,
a stored value set listing it) and its ``status`` property retired."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import TOY_VS, TX, parameters, resource
from tests.toy import TOY

CS_VALIDATE = "/fhir/CodeSystem/$validate-code"
VS_VALIDATE = "/fhir/ValueSet/$validate-code"
EXPAND = "/fhir/ValueSet/$expand"
T6 = {"system": TOY.uri, "code": "T:6", "display": "obsolete Rapid pulse"}
RETIRED = f"{TOY.uri}#T:6 is inactive (status retired); its use should be reviewed"
STORED = {
    "resourceType": "ValueSet",
    "id": "pulse",
    "url": "http://example.org/fhir/ValueSet/pulse",
    "version": "1",
    "status": "active",
    "compose": {"include": [{"system": TOY.uri, "concept": [{"code": "T:2"}, {"code": "T:6"}]}]},
}


def _inactive_answer(expression: str) -> dict[str, Any]:
    """The whole answer about T:6, found where ``expression`` says."""
    warning = {
        "severity": "warning",
        "code": "business-rule",
        "details": {"text": RETIRED, "coding": [{"system": TX, "code": "code-comment"}]},
        "location": [expression],
        "expression": [expression],
    }
    return parameters(
        {
            "result": {"valueBoolean": True},
            "message": {"valueString": RETIRED},
            "code": {"valueCode": "T:6"},
            "system": {"valueUri": TOY.uri},
            "version": {"valueString": TOY.version},
            "display": {"valueString": "obsolete Rapid pulse"},
            "inactive": {"valueBoolean": True},
            "status": {"valueCode": "retired"},
            "issues": {"resource": {"resourceType": "OperationOutcome", "issue": [warning]}},
        }
    )


def test_validate_code_in_the_code_system_gives_an_inactive_codes_status(client: TestClient) -> None:
    answer = resource(client.get(CS_VALIDATE, params={"url": TOY.uri, "code": "T:6"}), "Parameters")
    assert answer == _inactive_answer("code")


@pytest.mark.parametrize("url", [TOY_VS, STORED["url"]])
def test_validate_code_in_a_value_set_gives_an_inactive_codes_status(client: TestClient, url: str) -> None:
    assert client.put("/fhir/ValueSet/pulse", json=STORED).status_code == 201
    given = parameters({"url": {"valueUri": url}, "coding": {"valueCoding": {"system": TOY.uri, "code": "T:6"}}})
    assert resource(client.post(VS_VALIDATE, json=given), "Parameters") == _inactive_answer("Coding")


def test_an_active_code_has_no_status_output(client: TestClient) -> None:
    answer = resource(client.get(CS_VALIDATE, params={"url": TOY.uri, "code": "T:2"}), "Parameters")
    assert [p["name"] for p in answer["parameter"]] == ["result", "code", "system", "version", "display"]


def test_with_active_only_the_inactive_code_is_refused_and_still_says_its_status(client: TestClient) -> None:
    given = {"url": TOY_VS, "system": TOY.uri, "code": "T:6", "activeOnly": "true"}
    answer = resource(client.get(VS_VALIDATE, params=given), "Parameters")
    named = {p["name"]: p for p in answer["parameter"]}
    assert named["result"] == {"name": "result", "valueBoolean": False}
    assert (named["inactive"]["valueBoolean"], named["status"]["valueCode"]) == (True, "retired")


def _entries(client: TestClient, **params: Any) -> dict[str, dict[str, Any]]:
    body = resource(client.get(EXPAND, params=params), "ValueSet")
    return {entry["code"]: entry for entry in body["expansion"].get("contains", [])}


@pytest.mark.parametrize("active_only", [None, "false"])
def test_an_unfiltered_expansion_flags_the_inactive_code(client: TestClient, active_only: str | None) -> None:
    given = {"url": TOY_VS} | ({"activeOnly": active_only} if active_only else {})
    entries = _entries(client, **given)
    assert entries["T:6"] == {**T6, "inactive": True}
    assert [code for code, entry in entries.items() if "inactive" in entry] == ["T:6"]  # the active ones carry none
    assert "T:6" not in _entries(client, url=TOY_VS, activeOnly="true")


def test_a_filtered_expansion_flags_the_inactive_code(client: TestClient) -> None:
    entries = _entries(client, url=TOY_VS, filter="rapid pulse", count=10, activeOnly="false")
    assert entries["T:6"]["inactive"] is True


def test_a_stored_value_set_that_lists_the_inactive_code_expands_it_flagged_with_its_status(client: TestClient) -> None:
    assert client.put("/fhir/ValueSet/pulse", json=STORED).status_code == 201
    entries = _entries(client, url=STORED["url"], property="status")
    status = "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property"

    def listed(value: str) -> list[dict[str, Any]]:
        return [{"url": status, "extension": [{"url": "code", "valueCode": "status"}, {"url": "value", "valueCode": value}]}]

    assert entries == {
        "T:2": {"system": TOY.uri, "extension": listed("active"), "code": "T:2", "display": "Tachycardia"},
        "T:6": {**T6, "extension": listed("retired"), "inactive": True},
    }
    assert list(_entries(client, url=STORED["url"], activeOnly="true")) == ["T:2"]


def test_a_compose_that_leaves_inactive_codes_out_does_not_list_it(client: TestClient) -> None:
    value_set = {**STORED, "compose": {**STORED["compose"], "inactive": False}}
    given = parameters({"valueSet": {"resource": value_set}})
    body = resource(client.post(EXPAND, json=given), "ValueSet")
    assert [entry["code"] for entry in body["expansion"]["contains"]] == ["T:2"]
