"""A FHIR client nobody here wrote (fhirpy, as its documentation uses it) against the app served
over real HTTP (issue 41): a stored ValueSet saved as a resource, then expanded and validated at
instance level; a code looked up, validated and checked for subsumption on a code system instance;
``$translate`` with R5's names. Every answer validates with fhir.resources R4B."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI
from fhir.resources.R4B import get_fhir_model_class
from fhirpy import SyncFHIRClient

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from tests.api.conftest import built  # noqa: F401 - the toy bundle fixture
from tests.toy import TOY


@pytest.fixture
def fhir(serve_app: Callable[[FastAPI], str], built: Settings) -> SyncFHIRClient:  # noqa: F811
    base = serve_app(create_app(built, encoder=FakeEncoder(32)))
    return SyncFHIRClient(f"{base}/fhir", extra_headers={"Accept": "application/fhir+json"})


def valid(answer: dict[str, Any]) -> dict[str, Any]:
    get_fhir_model_class(answer["resourceType"]).model_validate(answer)
    return answer


def parameter(answer: dict[str, Any], name: str) -> Any:
    found = next(p for p in answer["parameter"] if p["name"] == name)
    return next(value for key, value in found.items() if key.startswith("value"))


def test_a_value_set_saved_by_fhirpy_is_expanded_and_validated_on_its_instance(fhir: SyncFHIRClient) -> None:
    compose = {"include": [{"system": TOY.uri, "concept": [{"code": "T:2"}, {"code": "T:3"}]}]}
    value_set = fhir.resource("ValueSet", id="heart", url="http://example.org/vs/heart", status="active", compose=compose)
    value_set.save()
    expansion = valid(value_set.execute("$expand", method="get", params={"filter": "slow heart"}))
    assert [c["code"] for c in expansion["expansion"]["contains"]][:1] == ["T:3"]
    whole = valid(value_set.execute("$expand", method="get"))
    assert sorted(c["code"] for c in whole["expansion"]["contains"]) == ["T:2", "T:3"]
    inside = valid(value_set.execute("$validate-code", method="get", params={"system": TOY.uri, "code": "T:2"}))
    outside = valid(value_set.execute("$validate-code", method="post", data={
        "resourceType": "Parameters", "parameter": [{"name": "coding", "valueCoding": {"system": TOY.uri, "code": "T:4"}}],
    }))  # fmt: skip
    assert (parameter(inside, "result"), parameter(outside, "result")) == (True, False)


def test_a_code_system_instance_looks_up_validates_and_answers_subsumption(fhir: SyncFHIRClient) -> None:
    toy = fhir.resource("CodeSystem", id="toy")
    looked_up = valid(toy.execute("$lookup", method="get", params={"code": "T:2"}))
    assert parameter(looked_up, "display") == "Tachycardia"
    validated = valid(toy.execute("$validate-code", method="get", params={"code": "T:2", "display": "Tachycardia"}))
    assert parameter(validated, "result") is True
    below = valid(toy.execute("$subsumes", method="get", params={"codeA": "T:1", "codeB": "T:2"}))
    assert parameter(below, "outcome") == "subsumes"
    typed = valid(fhir.execute("CodeSystem/$subsumes", method="get", params={"system": TOY.uri, "codeA": "T:2", "codeB": "T:3"}))
    assert parameter(typed, "outcome") == "not-subsumed"


def test_translate_takes_r5_names_from_fhirpy(fhir: SyncFHIRClient) -> None:
    answer = valid(fhir.execute("ConceptMap/$translate", method="get", params={"sourceSystem": TOY.uri, "sourceCode": "T:2"}))
    assert isinstance(parameter(answer, "result"), bool)
