"""``CodeSystem/$lookup``, ``CodeSystem/$validate-code`` and ``ValueSet/$validate-code``.

$lookup answers a code's display, designations and properties (parent, child, definition,
inactive, and the store's scalar properties such as ICD-10-CM's ``kind`` and ``billable``); an
unknown system or code is a 404 OperationOutcome. $validate-code answers ``result`` true or
false (with ``message`` and ``issues``) with 200; only an unknown code system or value set to
validate against, or missing parameters, are errors.
"""

from __future__ import annotations

from typing import Any

from app.fhir.context import FhirContext
from app.search.designations import all_designations
from app.fhir.designations import designation, display_in, displays
from app.errors import InvalidParameter, NotFound, UnknownCode
from app.fhir.outcome import operation_outcome
from app.fhir.params import Coding, OperationParams
from app.fhir.valuesets import ValueSetRef, parse_value_set
from indexer.bundle import SystemRange

PROPERTY_TYPES = {bool: "valueBoolean", int: "valueInteger", str: "valueString"}
_PART_TYPES = {"language": "valueCode", "use": "valueCoding", "value": "valueString"}


def _required_coding(params: OperationParams, system_name: str) -> Coding:
    coding = params.coding("code", system_name)
    if coding is None:
        raise InvalidParameter("code: required (or coding)")
    return coding


def lookup(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    coding = _required_coding(params, "system")
    if not coding.system:
        raise InvalidParameter("system: required")
    system = context.system(coding.system)
    if coding.version and coding.version != system.version:
        raise NotFound(f"version {coding.version!r} of {system.uri} is not loaded; loaded: {system.version}")
    context.row(system, coding.code)
    detail = context.detail(system, coding.code)
    if detail is None:
        raise UnknownCode(f"code {coding.code!r} is not in the concept store's {system.uri}")
    concept = detail.concept
    wanted = set(params.texts("property"))
    properties: list[tuple[str, dict[str, Any], str | None]] = [
        *(("parent", {"valueCode": p.code}, p.display) for p in detail.parents),
        *(("child", {"valueCode": c.code}, c.display) for c in detail.children),
        *(("definition", {"valueString": d.text}, None) for d in concept.definitions),
        ("inactive", {"valueBoolean": not concept.active}, None),
        *(
            (name, {PROPERTY_TYPES[type(value)]: value}, None)
            for name, value in concept.properties.items()
            if type(value) in PROPERTY_TYPES
        ),
    ]
    out: list[dict[str, Any]] = [
        {"name": "name", "valueString": system.name},
        {"name": "version", "valueString": system.version},
        {"name": "display", "valueString": display_in(concept, params.language("displayLanguage"))},
    ]
    if not wanted or "designation" in wanted:
        for label in all_designations(concept, context.bundle, system.key):
            if label.active:
                fields = designation(label)
                extensions = fields.pop("extension", None)
                parts = [{"name": key, _PART_TYPES[key]: value} for key, value in fields.items()]
                out.append({"name": "designation", "part": parts} | ({"extension": extensions} if extensions else {}))
    for code, value, description in properties:
        if not wanted or code in wanted:
            parts = [{"name": "code", "valueCode": code}, {"name": "value", **value}]
            if description is not None:
                parts.append({"name": "description", "valueString": description})
            out.append({"name": "property", "part": parts})
    return {"resourceType": "Parameters", "parameter": out}


def validate_in_code_system(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    coding = _required_coding(params, "url")
    url = params.text("url") or coding.system
    if not url:
        raise InvalidParameter("url: required (or a coding with a system)")
    system = context.system(url)
    if coding.system and coding.system != system.uri:
        return _negative(f"the coding's system {coding.system} is not {system.uri}", "invalid-data", coding)
    return _validate(context, system, coding, None)


def validate_in_value_set(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    value_set = parse_value_set(context, params.required_text("url"))
    coding = _required_coding(params, "system")
    if not coding.system:
        raise InvalidParameter("system: required with code")
    if coding.system != value_set.system.uri:
        return _negative(f"no code of {coding.system} is in the value set {value_set.url}", "not-in-vs", coding)
    return _validate(context, value_set.system, coding, value_set)


def _validate(
    context: FhirContext, system: SystemRange, coding: Coding, value_set: ValueSetRef | None
) -> dict[str, Any]:
    if coding.version and coding.version != system.version:
        text = f"version {coding.version!r} of {system.uri} is not loaded; loaded: {system.version}"
        return _negative(text, "not-found", coding)
    row = context.bundle.concept_index(system.key, coding.code)
    if row is None:
        text = f"unknown code {coding.code!r} in {system.uri} version {system.version}"
        return _negative(text, "invalid-code", coding)
    concept = context.concept(row)
    if value_set is not None and row not in value_set:
        return _negative(f"{system.uri}#{coding.code} is not in the value set {value_set.url}", "not-in-vs", coding)
    if coding.display:
        detail = context.detail(system, coding.code)
        valid = displays(detail.concept) if detail is not None else {concept.display.casefold()}
        if coding.display.casefold() not in valid:
            text = f"wrong display {coding.display!r} for {system.uri}#{coding.code}: it is {concept.display!r}"
            return _negative(text, "invalid-display", coding, concept.display)
    out = [
        {"name": "result", "valueBoolean": True},
        {"name": "code", "valueCode": concept.code},
        {"name": "system", "valueUri": system.uri},
        {"name": "version", "valueString": system.version},
        {"name": "display", "valueString": concept.display},
    ]
    if not concept.active:
        out.append({"name": "inactive", "valueBoolean": True})
    return {"resourceType": "Parameters", "parameter": out}


_ISSUE_CODES = {"invalid-display": "invalid", "invalid-data": "invalid", "not-found": "not-found"}


def _negative(message: str, tx_code: str, coding: Coding, display: str | None = None) -> dict[str, Any]:
    """``result`` false, with the reason as ``message`` and as an OperationOutcome in ``issues``."""
    out: list[dict[str, Any]] = [
        {"name": "result", "valueBoolean": False},
        {"name": "message", "valueString": message},
        {"name": "code", "valueCode": coding.code},
    ]
    if coding.system:
        out.append({"name": "system", "valueUri": coding.system})
    if display is not None:
        out.append({"name": "display", "valueString": display})
    issues = operation_outcome(message, _ISSUE_CODES.get(tx_code, "code-invalid"), tx_code)
    out.append({"name": "issues", "resource": issues})
    return {"resourceType": "Parameters", "parameter": out}
