"""The OpenAPI description of the FHIR operations, from their declarations (``app/fhir/operations.py``):
their query parameters (GET) and their ``Parameters`` body (POST), with the limits ``app/fhir``
enforces (defaults of the settings)."""

from __future__ import annotations

from typing import Any

from app.fhir.operations import POST_ONLY, Operation, Parameter

_TYPES: dict[str, dict[str, Any]] = {
    "integer": {"type": "integer"},
    "decimal": {"type": "number"},
    "boolean": {"type": "string", "enum": ["true", "false"]},
}
_TEXT: dict[str, Any] = {"type": "string", "minLength": 1}


def _query_parameter(parameter: Parameter) -> dict[str, Any]:
    schema = {**_TYPES.get(parameter.type, _TEXT), **parameter.limits}
    described = {"in": "query", "name": parameter.name, "description": parameter.documentation}
    if parameter.repeats:
        return described | {"schema": {"type": "array", "items": schema}, "explode": True}
    return described | {"schema": schema} | ({"required": True} if parameter.required else {})


_PARAMETERS_BODY = {
    "type": "object",
    "required": ["resourceType"],
    "properties": {
        "resourceType": {"type": "string", "enum": ["Parameters"]},
        "parameter": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": {"type": "string", "minLength": 1}},
                "description": "a name and exactly one value[x] (valueString, valueUri, valueInteger, valueCoding, ...)",
            },
        },
    },
}


def get_operation(operation: Operation) -> dict[str, Any]:
    """``openapi_extra`` of an operation's GET: its declared parameters that a query string can carry."""
    return {"parameters": [_query_parameter(p) for p in operation.parameters if p.type not in POST_ONLY]}


def post_operation() -> dict[str, Any]:
    """``openapi_extra`` of an operation's POST: a FHIR ``Parameters`` resource as the body."""
    content = {"schema": _PARAMETERS_BODY}
    return {"requestBody": {"required": True, "content": {"application/fhir+json": content, "application/json": content}}}
