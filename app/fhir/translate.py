"""``ConceptMap/$translate``: stored mappings first, then semantic candidates.

- Stored, as the relationship the source states: SNOMED CT historical associations
  (``same_as``/``replaced_by`` ``equivalent``, ``possibly_equivalent_to`` ``inexact``, ``was_a``
  ``wider``, others ``relatedto``), and the concept's xrefs (HPO carries ``UMLS:C…``,
  ``SNOMEDCT_US:…``), ``relatedto``: an xref states no relationship, except in the UMLS-wide
  system, whose xrefs are the codes of the concept's own atoms (``equivalent``).
- Aligned: the concepts the build aligned with it (``indexer.knowledge.alignment``): ``equivalent``
  at score 0.95 or more (a preferred name on either side), else ``inexact``; evidence in an extension.
- Semantic: the concepts of the target that the ranking core puts first for the source's labels
  (as ``/similar``), as ``relatedto`` (unreviewed), each with its confidence (extension ``SCORE``).

``result`` is true when there is a stored or aligned match; semantic candidates alone leave it
false (with a ``message``), as they are unreviewed.

With ``reverse``, the matches are the concepts that map *to* the given one: the inactive
concepts whose historical associations name it (``wider`` read back as ``narrower``), the
alignments (which hold both ways) and semantic candidates (ranked the same way). A concept's own
xrefs state a mapping one way only, so they are not listed then.

A request that carries ConceptMaps (``tx-resource``, ``conceptMap``) is translated by them alone
(:mod:`app.fhir.concept_maps`). The target is ``targetsystem`` (a code system URI) or ``target`` (a value set URL, e.g. a
subtree); without either, every loaded system but the source's gets semantic candidates.

The source is ``system`` and ``code``, a ``coding`` or a ``codeableConcept`` (its first coding of a
loaded system); R5's names (``sourceCode``, ``sourceCoding``, ``sourceCodeableConcept``,
``targetSystem``, ``targetScope``, and ``sourceSystem`` as HL7's test suite writes ``system``)
are read as the R4 parameters they rename (declared with ``alias_of``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from app.errors import InvalidParameter, NotFound
from app.fhir.concept_maps import translate_by_maps
from app.fhir.context import FhirContext
from app.fhir.expand import SCORE
from app.fhir.params import Coding, OperationParams
from app.fhir.valuesets import ValueSetRef, parse_value_set
from app.search.scope import Scope
from app.search.similar import concept_labels, match_labels
from app.search.values import Mode, Ranked
from indexer.bundle import SystemRange

XREF_SYSTEMS = {
    "UMLS": "http://www.nlm.nih.gov/research/umls",
    "SNOMEDCT_US": "http://snomed.info/sct",
    "SNOMEDCT": "http://snomed.info/sct",
    "SCTID": "http://snomed.info/sct",
    "ICD10CM": "http://hl7.org/fhir/sid/icd-10-cm",
}
EVIDENCE = "urn:termsearch:fhir:alignment-evidence"
ASSOCIATION_EQUIVALENCE = {
    "same_as": "equivalent",
    "replaced_by": "equivalent",
    "possibly_equivalent_to": "inexact",
    "was_a": "wider",
}
REVERSED = {"wider": "narrower", "narrower": "wider", "subsumes": "specializes", "specializes": "subsumes"}
# Systems whose xrefs state synonymy: the UMLS-wide system's are the codes of the CUI's own atoms.
SYNONYMOUS_XREFS = frozenset({"umls"})


@dataclass(frozen=True)
class _Target:
    """Where matches may land: one system (maybe narrowed to a value set), or any system."""

    context: FhirContext
    system: SystemRange | None
    value_set: ValueSetRef | None

    def accepts(self, uri: str, code: str) -> bool:
        if self.system is None:
            return True
        if uri != self.system.uri:
            return False
        row = self.context.bundle.concept_index(self.system.key, code)
        return self.value_set is None or (row is not None and row in self.value_set)


def translate(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    reverse = params.boolean("reverse")
    coding, uri = _source(context, params)
    maps = params.resources("conceptMap", "ConceptMap") + params.resources("tx-resource", "ConceptMap")
    if maps:
        return translate_by_maps(maps, coding, params.text("targetsystem"), bool(reverse))
    if params.text("url"):
        raise NotFound("no ConceptMap is stored here: give one as tx-resource, or translate with system and code")
    source = context.system(uri)
    row = context.row(source, coding.code)
    target = _target(context, params)

    matches: dict[tuple[str, str], dict[str, Any]] = {}
    if reverse:
        stored = _reversed(context, source, coding.code)
    elif (detail := context.detail(source, coding.code)) is not None:
        stored = _stored(context, source, detail.concept.xrefs, detail.concept.associations)
    else:
        stored = []
    for uri, code, equivalence in stored:
        if target.accepts(uri, code):
            matches.setdefault((uri, code), _match(context, uri, code, equivalence))
    for aligned in context.bundle.alignments.get(row, []):
        other = context.concept(aligned.row)
        uri = context.bundle.systems[other.system].uri
        if target.accepts(uri, other.code):
            equivalence = "equivalent" if aligned.score >= 0.95 else "inexact"
            evidence = f"{aligned.method} alignment: {aligned.evidence}"
            matches.setdefault((uri, other.code), _match(context, uri, other.code, equivalence, aligned.score, evidence))
    reviewed = len(matches)
    for system in [target.system] if target.system else [s for s in context.bundle.systems.values() if s != source]:
        for hit in _semantic(context, system, target.value_set, row):
            code = context.concept(hit.row).code
            matches.setdefault((system.uri, code), _match(context, system.uri, code, "relatedto", hit.score))

    out: list[dict[str, Any]] = [{"name": "result", "valueBoolean": reviewed > 0}]
    if not reviewed:
        candidates = f"{len(matches)} unreviewed semantic candidates" if matches else "no semantic candidate"
        text = f"no stored mapping or alignment for {source.uri}#{coding.code}; {candidates}"
        out.append({"name": "message", "valueString": text})
    out += matches.values()
    return {"resourceType": "Parameters", "parameter": out}


def _source(context: FhirContext, params: OperationParams) -> tuple[Coding, str]:
    """The coding to translate and its system: ``coding``, else of a ``codeableConcept`` the first
    coding of a loaded code system (else its first), else ``code`` and ``system`` (or their R5
    names); a coding without a system is of ``system``."""
    coding = params.coding("code", "system")
    if coding is None and (codings := params.codeable_concept()) is not None:
        coding = next((c for c in codings if context.system_or_none(c.system) is not None), codings[0])
    uri = None if coding is None else coding.system or params.text("system")
    if coding is None or not uri:
        raise InvalidParameter("code and system: required (or coding, or codeableConcept)")
    return replace(coding, system=uri), uri


def _target(context: FhirContext, params: OperationParams) -> _Target:
    if (url := params.text("target")) is not None:
        value_set = parse_value_set(context, url)  # an implicit value set: one system
        return _Target(context, value_set.systems[0], value_set)
    if (uri := params.text("targetsystem")) is not None:
        return _Target(context, context.system(uri), None)
    return _Target(context, None, None)


def _stored(
    context: FhirContext, source: SystemRange, xrefs: list[str], associations: dict[str, list[str]]
) -> list[tuple[str, str, str]]:
    """(system uri, code, equivalence) of the concept's xrefs and historical associations."""
    found = []
    stated = "equivalent" if source.key in SYNONYMOUS_XREFS else "relatedto"
    for xref in xrefs:
        prefix, _, local = xref.partition(":")
        systems = context.bundle.systems.values()
        loaded = next((s for s in systems if context.bundle.concept_index(s.key, xref) is not None), None)
        if loaded is not None:  # an OBO-style id of a loaded system, e.g. HP:0001649
            found.append((loaded.uri, xref, stated))
        elif prefix.upper() in XREF_SYSTEMS and local:
            found.append((XREF_SYSTEMS[prefix.upper()], local, stated))
    for name, codes in associations.items():
        found += [(source.uri, code, ASSOCIATION_EQUIVALENCE.get(name, "relatedto")) for code in codes]
    return found


