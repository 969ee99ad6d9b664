"""Each FHIR operation is declared once (app/fhir/operations.py): the parser reads only what is
declared, and the CapabilityStatement, TerminologyCapabilities, OperationDefinitions, OpenAPI
description and docs table say exactly what the declarations say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.fhir.operations import EXPAND, LOOKUP, OPERATIONS, POST_ONLY, TRANSLATE, Operation, docs_table
from app.fhir.params import Coding, OperationParams, UndeclaredParameter
from tests.fhir.conftest import outcome, resource

DOCS = Path(__file__).resolve().parents[2] / "docs" / "FHIR_PARAMETERS.md"


def test_the_capability_statement_lists_each_declared_operation_and_its_definition_lists_its_parameters(
    client: TestClient,
) -> None:
    statement = resource(client.get("/fhir/metadata"), "CapabilityStatement")
    served = {
        (kind["type"], operation["name"]): operation
        for kind in statement["rest"][0]["resource"]
        for operation in kind["operation"]
    }
    assert sorted(served) == sorted((operation.resource, operation.code) for operation in OPERATIONS)
    for operation in OPERATIONS:
        stated = served[(operation.resource, operation.code)]
        assert stated["documentation"] == operation.documentation
        assert stated["definition"] == f"urn:termsearch:fhir:OperationDefinition:{operation.id}"
        definition = resource(client.get(f"/fhir/OperationDefinition/{operation.id}"), "OperationDefinition")
        assert (definition["url"], definition["code"], definition["resource"]) == (
            stated["definition"], operation.code, [operation.resource]
        )
        assert definition.get("base") == (f"http://hl7.org/fhir/OperationDefinition/{operation.id}" if operation.hl7 else None)
        assert definition["instance"] is (operation.instance is not None)
        inputs = [(p["name"], p["type"], p["min"], p["max"]) for p in definition["parameter"] if p["use"] == "in"]
        assert inputs == [(p.name, p.type, int(p.required), p.max) for p in operation.parameters]


def test_terminology_capabilities_list_the_declared_expansion_parameters(client: TestClient) -> None:
    body = resource(client.get("/fhir/metadata", params={"mode": "terminology"}), "TerminologyCapabilities")
    assert [(p["name"], p["documentation"]) for p in body["expansion"]["parameter"]] == [
        (p.name, p.documentation) for p in EXPAND.parameters
    ]
    assert "reciprocal rank fusion" not in body["expansion"]["textFilter"]  # the ranking of old: described no more


def _instance_paths(paths: dict[str, Any], operation: Operation) -> list[str]:
    """The OpenAPI paths of ``operation`` on one resource (``/fhir/ValueSet/{value_set_id}/$expand``)."""
    pattern = re.compile(rf"^/fhir/{operation.resource}/\{{[a-z_]+\}}/\${re.escape(operation.code)}$")
    return [path for path in paths if pattern.match(path)]


def test_the_openapi_schema_documents_each_declared_query_parameter(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for operation in OPERATIONS:
        instance = _instance_paths(paths, operation)
        assert len(instance) == (operation.instance is not None)
        for path in [f"/fhir{operation.path}", *instance]:
            if not operation.by_get:  # POST only ($batch-validate: its validations are resources)
                assert "get" not in paths[path] and "requestBody" in paths[path]["post"]
                continue
            documented = [p["name"] for p in paths[path]["get"]["parameters"] if p["in"] == "query"]
            assert documented == [p.name for p in operation.parameters if p.type not in POST_ONLY]
            assert "requestBody" in paths[path]["post"]
        for path in instance:  # the instance supplies its parameter, so it is never required there
            [supplied] = [p for p in paths[path]["get"]["parameters"] if p["name"] == operation.instance]
            assert "required" not in supplied
            assert [p["in"] for p in paths[path]["get"]["parameters"]].count("path") == 1


def test_an_alias_names_a_declared_parameter_of_its_type_and_is_read_as_it() -> None:
    for operation in OPERATIONS:
        for parameter in operation.parameters:
            if parameter.alias_of is not None:
                aliased = operation.parameter(parameter.alias_of)
                assert aliased is not None and aliased.type == parameter.type and aliased.alias_of is None
    params = OperationParams.from_query(TRANSLATE, [("sourceCode", "T:2"), ("sourceSystem", "http://example.org/toy")])
    assert params.coding("code", "system") == Coding("http://example.org/toy", "T:2")


def test_an_unknown_operation_definition_is_not_found(client: TestClient) -> None:
    text = "OperationDefinition/ValueSet-subsumes is not an operation of this server (those: " + ", ".join(
        operation.id for operation in OPERATIONS
    ) + ")"
    outcome(client.get("/fhir/OperationDefinition/ValueSet-subsumes"), 404, "not-found", "not-found", text)


def test_the_docs_table_is_written_from_the_declarations() -> None:
    assert DOCS.read_text(encoding="utf-8") == docs_table(), "run: python -m app.fhir.operations > docs/FHIR_PARAMETERS.md"


def test_code_that_reads_an_undeclared_parameter_or_another_type_fails_loudly() -> None:
    params = OperationParams.from_query(LOOKUP, [("filter", "asthma"), ("code", "J45")])
    with pytest.raises(UndeclaredParameter, match="CodeSystem-lookup reads 'filter' as "):
        params.text("filter")  # an $expand parameter: $lookup does not take it
    with pytest.raises(UndeclaredParameter, match="reads 'code' as integer, declared as code"):
        params.integer("code")
    assert params.text("code") == "J45"
    assert OperationParams.from_query(EXPAND, [("count", "5")]).typed("count") == 5  # read as declared


def test_the_openapi_body_of_a_post_lists_each_declared_parameter_with_its_value_type(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for operation in OPERATIONS:
        for path in [f"/fhir{operation.path}", *_instance_paths(paths, operation)]:
            body = paths[path]["post"]["requestBody"]["content"]["application/fhir+json"]["schema"]
            entries = body["properties"]["parameter"]["items"]["oneOf"]
            assert [entry["properties"]["name"]["enum"] for entry in entries] == [[p.name] for p in operation.parameters]
            for entry, parameter in zip(entries, operation.parameters, strict=True):
                key = "resource" if parameter.type == "Resource" else parameter.value_key
                assert entry["required"] == ["name", key]
    count = next(e for e in paths["/fhir/ValueSet/$expand"]["post"]["requestBody"]["content"]["application/json"]["schema"]
                 ["properties"]["parameter"]["items"]["oneOf"] if e["properties"]["name"]["enum"] == ["count"])
    assert count["properties"]["valueInteger"] == {"type": "integer", "minimum": 0, "maximum": 1000}
