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


def _query_parameter(parameter: Parameter, supplied: str | None = None) -> dict[str, Any]:
    """``supplied``: the parameter the instance supplies (never required then)."""
    schema = {**_TYPES.get(parameter.type, _TEXT), **parameter.limits}
    described = {"in": "query", "name": parameter.name, "description": parameter.documentation}
    if parameter.repeats:
        return described | {"schema": {"type": "array", "items": schema}, "explode": True}
    required = parameter.required and parameter.name != supplied
    return described | {"schema": schema} | ({"required": True} if required else {})


_CODING: dict[str, Any] = {
    "type": "object",
    "required": ["code"],
    "properties": {"system": _TEXT, "version": _TEXT, "code": _TEXT, "display": _TEXT},
}
_RESOURCE: dict[str, Any] = {"type": "object", "required": ["resourceType"], "properties": {"resourceType": _TEXT}}
_VALUES: dict[str, dict[str, Any]] = {  # a JSON body carries FHIR's own types (true, 5), not strings
    "integer": {"type": "integer"},
    "decimal": {"type": "number"},
    "boolean": {"type": "boolean"},
    "Coding": _CODING,
    "CodeableConcept": {
        "type": "object",
        "required": ["coding"],
        "properties": {"coding": {"type": "array", "minItems": 1, "items": _CODING}},
    },
}


def _body_parameter(parameter: Parameter) -> dict[str, Any]:
    """One entry of a ``Parameters`` resource: the name and its ``value[x]`` (or ``resource``)."""
    key = "resource" if parameter.type == "Resource" else parameter.value_key
    value = _RESOURCE if parameter.type == "Resource" else {**_VALUES.get(parameter.type, _TEXT), **parameter.limits}
    return {
        "type": "object",
        "required": ["name", key],
        "properties": {"name": {"type": "string", "enum": [parameter.name]}, key: value},
        "description": parameter.documentation,
    }


def _parameters_body(operation: Operation) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["resourceType"],
        "properties": {
            "resourceType": {"type": "string", "enum": ["Parameters"]},
            "parameter": {"type": "array", "items": {"oneOf": [_body_parameter(p) for p in operation.parameters]}},
        },
    }


def get_operation(operation: Operation, on_instance: bool = False) -> dict[str, Any]:
    """``openapi_extra`` of an operation's GET: its declared parameters that a query string can
    carry; ``on_instance``: on one resource, which supplies a parameter (``url``)."""
    supplied = operation.instance if on_instance else None
    return {"parameters": [_query_parameter(p, supplied) for p in operation.parameters if p.type not in POST_ONLY]}


def post_operation(operation: Operation) -> dict[str, Any]:
    """``openapi_extra`` of an operation's POST: a FHIR ``Parameters`` resource of its declared parameters."""
    content = {"schema": _parameters_body(operation)}
    return {"requestBody": {"required": True, "content": {"application/fhir+json": content, "application/json": content}}}


_CODE_AND_DISPLAY = {"code": _TEXT, "display": _TEXT}
_CONCEPT_SET: dict[str, Any] = {
    "type": "object",
    "properties": {
        "system": _TEXT,
        "version": _TEXT,
        "concept": {"type": "array", "items": {"type": "object", "required": ["code"], "properties": _CODE_AND_DISPLAY}},
        "filter": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["property", "op", "value"],
                "properties": {"property": _TEXT, "op": _TEXT, "value": _TEXT},
            },
        },
        "valueSet": {"type": "array", "items": _TEXT},
    },
}
_VALUE_SET: dict[str, Any] = {
    "type": "object",
    "required": ["resourceType"],
    "properties": {
        "resourceType": {"type": "string", "enum": ["ValueSet"]},
        "id": {"type": "string", "pattern": "^[A-Za-z0-9\\-\\.]{1,64}$"},
        "url": _TEXT,
        "version": _TEXT,
        "name": _TEXT,
        "title": _TEXT,
        "status": {"type": "string", "enum": ["draft", "active", "retired", "unknown"]},
        "compose": {
            "type": "object",
            "required": ["include"],
            "properties": {
                "inactive": {"type": "boolean"},
                "include": {"type": "array", "minItems": 1, "items": _CONCEPT_SET},
                "exclude": {"type": "array", "items": _CONCEPT_SET},
            },
        },
    },
    "description": "a FHIR R4 ValueSet; its compose must resolve against the served code systems",
}


def value_set_body() -> dict[str, Any]:
    """``openapi_extra`` of a ValueSet write (PUT, POST): the resource as the body."""
    content = {"schema": _VALUE_SET}
    return {"requestBody": {"required": True, "content": {"application/fhir+json": content, "application/json": content}}}

