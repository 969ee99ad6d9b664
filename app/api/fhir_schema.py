"""The OpenAPI description of the FHIR operations: their query parameters (GET) and their
``Parameters`` body (POST), with the limits ``app/fhir`` enforces (defaults of the settings)."""

from __future__ import annotations

from typing import Any

from app.checks import SEARCH
from app.settings import FhirSettings

FHIR = FhirSettings()
INT32 = 2**31 - 1
_TEXT = {"type": "string", "minLength": 1}
_BOOLEAN = {"type": "string", "enum": ["true", "false"]}
_CODE = {"name": "code", "schema": _TEXT, "description": "a code of the system"}
_SYSTEM = {"name": "system", "schema": _TEXT, "description": "code system URI"}
_VERSION = {"name": "version", "schema": _TEXT, "description": "code system version (the loaded one)"}
_DISPLAY = {"name": "display", "schema": _TEXT, "description": "display to check"}
_LANGUAGE = {
    "name": "displayLanguage",
    "schema": {"type": "string", "pattern": r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$"},
    "description": "a language tag such as en or en-US",
}
_URL = {
    "name": "url",
    "schema": _TEXT,
    "description": "value set: {system uri}?fhir_vs, or {system uri}?fhir_vs=isa/{code} for a subtree",
}

_VALUE_SET_URL = {
    **_URL,
    "required": True,  # by GET; a POSTed Parameters may pass the value set itself as valueSet instead
    "description": "the value set: implicit ({system}?fhir_vs[=isa/{code}]), or a tx-resource's url (POST)",
}
_VALUE_SET_VERSION = {"name": "valueSetVersion", "schema": _TEXT, "description": "the version of the value set named by url"}
EXPAND = [
    _VALUE_SET_URL,
    _VALUE_SET_VERSION,
    {
        "name": "filter",
        "schema": {"type": "string", "maxLength": SEARCH.max_query_length},
        "description": "text to search for by meaning; the last, unfinished word is completed",
    },
    {"name": "count", "schema": {"type": "integer", "minimum": 0, "maximum": FHIR.max_count}, "description": "codes per page"},
    {"name": "offset", "schema": {"type": "integer", "minimum": 0, "maximum": INT32}, "description": "first code of the page"},
    {"name": "activeOnly", "schema": _BOOLEAN, "description": "leave out inactive codes"},
    {"name": "includeDesignations", "schema": _BOOLEAN, "description": "list each code's designations"},
    _LANGUAGE,
    {"name": "excludeNotForUI", "schema": _BOOLEAN, "description": "leave out abstract codes (chapters, blocks)"},
    {"name": "excludeNested", "schema": _BOOLEAN, "description": "a flat list (expansions here always are)"},
    {"name": "abstract", "schema": _BOOLEAN, "description": "false: leave out abstract codes (as excludeNotForUI)"},
    {
        "name": "min_confidence",
        "schema": {"type": "number", "minimum": 0, "maximum": 1},
        "description": f"least confidence of a filtered code (default {SEARCH.confidence_threshold})",
    },
]
_ABSTRACT = {"name": "abstract", "schema": _BOOLEAN, "description": "false: an abstract code (chapter, block) is not valid"}
VALUE_SET_VALIDATE = [
    _VALUE_SET_URL,
    _VALUE_SET_VERSION,
    _SYSTEM,
    _CODE,
    {**_VERSION, "name": "systemVersion"},
    _DISPLAY,
    {"name": "inferSystem", "schema": _BOOLEAN, "description": "true: a code without a system is of the value set's system"},
    {"name": "activeOnly", "schema": _BOOLEAN, "description": "true: an inactive code is not valid"},
    _ABSTRACT,
]
LOOKUP = [
    {**_SYSTEM, "required": True},
    {**_CODE, "required": True},
    _VERSION,
    _LANGUAGE,
    {
        "name": "property",
        "schema": {"type": "array", "items": _TEXT},
        "explode": True,
        "description": "properties to return (repeatable): designation, parent, child, definition, inactive, ...",
    },
]
CODE_SYSTEM_VALIDATE = [
    {**_URL, "required": True, "description": "code system URI"},
    {**_CODE, "required": True},
    _VERSION,
    _DISPLAY,
    _ABSTRACT,
]
TRANSLATE = [
    {**_SYSTEM, "required": True},
    {**_CODE, "required": True},
    {"name": "targetsystem", "schema": _TEXT, "description": "code system URI to translate into"},
    {"name": "target", "schema": _TEXT, "description": "value set URL to translate into (e.g. a subtree)"},
]

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


def get_operation(parameters: list[dict[str, Any]]) -> dict[str, Any]:
    """``openapi_extra`` of an operation's GET: its query parameters."""
    return {"parameters": [{"in": "query", **parameter} for parameter in parameters]}


def post_operation() -> dict[str, Any]:
    """``openapi_extra`` of an operation's POST: a FHIR ``Parameters`` resource as the body."""
    content = {"schema": _PARAMETERS_BODY}
    return {"requestBody": {"required": True, "content": {"application/fhir+json": content, "application/json": content}}}
