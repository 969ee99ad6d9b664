"""``GET /fhir/metadata``: the CapabilityStatement, or with ``mode=terminology`` the
TerminologyCapabilities (code systems and versions, expansion parameters, text filter)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from indexer.bundle import SystemRange

FHIR_VERSION = "4.0.1"
SOFTWARE = {"name": "termsearch", "version": "0.1.0"}
OPERATIONS = {
    "CodeSystem": ("lookup", "validate-code"),
    "ValueSet": ("expand", "validate-code"),
    "ConceptMap": ("translate",),
}
EXPANSION_PARAMETERS = {
    "url": "an implicit value set: {system}?fhir_vs (every code) or {system}?fhir_vs=isa/{code} (a subtree)",
    "filter": "text to search for; ranked by hybrid semantic search, the last word matching as a prefix",
    "count": "codes per page",
    "offset": "where the page starts",
    "activeOnly": "leave out inactive codes",
    "includeDesignations": "list each code's designations",
    "displayLanguage": "the display in this language where the code system has one",
    "excludeNotForUI": "leave out the abstract codes (ICD-10-CM chapters and blocks), listed otherwise with abstract=true",
}
TEXT_FILTER = (
    "Semantic search, not string matching: the filter text is matched by meaning (a sentence encoder "
    "over every label, synonyms included) fused by reciprocal rank fusion with BM25 over stemmed words, "
    "where the last, partly typed word also matches as a prefix ('tachyc' finds Tachycardia). Lay words "
    "find clinical terms ('hearing loss' finds Hearing impairment). Results are ranked best first; "
    "an expansion holds the best-ranked codes (at most the server's filter depth), paged by offset and count."
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def capability_statement(base_url: str | None) -> dict[str, Any]:
    """``base_url``: the configured public FHIR base (``TERMSEARCH_FHIR__BASE_URL``), never the
    request's Host; without one the implementation has no url."""
    resources = [
        {
            "type": kind,
            "operation": [
                {"name": name, "definition": f"http://hl7.org/fhir/OperationDefinition/{kind}-{name}"}
                for name in names
            ],
        }
        for kind, names in OPERATIONS.items()
    ]
    return {
        "resourceType": "CapabilityStatement",
        "status": "active",
        "date": _now(),
        "kind": "instance",
        "instantiates": ["http://hl7.org/fhir/CapabilityStatement/terminology-server"],
        "software": SOFTWARE,
        "implementation": {"description": "termsearch semantic terminology server"} | ({"url": base_url} if base_url else {}),
        "fhirVersion": FHIR_VERSION,
        "format": ["json"],
        "rest": [{"mode": "server", "resource": resources}],
    }


def terminology_capabilities(systems: Iterable[SystemRange]) -> dict[str, Any]:
    return {
        "resourceType": "TerminologyCapabilities",
        "status": "active",
        "date": _now(),
        "kind": "instance",
        "software": SOFTWARE,
        "codeSystem": [
            {
                "uri": system.uri,
                "version": [
                    {
                        "code": system.version,
                        "isDefault": True,
                        "property": ["parent", "child", "definition", "inactive"],
                    }
                ],
            }
            for system in systems
        ],
        "expansion": {
            "hierarchical": False,
            "paging": True,
            "parameter": [{"name": name, "documentation": text} for name, text in EXPANSION_PARAMETERS.items()],
            "textFilter": TEXT_FILTER,
        },
        "validateCode": {"translations": False},
        "translation": {"needsMap": False},
    }
