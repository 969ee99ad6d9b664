"""Property-based tests of the whole OpenAPI schema (REST and FHIR routes) with schemathesis:
whatever the generated request, no 5xx, and every documented response matches its schema; the
schema's examples (drawn from the served bundle) reach a 2xx on every FHIR route.

Bounded and deterministic for CI: a few examples per operation, derandomised. The schema is read
from the app once its lifespan (toy store and bundle) serves, as a client reads it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import response_schema_conformance

from app.api.fhir_examples import DELETED_VALUE_SET_ID, EXAMPLE_VALUE_SET_ID
from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.toy import toy_sources

DATA_DIR = Path(tempfile.mkdtemp(prefix="termsearch-schema-fuzz-"))
SETTINGS = Settings(data_dir=DATA_DIR, _env_file=None)
APP = create_app(SETTINGS, encoder=FakeEncoder(32))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)  # read before serving: without examples


@pytest.fixture(scope="module", autouse=True)
def served() -> Iterator[TestClient]:
    try:
        migrate(SETTINGS.store.url)
        engine = make_engine(SETTINGS.store.url)
        for source in toy_sources():
            load_source(engine, source)
        build_bundle(SETTINGS, StoreReader(engine), FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
        engine.dispose()
        with TestClient(APP) as client:
            yield client
    finally:
        shutil.rmtree(DATA_DIR, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=20, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_responses_match_the_schema(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])


def test_the_examples_reach_a_success_on_every_fhir_route(served: TestClient) -> None:
    """Each FHIR route's documented example (its parameters' and body's examples, nothing else) is
    a request this deployment answers with a 2xx: where a fuzzer starts from to reach one. (The
    ValueSets the routes on one ValueSet name are stored again before each: a DELETE removes one.)"""
    api_schema = schemathesis.openapi.from_asgi("/openapi.json", APP)  # served: its examples name the bundle
    failed = {}
    for result in api_schema.get_all_operations():
        operation = result.ok()
        if not operation.path.startswith("/fhir/"):
            continue
        for value_set_id in (EXAMPLE_VALUE_SET_ID, DELETED_VALUE_SET_ID):  # what the routes on one ValueSet name
            served.put(
                f"/fhir/ValueSet/{value_set_id}",
                json=_stored_example(api_schema) | {"id": value_set_id, "url": f"urn:{value_set_id}"},
            )
        response = _example_case(operation).call()
        if not 200 <= response.status_code < 300:
            failed[operation.label] = (response.status_code, response.text[:300])
        elif operation.label == "POST /fhir/ValueSet":
            served.delete(f"/fhir/ValueSet/{response.json()['id']}")  # its url may be created again
    assert failed == {}


def _example_case(operation: Any) -> schemathesis.Case:
    given: dict[str, dict[str, Any]] = {"path": {}, "query": {}}
    for parameter in operation.definition.raw.get("parameters", []):
        if "example" in parameter:
            given[parameter["in"]][parameter["name"]] = parameter["example"]
    content = operation.definition.raw.get("requestBody", {}).get("content", {})
    body = {"body": content["application/fhir+json"]["example"], "media_type": "application/fhir+json"} if content else {}
    return operation.Case(path_parameters=given["path"], query=given["query"], **body)


def _stored_example(api_schema: BaseSchema) -> dict[str, Any]:
    put = api_schema.raw_schema["paths"]["/fhir/ValueSet/{value_set_id}"]["put"]
    return put["requestBody"]["content"]["application/fhir+json"]["example"]


def test_the_schema_documents_fhir_parameters_limits_and_error_bodies() -> None:
    spec = APP.openapi()
    expand = spec["paths"]["/fhir/ValueSet/$expand"]
    parameters = {p["name"]: p for p in expand["get"]["parameters"]}
    assert parameters["url"]["required"] is True
    assert parameters["count"]["schema"] == {"type": "integer", "minimum": 0, "maximum": 1000}
    assert parameters["filter"]["schema"]["maxLength"] == 512
    assert "application/fhir+json" in expand["post"]["requestBody"]["content"]
    assert "application/fhir+json" in expand["get"]["responses"]["400"]["content"]
    for write in (spec["paths"]["/fhir/ValueSet/{value_set_id}"]["put"], spec["paths"]["/fhir/ValueSet"]["post"]):
        body = write["requestBody"]["content"]["application/fhir+json"]["schema"]
        assert body["properties"]["resourceType"]["enum"] == ["ValueSet"] and "compose" in body["properties"]
    k = next(p for p in spec["paths"]["/search"]["get"]["parameters"] if p["name"] == "k")
    assert (k["schema"]["minimum"], k["schema"]["maximum"]) == (1, 100)
    assert "application/problem+json" in spec["paths"]["/search"]["get"]["responses"]["422"]["content"]
