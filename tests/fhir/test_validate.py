"""CodeSystem/$validate-code and ValueSet/$validate-code: code, Coding and CodeableConcept input,
answers about the code as 200 result=true/false with issues naming the input element (as HL7's
terminology test suite expects), and only malformed requests as OperationOutcome errors."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import TOY_VS, TOYICD_VS, TX, out, outcome, parameters, resource
from tests.toy import TOY, TOYICD

CS_VALIDATE = "/fhir/CodeSystem/$validate-code"
VS_VALIDATE = "/fhir/ValueSet/$validate-code"
LOADED = "http://example.org/toy, http://example.org/toyicd"


def _result(response: Any) -> tuple[bool, dict[str, list[Any]]]:
    body = resource(response, "Parameters")
    named = {p["name"]: out(body, p["name"]) for p in body["parameter"]}
    return named["result"][0], named


def _issues(named: dict[str, list[Any]]) -> list[tuple[str, str, str, list[str] | None]]:
    """(severity, issue type, tx-issue-type, expression) of each issue; the message joins their texts."""
    found = named["issues"][0]["issue"] if "issues" in named else []
    if found:
        assert named["message"] == ["; ".join(i["details"]["text"] for i in found)]
    assert all(i["details"]["coding"][0]["system"] == TX for i in found)
    return [(i["severity"], i["code"], i["details"]["coding"][0]["code"], i.get("expression")) for i in found]


def _post(client: TestClient, path: str, **given: dict[str, Any]) -> tuple[bool, dict[str, list[Any]]]:
    return _result(client.post(path, json=parameters(given)))


@pytest.mark.parametrize("display", [None, "Tachycardia", "fast HEART rate"])
def test_code_system_validate_code_accepts_a_code_with_any_of_its_labels(
    client: TestClient, display: str | None
) -> None:
    params = {"url": TOY.uri, "code": "T:2"} | ({"display": display} if display else {})
    result, named = _result(client.get(CS_VALIDATE, params=params))
    assert result is True and "issues" not in named and "message" not in named
    assert (named["code"], named["system"], named["version"], named["display"]) == (
        ["T:2"], [TOY.uri], [TOY.version], ["Tachycardia"]
    )


@pytest.mark.parametrize(
    ("params", "issue", "message"),
    [
        ({"url": TOY.uri, "code": "T:99"}, ("code-invalid", "invalid-code", ["code"]),
         f"unknown code 'T:99' in {TOY.uri} version {TOY.version}"),
        ({"url": TOY.uri, "code": "T:2", "display": "Slow heart"}, ("invalid", "invalid-display", ["display"]),
         f"wrong display 'Slow heart' for {TOY.uri}#T:2: it is 'Tachycardia'"),
        ({"url": TOY.uri, "code": "T:2", "version": "1999"}, ("not-found", "not-found", ["system"]),
         f"version '1999' of {TOY.uri} is not loaded; loaded: {TOY.version}"),
        ({"url": TOY.uri, "code": "T:2", "system": TOYICD.uri}, ("invalid", "invalid-data", ["system"]),
         f"the coding's system {TOYICD.uri} is not {TOY.uri}"),
    ],
)
def test_code_system_validate_code_negative_answers_are_200(
    client: TestClient, params: dict, issue: tuple[str, str, list[str]], message: str
) -> None:
    result, named = _result(client.get(CS_VALIDATE, params=params))
    assert result is False
    assert named["message"] == [message]
    assert _issues(named) == [("error", *issue)]


def test_an_unknown_code_system_is_a_negative_answer_caused_by_it(client: TestClient) -> None:
    result, named = _result(client.get(CS_VALIDATE, params={"url": "http://example.org/none", "code": "T:2"}))
    assert result is False
    assert named["message"] == [
        f"code system 'http://example.org/none' is not loaded, so the code cannot be validated; loaded: {LOADED}"
    ]
    assert _issues(named) == [("error", "not-found", "not-found", ["system"])]
    assert named["x-caused-by-unknown-system"] == ["http://example.org/none"]
    assert (named["code"], named["system"]) == (["T:2"], ["http://example.org/none"])
    _, version = _result(client.get(CS_VALIDATE, params={"url": TOY.uri, "code": "T:2", "version": "1999"}))
    assert version["x-caused-by-unknown-system"] == [f"{TOY.uri}|1999"]


def test_an_inactive_code_validates_with_a_warning_unless_active_only(client: TestClient) -> None:
    result, named = _result(client.get(CS_VALIDATE, params={"url": TOY.uri, "code": "T:6"}))
    assert (result, named["inactive"]) == (True, [True])
    assert _issues(named) == [("warning", "business-rule", "code-comment", ["code"])]
    assert named["message"] == [f"{TOY.uri}#T:6 is inactive (status retired); its use should be reviewed"]
    coding = {"system": TOY.uri, "code": "T:6"}
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS}, coding={"valueCoding": coding},
                          activeOnly={"valueBoolean": True})
    assert result is False
    assert _issues(named) == [  # and so not in the value set as asked for
        ("warning", "business-rule", "code-comment", ["Coding"]),
        ("error", "business-rule", "code-rule", ["Coding.code"]),
        ("error", "code-invalid", "not-in-vs", ["Coding.code"]),
    ]


def test_value_set_validate_code_follows_the_subtree(client: TestClient) -> None:
    subtree = f"{TOY.uri}?fhir_vs=isa/T:1"
    inside, _ = _result(client.get(VS_VALIDATE, params={"url": subtree, "system": TOY.uri, "code": "T:3"}))
    assert inside is True
    result, named = _result(client.get(VS_VALIDATE, params={"url": subtree, "system": TOY.uri, "code": "T:4"}))
    assert result is False and _issues(named) == [("error", "code-invalid", "not-in-vs", ["code"])]
    assert named["message"] == [f"{TOY.uri}#T:4 is not in the value set {subtree}"]
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS},
                          coding={"valueCoding": {"system": TOYICD.uri, "code": "I10"}})
    assert result is False and _issues(named) == [("error", "code-invalid", "not-in-vs", ["Coding.code"])]


def test_a_code_without_a_system_is_a_negative_answer_unless_the_system_is_inferred(client: TestClient) -> None:
    result, named = _result(client.get(VS_VALIDATE, params={"url": TOY_VS, "code": "T:2"}))
    assert result is False
    assert _issues(named) == [
        ("warning", "invalid", "invalid-data", ["code"]),
        ("error", "code-invalid", "not-in-vs", ["code"]),
    ]
    assert named["code"] == ["T:2"] and "system" not in named
    result, named = _result(client.get(VS_VALIDATE, params={"url": TOY_VS, "code": "T:2", "inferSystem": "true"}))
    assert (result, named["system"], named["display"]) == (True, [TOY.uri], ["Tachycardia"])


def test_system_version_is_honoured(client: TestClient) -> None:
    given = {"url": TOY_VS, "system": TOY.uri, "code": "T:2"}
    assert _result(client.get(VS_VALIDATE, params=given | {"systemVersion": TOY.version}))[0] is True
    result, named = _result(client.get(VS_VALIDATE, params=given | {"systemVersion": "1999"}))
    assert result is False
    assert named["message"] == [
        f"version '1999' of {TOY.uri} is not loaded; loaded: {TOY.version}; the coding's version '1999' of "
        f"{TOY.uri} is not the version '{TOY.version}' the value set {TOY_VS} uses"
    ]
    # the value set states no version, so the mismatch is a warning; what the code means is still known
    assert _issues(named) == [("error", "not-found", "not-found", ["system"]), ("warning", "invalid", "vs-invalid", ["version"])]
    assert (named["x-caused-by-unknown-system"], named["display"], named["version"]) == ([f"{TOY.uri}|1999"], ["Tachycardia"], [TOY.version])
    coding = {"system": TOY.uri, "code": "T:2", "version": "1999"}
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS}, coding={"valueCoding": coding})
    assert result is False and _issues(named)[0] == ("error", "not-found", "not-found", ["Coding.system"])
    pinned = {"system-version": {"valueCanonical": f"{TOY.uri}|{TOY.version}"}}  # a stated version: an error
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS}, coding={"valueCoding": coding}, **pinned)
    assert result is False and _issues(named)[1] == ("error", "invalid", "vs-invalid", ["Coding.version"])


def test_a_codeable_concept_is_valid_when_one_of_its_codings_is(client: TestClient) -> None:
    concept = {"coding": [{"system": TOYICD.uri, "code": "I10"}, {"system": TOY.uri, "code": "T:2"}], "text": "fast"}
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS}, codeableConcept={"valueCodeableConcept": concept})
    assert result is True  # the ICD-10-CM coding is outside the value set: information only
    assert _issues(named) == [("information", "code-invalid", "this-code-not-in-vs", ["CodeableConcept.coding[0].code"])]
    assert (named["code"], named["system"], named["codeableConcept"]) == (["T:2"], [TOY.uri], [concept])
    unknown = {"coding": [{"system": TOY.uri, "code": "T:99"}, {"system": TOY.uri, "code": "T:2"}]}
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS}, codeableConcept={"valueCodeableConcept": unknown})
    assert result is False and named["code"] == ["T:2"]  # an unknown code is an error, whatever the other codings
    assert ("error", "code-invalid", "invalid-code", ["CodeableConcept.coding[0].code"]) in _issues(named)
    wrong = {"coding": [{"system": TOY.uri, "code": "T:99"}, {"system": TOYICD.uri, "code": "I10", "userSelected": True}]}
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS}, codeableConcept={"valueCodeableConcept": wrong})
    assert result is False and "code" not in named
    assert named["codeableConcept"] == [{"coding": [wrong["coding"][0], {"system": TOYICD.uri, "code": "I10"}]}]  # as read
    assert _issues(named) == [  # each coding outside the value set is information; the concept is not in it
        ("error", "code-invalid", "not-in-vs", None),
        ("information", "code-invalid", "this-code-not-in-vs", ["CodeableConcept.coding[0].code"]),
        ("error", "code-invalid", "invalid-code", ["CodeableConcept.coding[0].code"]),
        ("information", "code-invalid", "this-code-not-in-vs", ["CodeableConcept.coding[1].code"]),
    ]
    assert named["issues"][0]["issue"][0]["details"]["text"] == f"no coding of the CodeableConcept is in the value set {TOY_VS}"
    own = {"coding": [{"system": TOY.uri, "code": "T:2"}, {"system": TOY.uri, "code": "T:3"}]}
    result, _ = _post(client, CS_VALIDATE, url={"valueUri": TOY.uri}, codeableConcept={"valueCodeableConcept": own})
    assert result is True


def test_abstract_codes_are_valid_unless_abstract_is_false(client: TestClient) -> None:
    chapter = {"url": TOYICD_VS, "system": TOYICD.uri, "code": "I00-I99"}
    assert _result(client.get(VS_VALIDATE, params=chapter))[0] is True
    result, named = _result(client.get(VS_VALIDATE, params=chapter | {"abstract": "false"}))
    assert result is False and _issues(named) == [
        ("error", "business-rule", "code-rule", ["code"]), ("error", "code-invalid", "not-in-vs", ["code"])
    ]
    assert named["message"] == [
        f"{TOYICD.uri}#I00-I99 is abstract (a chapter), and not allowed in this context; {TOYICD.uri}#I00-I99 is not "
        f"in the value set {TOYICD_VS} where abstract codes are not allowed"
    ]
    assert _result(client.get(VS_VALIDATE, params=chapter | {"code": "I10", "abstract": "false"}))[0] is True


@pytest.mark.parametrize(
    ("path", "params", "status", "code", "tx_code", "text"),
    [
        (VS_VALIDATE, {"system": TOY.uri, "code": "T:2"}, 400, "invalid", "invalid-data", "url: required"),
        (VS_VALIDATE, {"url": TOY_VS, "system": TOY.uri}, 400, "invalid", "invalid-data",
         "code: required (or coding, or codeableConcept)"),
        (CS_VALIDATE, {"code": "T:2"}, 400, "invalid", "invalid-data", "url: required (or a coding with a system)"),
        (VS_VALIDATE, {"url": "http://example.org/none?fhir_vs", "system": TOY.uri, "code": "T:2"}, 404, "not-found",
         "not-found", "value set 'http://example.org/none?fhir_vs' is unknown; known: http://example.org/toy?fhir_vs, "
         "http://example.org/toyicd?fhir_vs, {system}?fhir_vs=isa/{code} for a subtree, and "
         "http://example.org/toyicd?fhir_vs=billable for the billable codes"),
    ],
)
def test_validate_code_errors(
    client: TestClient, path: str, params: dict, status: int, code: str, tx_code: str, text: str
) -> None:
    outcome(client.get(path, params=params), status, code, tx_code, text)


def test_a_codeable_concept_needs_a_coding(client: TestClient) -> None:
    body = parameters({"url": {"valueUri": TOY_VS}, "codeableConcept": {"valueCodeableConcept": {"text": "fast"}}})
    text = "codeableConcept: expected a CodeableConcept with a coding"
    outcome(client.post(VS_VALIDATE, json=body), 400, "invalid", "invalid-data", text)


def test_a_value_set_url_given_as_a_codings_system_is_named_as_such(client: TestClient) -> None:
    """A coding whose system is a value set's URL (an implicit one too) is reported as that, not
    as an unknown code system (issue 41)."""
    coding = {"system": TOY_VS, "code": "T:2"}
    result, named = _post(client, VS_VALIDATE, url={"valueUri": TOY_VS}, coding={"valueCoding": coding})
    assert result is False
    texts = [issue["details"]["text"] for issue in named["issues"][0]["issue"]]
    assert f"{TOY_VS} is a value set, not a code system: a coding's system names a code system" in texts
    assert "x-caused-by-unknown-system" not in named