def _reversed(context: FhirContext, source: SystemRange, code: str) -> list[tuple[str, str, str]]:
    """(system uri, code, equivalence) of the concepts whose historical associations name ``code``."""
    return [
        (source.uri, found, REVERSED.get(equivalence := ASSOCIATION_EQUIVALENCE.get(name, "relatedto"), equivalence))
        for found, name in context.associated_to(source, code)
    ]


def _semantic(context: FhirContext, system: SystemRange, value_set: ValueSetRef | None, source_row: int) -> list[Ranked]:
    """The core's best concepts of the target for all the source's labels (as ``/similar``)."""
    k = context.settings.fhir.translate_candidates
    if k == 0:
        return []
    exclude = frozenset({source_row})
    scope = Scope((system.key,), exclude=exclude) if value_set is None else value_set.scope(False, exclude)
    labels = concept_labels(context.service, source_row)
    return [match.ranked for match in match_labels(context.service, labels, scope, k, Mode.HYBRID)]


def _match(
    context: FhirContext, uri: str, code: str, equivalence: str, score: float | None = None, evidence: str | None = None
) -> dict[str, Any]:
    concept: dict[str, Any] = {"system": uri, "code": code}
    system = context.system_or_none(uri)
    row = context.bundle.concept_index(system.key, code) if system is not None else None
    if row is not None:
        concept["display"] = context.concept(row).display
    match: dict[str, Any] = {
        "name": "match",
        "part": [{"name": "equivalence", "valueCode": equivalence}, {"name": "concept", "valueCoding": concept}],
    }
    extensions = [{"url": SCORE, "valueDecimal": round(score, 6)}] if score is not None else []
    if evidence is not None:
        extensions.append({"url": EVIDENCE, "valueString": evidence})
    if extensions:
        match["extension"] = extensions
    return match
