"""``GET /fhir/metadata``: the CapabilityStatement, or with ``mode=terminology`` the
TerminologyCapabilities (code systems and versions, expansion parameters, text filter).

Both describe this instance (``kind`` instance, with ``implementation``): their canonical ``url``
and the implementation's ``url`` come from the configured public base (``TERMSEARCH_FHIR__BASE_URL``),
never from the request's Host; without one, the canonical url is a URN and the implementation has
no url."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from indexer.bundle import SystemRange

FHIR_VERSION = "4.0.1"
SOFTWARE = {"name": "termsearch", "version": "0.1.0"}
RELEASE_DATE = "2026-11-25"  # CapabilityStatement.software only; TerminologyCapabilities has none
# The HL7 terminology-ecosystem test cases this server is run against (tests/fhir/tx_ecosystem).
TEST_CASES_VERSION = "1.9.3"
FEATURE = "http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature"
IMPLEMENTATION = "termsearch semantic terminology server"
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
    "excludeNested": "accepted with either value: expansions are always flat",
    "includeDefinition": "list each code's definition (as the R5 definition extension)",
    "property": "list these properties of each code (parent, child, definition, inactive, and the code system's own)",
    "tx-resource": "ValueSet resources that the request's value set and its imports may refer to",
    "system-version": "system|version: the version of a code system where the value set names none",
    "check-system-version": "system|version: an error unless the code system's version used is this one",
    "force-system-version": "system|version: the version of a code system used whatever the value set says",
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


def _describing(resource_type: str, title: str, base_url: str | None, path: str) -> dict[str, Any]:
    """The metadata elements the two resources share: url, version, name, title, status, date,
    kind, software and implementation."""
    url = f"{base_url.rstrip('/')}/{path}" if base_url else f"urn:termsearch:fhir:{resource_type}"
    implementation = {"description": IMPLEMENTATION} | ({"url": base_url} if base_url else {})
    return {
        "resourceType": resource_type,
        "url": url,
        "version": SOFTWARE["version"],
        "name": f"Termsearch{resource_type}",
        "title": title,
        "status": "active",
        "date": _now(),
        "kind": "instance",
        "software": SOFTWARE,
        "implementation": implementation,
    }


def _feature(definition: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"url": FEATURE, "extension": [{"url": "definition", "valueCanonical": definition}, {"url": "value", **value}]}


def capability_statement(base_url: str | None) -> dict[str, Any]:
    read_and_search = [{"code": "read"}, {"code": "search-type"}]
    resources = [
        {
            "type": kind,
            **({"interaction": read_and_search} if kind in ("CodeSystem", "ValueSet") else {}),
            "operation": [
                {"name": name, "definition": f"http://hl7.org/fhir/OperationDefinition/{kind}-{name}"}
                for name in names
            ],
        }
        for kind, names in OPERATIONS.items()
    ]
    features = [
        _feature("http://hl7.org/fhir/uv/tx-tests/FeatureDefinition/test-version", {"valueCode": TEST_CASES_VERSION}),
        # Code systems are the loaded ones: none is taken from a request's tx-resource.
        _feature("http://hl7.org/fhir/uv/tx-ecosystem/FeatureDefinition/CodeSystemAsParameter", {"valueBoolean": False}),
    ]
    versions = {"name": "versions", "definition": "http://hl7.org/fhir/OperationDefinition/CapabilityStatement-versions"}
    return _describing("CapabilityStatement", "termsearch FHIR terminology server", base_url, "metadata") | {
        "extension": features,
        "software": SOFTWARE | {"releaseDate": RELEASE_DATE},
        "instantiates": ["http://hl7.org/fhir/CapabilityStatement/terminology-server"],
        "fhirVersion": FHIR_VERSION,
        "format": ["application/fhir+json", "json"],
        "rest": [{"mode": "server", "resource": resources, "operation": [versions]}],
    }


def versions() -> dict[str, Any]:
    """``$versions``: the FHIR versions served (R4 only)."""
    release = FHIR_VERSION.rsplit(".", 1)[0]
    parameters = [{"name": "version", "valueCode": release}, {"name": "default", "valueCode": release}]
    return {"resourceType": "Parameters", "parameter": parameters}


def terminology_capabilities(systems: Iterable[SystemRange], base_url: str | None) -> dict[str, Any]:
    title = "termsearch terminology capabilities"
    return _describing("TerminologyCapabilities", title, base_url, "metadata?mode=terminology") | {
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
