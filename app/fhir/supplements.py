"""Supplements: what a bundle's knowledge adds to a code system's own designations (the
abbreviation and lay-term tables, cross-terminology alignments), each offered as a CodeSystem
supplement named ``urn:termsearch:supplement:{source}`` (``...:abbreviations``, ``...:lay_terms``,
``...:alignments``).

``$lookup`` and ``$expand`` list a concept's designations from a supplement only where the request
names it in ``useSupplement`` (or the value set in its ``valueset-supplement`` extension); a
supplement that is not there is refused with a 404 naming the ones that are.
"""

from __future__ import annotations

from typing import Any

from app.errors import NotFound
from app.fhir.context import FhirContext
from app.fhir.params import OperationParams

PREFIX = "urn:termsearch:supplement:"
VALUESET_SUPPLEMENT = "http://hl7.org/fhir/StructureDefinition/valueset-supplement"


def used(sources: frozenset[str], kind: str = "valueUri") -> list[dict[str, Any]]:
    """The ``used-supplement`` parameters an answer lists for the supplements it drew on."""
    return [{"name": "used-supplement", kind: PREFIX + source} for source in sorted(sources)]


def requested(context: FhirContext, params: OperationParams, value_set: dict[str, Any] | None = None) -> frozenset[str]:
    """The knowledge sources of the supplements the request (and the value set) asks for."""
    urls = list(params.texts("useSupplement"))
    for extension in (value_set or {}).get("extension", []):
        if isinstance(extension, dict) and extension.get("url") == VALUESET_SUPPLEMENT:
            urls.append(str(extension.get("valueCanonical") or extension.get("valueUri") or ""))
    known = context.bundle.knowledge_sources
    sources = set()
    for url in urls:
        canonical = url.partition("|")[0]
        source = canonical.removeprefix(PREFIX)
        if not canonical.startswith(PREFIX) or source not in known:
            offered = ", ".join(PREFIX + name for name in sorted(known)) or "none"
            raise NotFound(f"supplement {url!r} is unknown; supplements here: {offered}", "useSupplement")
        sources.add(source)
    return frozenset(sources)
