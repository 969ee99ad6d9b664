"""ValueSet/$batch-validate as tx.fhir.org defines it (HL7's test suite, ``batch``): each
``validation`` is the Parameters of one ValueSet/$validate-code, answered exactly as that operation
answers it alone, the batch's other parameters shared; an invalid validation is answered with the
OperationOutcome of its error and the others still are; the batch is bounded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import FhirSettings, Settings
from indexer.encoders import FakeEncoder
from tests.fhir.conftest import TOY_VS, TX, outcome, resource
from tests.toy import TOY

BATCH = "/fhir/ValueSet/$batch-validate"
VS_VALIDATE = "/fhir/ValueSet/$validate-code"
PULSE = {
    "resourceType": "ValueSet",
    "url": "urn:uuid:80458796-b204-4d17-ac1c-8443dd8cb35b",
    "status": "active",
    "compose": {"include": [{"system": TOY.uri, "concept": [{"code": "T:2"}, {"code": "T:6"}]}]},
}
SHARED = [{"name": "tx-resource", "resource": PULSE}, {"name": "url", "valueUri": PULSE["url"]}]


def _coding(code: str, display: str | None = None) -> dict[str, Any]:
    return {"name": "coding", "valueCoding": {"system": TOY.uri, "code": code} | ({"display": display} if display else {})}


def _validation(*parameters: dict[str, Any]) -> dict[str, Any]:
    return {"name": "validation", "resource": {"resourceType": "Parameters", "parameter": list(parameters)}}


def _batch(client: TestClient, *parameters: dict[str, Any], headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The answer to each validation, in order (the batch's answer checked: one validation each)."""
    body = resource(
        client.post(BATCH, json={"resourceType": "Parameters", "parameter": list(parameters)}, headers=headers), "Parameters"
    )
    assert {p["name"] for p in body["parameter"]} == {"validation"}
    return [p["resource"] for p in body["parameter"]]


def _alone(client: TestClient, *parameters: dict[str, Any]) -> dict[str, Any]:
    """What ValueSet/$validate-code answers to the same parameters, asked alone."""
    return resource(client.post(VS_VALIDATE, json={"resourceType": "Parameters", "parameter": list(parameters)}), "Parameters")


def _named(answer: dict[str, Any]) -> dict[str, Any]:
    return {p["name"]: next(v for k, v in p.items() if k != "name") for p in answer["parameter"]}


def test_each_validation_is_answered_as_validate_code_answers_it_alone(client: TestClient) -> None:
    answers = _batch(client, *SHARED, _validation(_coding("T:2")), _validation(_coding("T:6")), _validation(_coding("T:3")))
    assert answers == [_alone(client, *SHARED, _coding(code)) for code in ("T:2", "T:6", "T:3")]
    valid, retired, outside = (_named(answer) for answer in answers)
    assert (valid["result"], valid["code"], valid["display"]) == (True, "T:2", "Tachycardia")
    assert (retired["result"], retired["inactive"], retired["status"]) == (True, True, "retired")
    assert outside["result"] is False
    assert outside["message"] == f"{TOY.uri}#T:3 is not in the value set {PULSE['url']}"
    assert [i["details"]["coding"][0]["code"] for i in outside["issues"]["issue"]] == ["not-in-vs"]


def test_a_validation_gives_its_own_parameters_over_the_shared_ones(client: TestClient) -> None:
    lenient = {"name": "lenient-display-validation", "valueBoolean": True}
    strict = {"name": "lenient-display-validation", "valueBoolean": False}
    answers = _batch(client, *SHARED, lenient, _validation(_coding("T:2", "xx"), strict), _validation(_coding("T:2", "xx")))
    own, shared = (_named(answer) for answer in answers)
    wrong = f"wrong display 'xx' for {TOY.uri}#T:2: it is 'Tachycardia'"
    assert (own["result"], own["message"], own["issues"]["issue"][0]["severity"]) == (False, wrong, "error")
    assert (shared["result"], shared["message"], shared["issues"]["issue"][0]["severity"]) == (True, wrong, "warning")
    # a validation may name its own value set, and its tx-resources join the batch's
    other = {**PULSE, "url": "http://example.org/fhir/ValueSet/other", "compose": {"include": [{"system": TOY.uri}]}}
    [answer] = _batch(
        client,
        *SHARED,
        _validation({"name": "tx-resource", "resource": other}, {"name": "url", "valueUri": other["url"]}, _coding("T:3")),
    )
    assert _named(answer)["result"] is True


def _error(text: str, code: str = "invalid", tx_code: str | None = "invalid-data") -> dict[str, Any]:
    details = {"text": text} | ({"coding": [{"system": TX, "code": tx_code}]} if tx_code else {})
    return {"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": code, "details": details}]}


