"""``CodeSystem/$lookup``: a code's display, definition, ``abstract`` (ICD-10-CM chapters and
blocks), designations (besides the display; a supplement's only with ``useSupplement``) and
properties (parent, child, inactive, notSelectable, definition when asked for, and the store's
scalar properties such as ICD-10-CM's ``kind`` and ``billable``); an unknown system or code is a
404 OperationOutcome. ($validate-code:
``app.fhir.validate``.)
"""

from __future__ import annotations

from typing import Any

from app.errors import InvalidParameter, NotFound, UnknownCode
from app.fhir.context import FhirContext
from app.fhir.designations import designation, display_in
from app.fhir.params import OperationParams
from app.fhir.supplements import PREFIX as SUPPLEMENT_PREFIX
from app.fhir.supplements import requested, used
from app.search.designations import all_designations

PROPERTY_TYPES = {bool: "valueBoolean", int: "valueInteger", str: "valueString"}
_PART_TYPES = {"language": "valueCode", "use": "valueCoding", "value": "valueString"}


def lookup(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    coding = params.coding("code", "system")
    if coding is None:
        raise InvalidParameter("code: required (or coding)")
    named = params.text("system")
    if coding.system and named and coding.system != named:  # a coding of another system than the one named
        raise InvalidParameter(f"coding.system: {coding.system} is not the system {named}", "coding.system")
    uri = coding.system or named
    if not uri:
        raise InvalidParameter("system: required")
    system = context.system(uri)
    if coding.version and coding.version != system.version:
        raise NotFound(f"version {coding.version!r} of {system.uri} is not loaded; loaded: {system.version}")
    row = context.row(system, coding.code)
    detail = context.detail(system, coding.code)
    if detail is None:
        raise UnknownCode(f"code {coding.code!r} is not in the concept store's {system.uri}")
    concept = detail.concept
    wanted = set(params.texts("property")) - {"*"}  # "*" (every property) is the same as none named
    grouping = context.concept(row).grouping
    properties: list[tuple[str, dict[str, Any], str | None]] = [
        *(("parent", {"valueCode": p.code}, p.display) for p in detail.parents),
        *(("child", {"valueCode": c.code}, c.display) for c in detail.children),
        *(("definition", {"valueString": d.text}, None) for d in concept.definitions if "definition" in wanted),
        ("inactive", {"valueBoolean": not concept.active}, None),
        *((("notSelectable", {"valueBoolean": True}, None),) if grouping else ()),
        *(
            (name, {PROPERTY_TYPES[type(value)]: value}, None)
            for name, value in concept.properties.items()
            if type(value) in PROPERTY_TYPES
        ),
    ]
    out: list[dict[str, Any]] = [
        {"name": "name", "valueString": system.name},
        {"name": "version", "valueString": system.version},
        {"name": "code", "valueCode": concept.code},
        {"name": "system", "valueUri": system.uri},
        {"name": "display", "valueString": display_in(concept, params.language("displayLanguage"))},
        *({"name": "definition", "valueString": d.text} for d in concept.definitions[:1]),
        *(({"name": "abstract", "valueBoolean": True},) if grouping else ()),
    ]
    sources = requested(context, params)
    if not wanted or "designation" in wanted:
        for label in all_designations(concept, context.bundle, system.key, sources):
            if label.active:  # the display too, as its language's preferred term
                fields = designation(label)
                extensions = fields.pop("extension", None)
                parts = [{"name": key, _PART_TYPES[key]: value} for key, value in fields.items()]
                if label.knowledge in sources:  # from a supplement asked for: which one
                    parts.append({"name": "source", "valueCanonical": SUPPLEMENT_PREFIX + label.knowledge})
                out.append({"name": "designation", "part": parts} | ({"extension": extensions} if extensions else {}))
    for code, value, description in properties:
        if not wanted or code in wanted:
            parts = [{"name": "code", "valueCode": code}, {"name": "value", **value}]
            if description is not None:
                parts.append({"name": "description", "valueString": description})
            out.append({"name": "property", "part": parts})
    return {"resourceType": "Parameters", "parameter": out + used(sources, "valueCanonical")}
