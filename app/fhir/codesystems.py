"""The loaded code systems as FHIR CodeSystem resources (read by id, search by url and version):
their identity, size and the properties ``$lookup`` and ``$expand`` give of a concept, no concepts
(``content: not-present``; ``$lookup`` and ``$expand`` give those)."""

from __future__ import annotations

from typing import Any

from app.errors import NotFound
from app.fhir.context import FhirContext
from app.fhir.searchset import searchset
from indexer.bundle import SystemRange

_CONCEPT_PROPERTIES = "http://hl7.org/fhir/concept-properties"
# The properties of every loaded system's concepts, and those of a system that marks billable codes.
PROPERTIES = (
    {"code": "parent", "uri": f"{_CONCEPT_PROPERTIES}#parent", "description": "a concept above it by is-a", "type": "code"},
    {"code": "child", "uri": f"{_CONCEPT_PROPERTIES}#child", "description": "a concept below it by is-a", "type": "code"},
    {"code": "inactive", "uri": f"{_CONCEPT_PROPERTIES}#inactive", "description": "true: no longer in use", "type": "boolean"},
    {"code": "notSelectable", "uri": f"{_CONCEPT_PROPERTIES}#notSelectable",
     "description": "true: a grouping (a chapter or block of codes), not a code to record", "type": "boolean"},
)  # fmt: skip
BILLABLE_PROPERTIES = (
    {"code": "kind", "description": "chapter, block, category or code", "type": "code"},
    {"code": "billable", "description": "true: a code a claim or a form may record (a leaf)", "type": "boolean"},
)


def code_system(system: SystemRange, billable: bool = False) -> dict[str, Any]:
    """``billable``: the system marks billable codes (ICD-10-CM): its kind and billable properties too."""
    return {
        "resourceType": "CodeSystem",
        "id": system.key,
        "url": system.uri,
        "version": system.version,
        "name": "".join(part for part in system.key.title() if part.isalnum()),
        "title": system.name,
        "status": "active",
        "content": "not-present",
        "count": system.concepts,
        "property": [*PROPERTIES, *(BILLABLE_PROPERTIES if billable else ())],
    }


def by_id(systems: dict[str, SystemRange], key: str) -> SystemRange:
    """A loaded code system by its id (its key)."""
    system = systems.get(key)
    if system is None:
        raise NotFound(f"CodeSystem/{key} is unknown; loaded: {', '.join(systems)}")
    return system


def read(context: FhirContext, key: str) -> dict[str, Any]:
    system = by_id(context.bundle.systems, key)
    return code_system(system, context.billable(system) is not None)


def search(context: FhirContext, url: str | None, version: str | None) -> dict[str, Any]:
    """A searchset Bundle of the loaded code systems with this ``url`` and ``version`` (each optional)."""
    found = [s for s in context.bundle.systems.values() if url in (None, s.uri) and version in (None, s.version)]
    return searchset([(f"CodeSystem/{s.key}", code_system(s, context.billable(s) is not None)) for s in found])