def test_an_invalid_validation_is_answered_with_its_error_and_the_others_still_are(client: TestClient) -> None:
    codingx = {"name": "codingX", "valueCoding": {"system": TOY.uri, "code": "T:2"}}
    unknown = {"name": "url", "valueUri": "http://example.org/fhir/ValueSet/none"}
    answers = _batch(
        client,
        *SHARED,
        _validation(_coding("T:2")),
        _validation(codingx),  # no code to validate: an undeclared parameter is ignored, as the spec's default
        {"name": "validation", "resource": {"resourceType": "Patient"}},
        _validation({"name": "coding", "valueString": "T:2"}),
        _validation(unknown, _coding("T:2")),
        _validation(_coding("T:6")),
    )
    assert answers[1:4] == [
        _error("code: required (or coding, or codeableConcept)"),
        _error("validation: expected a Parameters resource (got 'Patient')"),
        _error("coding: expected a Coding with a code"),
    ]
    # the error $validate-code alone answers with its status, here in the batch's 200
    alone = client.post(VS_VALIDATE, json={"resourceType": "Parameters", "parameter": [SHARED[0], unknown, _coding("T:2")]})
    assert answers[4] == resource(alone, "OperationOutcome", 404)
    assert answers[4]["issue"][0]["details"]["text"].startswith("value set 'http://example.org/fhir/ValueSet/none' is unknown")
    assert [_named(answers[i])["result"] for i in (0, 5)] == [True, True]


def test_with_strict_handling_an_undeclared_parameter_of_a_validation_is_its_error(client: TestClient) -> None:
    codingx = {"name": "codingX", "valueCoding": {"system": TOY.uri, "code": "T:2"}}
    answers = _batch(client, *SHARED, _validation(codingx), _validation(_coding("T:2")), headers={"Prefer": "handling=strict"})
    assert answers[0]["issue"][0]["details"]["text"].startswith(
        "codingX: not a parameter of ValueSet/$validate-code (its parameters: url, valueSet, "
    )
    assert _named(answers[1])["result"] is True


@pytest.fixture
def two_at_most(built: Settings) -> Iterator[TestClient]:
    settings = built.model_copy(update={"fhir": FhirSettings(max_batch_validations=2)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as test_client:
        yield test_client


def test_a_batch_over_the_limit_is_refused_naming_it_before_any_validation(two_at_most: TestClient) -> None:
    three = [_validation(_coding(code)) for code in ("T:2", "T:3", "T:4")]
    body = {"resourceType": "Parameters", "parameter": [*SHARED, *three]}
    text = "validation: 3 validations, more than the 2 a $batch-validate may have (fhir.max_batch_validations)"
    outcome(two_at_most.post(BATCH, json=body), 422, "too-costly", None, text)
    assert len(_batch(two_at_most, *SHARED, *three[:2])) == 2


def test_a_batch_without_validations_or_not_a_parameters_resource_is_a_400(client: TestClient) -> None:
    text = "validation: required, the Parameters of one ValueSet/$validate-code each"
    outcome(client.post(BATCH, json={"resourceType": "Parameters", "parameter": SHARED}), 400, "invalid", "invalid-data", text)
    body = {"resourceType": "Bundle"}
    outcome(client.post(BATCH, json=body), 400, "invalid", "invalid-data", "body: expected a Parameters resource")


def test_batch_validate_is_post_only(client: TestClient) -> None:
    response = client.get(BATCH, params={"url": TOY_VS})
    outcome(response, 405, "not-supported", "invalid-data", "GET is not allowed here; allowed: POST")
    assert response.headers["allow"] == "POST"


def test_batch_validate_is_declared_with_its_operation_definition(client: TestClient) -> None:
    statement = resource(client.get("/fhir/metadata"), "CapabilityStatement")
    [value_sets] = [kind for kind in statement["rest"][0]["resource"] if kind["type"] == "ValueSet"]
    declared = {operation["name"]: operation["definition"] for operation in value_sets["operation"]}
    assert declared["batch-validate"] == "urn:termsearch:fhir:OperationDefinition:ValueSet-batch-validate"
    definition = resource(client.get("/fhir/OperationDefinition/ValueSet-batch-validate"), "OperationDefinition")
    assert "base" not in definition  # tx.fhir.org's operation: HL7 defines none to base it on
    assert (definition["code"], definition["resource"], definition["instance"]) == ("batch-validate", ["ValueSet"], False)
    validations = [(p["use"], p["min"], p["max"], p["type"]) for p in definition["parameter"] if p["name"] == "validation"]
    assert validations == [("in", 1, "*", "Resource"), ("out", 1, "*", "Resource")]
    shared = {p["name"] for p in definition["parameter"] if p["use"] == "in"} - {"validation"}
    assert {"url", "valueSet", "tx-resource", "lenient-display-validation", "displayLanguage"} <= shared
    assert not shared & {"code", "system", "coding", "codeableConcept", "display"}  # each validation's own
