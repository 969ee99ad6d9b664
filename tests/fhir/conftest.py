"""FHIR tests over the toy bundle (``tests/toy.py``): each answer is parsed with the
fhir.resources R4B model of its resourceType, so a test fails on anything that is not valid R4."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fhir.resources.R4B import get_fhir_model_class

from app.main import create_app
from app.settings import FhirSettings, Settings
from indexer.encoders import FakeEncoder
from tests.api.conftest import built, client  # noqa: F401 - fixtures shared with the REST tests
from tests.toy import TOY, TOYICD

TOY_VS = f"{TOY.uri}?fhir_vs"
TOYICD_VS = f"{TOYICD.uri}?fhir_vs"
TX = "http://hl7.org/fhir/tools/CodeSystem/tx-issue-type"
FHIR_JSON = "application/fhir+json"


def resource(response: Any, resource_type: str, status: int = 200) -> dict[str, Any]:
    """The response's JSON, after checking its status, media type and validity as ``resource_type``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(FHIR_JSON)
    body = response.json()
    assert body["resourceType"] == resource_type
    get_fhir_model_class(resource_type).model_validate(body)
    return body


def outcome(response: Any, status: int, code: str, tx_code: str | None, text: str) -> None:
    """The response is exactly one error issue with these codes and text."""
    details = {"text": text} | ({"coding": [{"system": TX, "code": tx_code}]} if tx_code else {})
    assert resource(response, "OperationOutcome", status) == {
        "resourceType": "OperationOutcome",
        "issue": [{"severity": "error", "code": code, "details": details}],
    }


def parameters(names_and_values: dict[str, Any]) -> dict[str, Any]:
    """A Parameters resource from ``{name: {valueX: ...}}``."""
    return {"resourceType": "Parameters", "parameter": [{"name": n, **v} for n, v in names_and_values.items()]}


def out(body: dict[str, Any], name: str) -> list[Any]:
    """The values (or parts) of every output parameter called ``name``."""
    found = []
    for parameter in body["parameter"]:
        if parameter["name"] == name:
            value = next((v for k, v in parameter.items() if k.startswith("value") or k == "resource"), None)
            found.append(parameter.get("part", value))
    return found


@pytest.fixture
def small_client(built: Settings) -> Iterator[TestClient]:  # noqa: F811 - the imported fixture
    """The toy app with tight FHIR limits: pages of at most 3 codes, filter depth 4."""
    settings = built.model_copy(update={"fhir": FhirSettings(max_count=3, filter_depth=4)})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as test_client:
        yield test_client
