"""Property-based tests of the whole OpenAPI schema (REST and FHIR routes) with schemathesis:
whatever the generated request, no 5xx, and every documented response matches its schema.

Bounded and deterministic for CI: a few examples per operation, derandomised. The schema is read
at collection from the app object, whose lifespan (toy store and bundle) a module fixture opens.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.toy import toy_sources

DATA_DIR = Path(tempfile.mkdtemp(prefix="termsearch-schema-fuzz-"))
SETTINGS = Settings(data_dir=DATA_DIR, _env_file=None)
APP = create_app(SETTINGS, encoder=FakeEncoder(32))
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(scope="module", autouse=True)
def serving_toy_bundle() -> Iterator[None]:
    try:
        migrate(SETTINGS.store.url)
        engine = make_engine(SETTINGS.store.url)
        for source in toy_sources():
            load_source(engine, source)
        build_bundle(SETTINGS, StoreReader(engine), FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
        engine.dispose()
        with TestClient(APP):
            yield
    finally:
        shutil.rmtree(DATA_DIR, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=20, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_responses_match_the_schema(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=[not_a_server_error, response_schema_conformance])


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
