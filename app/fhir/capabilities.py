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

from app.fhir.operations import EXPAND, OPERATIONS, definition_url
from indexer.bundle import SystemRange

FHIR_VERSION = "4.0.1"
SOFTWARE = {"name": "termsearch", "version": "0.1.0"}
RELEASE_DATE = "2026-11-25"  # CapabilityStatement.software only; TerminologyCapabilities has none
# The HL7 terminology-ecosystem test cases this server is run against (tests/fhir/tx_ecosystem).
TEST_CASES_VERSION = "1.9.3"
FEATURE = "http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature"
IMPLEMENTATION = "termsearch semantic terminology server"
TEXT_FILTER = (
    "Semantic search, not string matching: the filter text is matched by meaning (a sentence encoder "
    "over every label, synonyms, lay terms and abbreviations included) and by words (BM25 over stemmed "
    "words, character n-grams for misspellings), and each code's features are combined into a calibrated "
    "confidence, the chance that it is the code meant. The last, partly typed word is completed "
    "('tachyc' finds Tachycardia); lay words find clinical terms ('hearing loss' finds Hearing impairment). "
    "Codes are ranked best first, those under min_confidence left out, except a code whose display holds "
    "every word of the filter, which is always listed; an expansion holds the best-ranked codes (at most "
    "the server's filter depth), paged by offset and count."
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
    kinds = dict.fromkeys(operation.resource for operation in OPERATIONS)
    resources = [
        {
            "type": kind,
            **({"interaction": read_and_search} if kind in ("CodeSystem", "ValueSet") else {}),
            "operation": [
                {
                    "name": operation.code,
                    "definition": definition_url(operation, base_url),
                    "documentation": operation.documentation,
                }
                for operation in OPERATIONS
                if operation.resource == kind
            ],
        }
        for kind in kinds
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
                "subsumption": True,  # CodeSystem/$subsumes, by the bundle's is-a links
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
            "parameter": [{"name": p.name, "documentation": p.documentation} for p in EXPAND.parameters],
            "textFilter": TEXT_FILTER,
        },
        "validateCode": {"translations": False},
        "translation": {"needsMap": False},
    }
