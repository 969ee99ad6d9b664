"""The loaded code systems as FHIR CodeSystem resources (read by id, search by url and version):
their identity and size, no concepts (``content: not-present``; ``$lookup`` and ``$expand``
give those)."""

from __future__ import annotations

from typing import Any

from app.errors import NotFound
from app.fhir.searchset import searchset
from indexer.bundle import SystemRange


def code_system(system: SystemRange) -> dict[str, Any]:
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
    }


def by_id(systems: dict[str, SystemRange], key: str) -> SystemRange:
    """A loaded code system by its id (its key)."""
    system = systems.get(key)
    if system is None:
        raise NotFound(f"CodeSystem/{key} is unknown; loaded: {', '.join(systems)}")
    return system


def read(systems: dict[str, SystemRange], key: str) -> dict[str, Any]:
    return code_system(by_id(systems, key))


def search(systems: dict[str, SystemRange], url: str | None, version: str | None) -> dict[str, Any]:
    """A searchset Bundle of the loaded code systems with this ``url`` and ``version`` (each optional)."""
    found = [s for s in systems.values() if url in (None, s.uri) and version in (None, s.version)]
    return searchset([(f"CodeSystem/{s.key}", code_system(s)) for s in found])
