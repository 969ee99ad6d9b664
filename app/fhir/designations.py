"""Designations (a concept's labels) in FHIR form, and the display for a requested language."""

from __future__ import annotations

from typing import Any

from indexer.records import Concept, Designation, DesignationUse

SNOMED = "http://snomed.info/sct"
USES = {
    # The display, where listed as a designation ($lookup): the preferred term of its language.
    DesignationUse.PREFERRED: {
        "system": "http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra", "code": "preferredForLanguage",
        "display": "Preferred For Language",
    },
    DesignationUse.FSN: {"system": SNOMED, "code": "900000000000003001", "display": "Fully specified name"},
    DesignationUse.SYNONYM: {"system": SNOMED, "code": "900000000000013009", "display": "Synonym"},
}


TYPE_EXTENSION = "urn:termsearch:fhir:designation-type"
ORIGIN_EXTENSION = "urn:termsearch:fhir:designation-origin"
SOURCE_EXTENSION = "urn:termsearch:fhir:designation-source"


def designation(d: Designation) -> dict[str, Any]:
    """language, use, value; and as extensions the label's type (layperson, abbreviation,
    inclusion...) and, for a label a knowledge source added, that source and the origin."""
    out: dict[str, Any] = {"language": d.language, "use": USES.get(d.use, USES[DesignationUse.SYNONYM]), "value": d.text}
    extensions = [{"url": TYPE_EXTENSION, "valueCode": d.type}] if d.type else []
    if d.knowledge:
        extensions.append({"url": SOURCE_EXTENSION, "valueCode": d.knowledge})
        extensions.append({"url": ORIGIN_EXTENSION, "valueString": d.origin or d.knowledge})
    if extensions:
        out["extension"] = extensions
    return out


def designations(labels: list[Designation]) -> list[dict[str, Any]]:
    """The active labels other than the display (which FHIR gives as ``display``)."""
    return [designation(d) for d in labels if d.active and d.use != DesignationUse.PREFERRED]


def _matches(tag: str, wanted: str) -> bool:
    tag, wanted = tag.lower(), wanted.lower()
    return tag == wanted or tag.startswith(f"{wanted}-")


def has_language(concept: Concept, language: str) -> bool:
    """Whether any active label of the concept is in ``language`` (``en`` matches ``en-US``)."""
    return any(d.active and _matches(d.language, language) for d in concept.designations)


def display_in(concept: Concept, language: str | None) -> str:
    """The display in ``language`` (preferred label first, then any label in it), else the default."""
    if language is None:
        return concept.display
    in_language = [d for d in concept.designations if d.active and _matches(d.language, language)]
    if not in_language:
        return concept.display
    return next((d for d in in_language if d.use == DesignationUse.PREFERRED), in_language[0]).text


def displays(concept: Concept) -> set[str]:
    """Every text that is a valid display of the concept (case-insensitive)."""
    return {concept.display.casefold()} | {d.text.casefold() for d in concept.designations if d.active}
