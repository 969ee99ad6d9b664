"""``ValueSet/$expand``: an implicit value set's codes, or, with ``filter``, the concepts that the
ranking core puts above the confidence threshold for the text, best first, through the
autocomplete rewrite (``app.search.autocomplete``: "tachyc" finds Tachycardia).

A filtered expansion lists at most ``fhir.filter_depth`` concepts, those with a confidence of at
least ``min_confidence`` (default ``search.confidence_threshold``), and ``total`` counts them, so
a filter that means nothing ("xxxqqq") expands to nothing; ``offset`` and ``count`` page through
that one ranking (only the rows up to the page are built: the candidates, hence ``total`` and
the order, are the same for every page within ``search.fusion_depth``). An unfiltered one lists
codes in catalog order. ICD-10-CM chapters and blocks are never listed by a filter; an
unfiltered expansion lists them as ``abstract`` (not selectable), unless ``excludeNotForUI=true``
or ``abstract=false`` leaves them out. Each code carries its system (its version is the
expansion's ``used-codesystem``); filtered ones also the label that matched, its score and confidence
(extensions ``MATCHED_TERM``, ``SCORE``, ``CONFIDENCE``). ``property`` lists the named properties
of each code (``*``: all) as R4 carries R5's ``expansion.property`` and ``contains.property``: the
cross-version extensions HL7's test suite reads. ``includeDefinition=true`` returns the value set's
definition (its compose) with the expansion.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.checks import check_length, check_range
from app.errors import NotFound, TooCostly
from app.fhir.context import FhirContext, concept_status
from app.fhir.designations import designations, display_in
from app.fhir.operations import EXPAND
from app.fhir.params import OperationParams
from app.fhir.supplements import requested
from app.fhir.supplements import used as used_supplements
from app.fhir.valuesets import ValueSetRef, operation_value_set
from app.fhir.versions import canonicals
from app.search.designations import all_designations
from app.search.values import Ranked
from indexer.bundle import CatalogConcept, SystemRange

PROPERTIES = frozenset({"definition", "parent", "inactive", "status", "notSelectable", "kind", "billable"})

MATCHED_TERM = "urn:termsearch:fhir:matched-term"
SCORE = "urn:termsearch:fhir:score"
CONFIDENCE = "urn:termsearch:fhir:confidence"

# The elements of an explicit value set an expansion repeats (as tx.fhir.org does).
DESCRIBING = frozenset(
    {"id", "language", "url", "identifier", "version", "name", "title", "status", "experimental", "date", "publisher"}
)
CROSS_VERSION = "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion."
CONCEPT_PROPERTIES = "http://hl7.org/fhir/concept-properties#"
_SD = "http://hl7.org/fhir/StructureDefinition/"
# A value set's extensions of a code it lists that an expansion gives as properties: code, FHIR property, value type.
LISTED_PROPERTIES = {
    _SD + "valueset-label": ("label", "label", "valueString"),
    _SD + "valueset-conceptOrder": ("order", "order", "valueDecimal"),
    _SD + "itemWeight": ("weight", "itemWeight", "valueDecimal"),
}


def expand(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    limits = context.settings.fhir
    value_set = operation_value_set(context, params)
    for name, value in value_set.expansion_parameters().items():  # the value set's own, where the request sets none
        params = params.defaulting(name, value)
    if value_set.missing is not None:
        loaded = ", ".join(f"{s.uri}|{s.version}" for s in value_set.systems)
        raise NotFound(f"{value_set.canonical} uses {value_set.missing}, which is not loaded (loaded: {loaded})")
    for system in value_set.systems:
        value_set.versions.checked(system.uri, value_set.system_version(system) or system.version)
    sources = requested(context, params, value_set.resource)  # an unknown supplement is refused before any work
    text = (params.text("filter") or "").strip()
    count, offset = params.integer("count"), params.integer("offset") or 0
    active_only = bool(params.boolean("activeOnly"))
    include_designations = bool(params.boolean("includeDesignations"))
    language = params.language("displayLanguage")
    # The loaded releases are in English: an English (or any) display language is their display,
    # with no store read per code (a browser's Accept-Language comes with every keystroke).
    other_language = language if language is not None and language.split("-")[0].lower() not in ("en", "*") else None
    selectable_only = bool(params.boolean("excludeNotForUI")) or params.boolean("abstract") is False
    check_length(text, context.settings.search.max_query_length, "filter")
    min_confidence = params.decimal("min_confidence")
    if min_confidence is None:
        min_confidence = context.settings.search.confidence_threshold
    check_range(min_confidence, 0, 1, "min_confidence")

    hits: Sequence[Ranked] | None = None
    if text:
        scope = value_set.scope(include_inactive=not active_only)
        wanted = limits.filter_depth if count is None else min(limits.filter_depth, offset + count)
        # Only the rows up to this page; a code whose label holds every word of the filter is listed however unsure.
        ranking = context.autocomplete.rank(text, scope, wanted, min_confidence, spare_whole_words=True)
        hits = ranking.rows
        rows: Sequence[int] = [hit.row for hit in hits]
        total = min(ranking.above, limits.filter_depth)
    else:
        rows = value_set.rows(context, active_only)
        if selectable_only:
            listed = np.asarray(rows, dtype=np.int64)
            rows = listed[~context.bundle.grouping[listed]].tolist()
        total = len(rows)
    if min(total, offset + count if count is not None else total) - offset > limits.max_count:  # the page asked for
        raise TooCostly(
            f"{value_set.url} has {total} codes, more than {limits.max_count} at once; page it with count and offset, "
            "or search it with filter (as a form's autocomplete item does)"
            if count is None else f"count: at most {limits.max_count} codes per page (got {count})"
        )
    stop = total if count is None else offset + count
    page = [(row, hits[i] if hits else None) for i, row in enumerate(rows[offset:stop], start=offset)]
    properties = concept_properties(params.texts("property"))
    shown = _Shown(include_designations, other_language, properties, sources)
    contains = [_entry(context, value_set, row, hit, shown) for row, hit in page]

    used = {p: value for p in EXPAND.parameters if p.echoed and (value := params.typed(p.name)) is not None}
    expansion: dict[str, Any] = {
        "identifier": f"urn:uuid:{uuid.uuid4()}",
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "total": total,
        "parameter": [{"name": p.name, p.value_key: value} for p, value in used.items()]
        + [echo for s in value_set.systems for echo in value_set.versions.echoed(s.uri, value_set.stated_version(s))]
        + [
            {"name": "default-valueset-version", "valueUri": f"{url}|{version}"}
            for url, version in canonicals(params, "default-valueset-version").items()
        ]
        + [{"name": "used-codesystem", "valueUri": f"{s.uri}|{s.version}"} for s in value_set.systems]
        + [{"name": "used-valueset", "valueUri": canonical} for canonical in dict.fromkeys(value_set.used_value_sets)]
        + [{"name": f"warning-{status}", "valueUri": canonical} for status, canonical in value_set.statuses]
        + used_supplements(sources),
    }
    if params.value("offset") is not None or count is not None:  # a page: where it starts
        expansion["offset"] = offset
    declared = {code: CONCEPT_PROPERTIES + code for code in properties} | {
        code: CONCEPT_PROPERTIES + name
        for code, name, _ in LISTED_PROPERTIES.values()
        if any(_has_property(entry, code) for entry in contains)
    }
    if contains and declared:
        expansion["extension"] = [
            _cross_version("property", {"url": "code", "valueCode": code}, {"url": "uri", "valueUri": uri})
            for code, uri in sorted(declared.items())
        ]
    if contains:
        expansion["contains"] = contains
    return {**_described(value_set, bool(params.boolean("includeDefinition"))), "expansion": expansion}


def _described(value_set: ValueSetRef, include_definition: bool) -> dict[str, Any]:
    """The value set's own elements (url, version, name, title, status...); its compose only
    with ``includeDefinition``."""
    kept = DESCRIBING | ({"compose"} if include_definition else set())
    given = {k: v for k, v in (value_set.resource or {}).items() if k in kept}
    if value_set.resource is None:
        return {"resourceType": "ValueSet", "status": "active", "url": value_set.url}
    return {"resourceType": "ValueSet", "status": "unknown", **given}  # an explicit one keeps its own status, if any


def concept_properties(names: list[str]) -> frozenset[str]:
    """The properties asked for, ``*`` standing for all of them."""
    return PROPERTIES if "*" in names else frozenset(names) & PROPERTIES


def _has_property(entry: dict[str, Any], code: str) -> bool:
    return any(
        e["url"] == CROSS_VERSION + "contains.property" and e["extension"][0]["valueCode"] == code
        for e in entry.get("extension", [])
    )


def _listed(value_set: ValueSetRef, system: SystemRange, code: str) -> list[dict[str, Any]]:
    """What the value set says of a code it lists, as the expansion shows it: its known
    extensions, and its label, order and weight as properties."""
    shown = []
    for extension in value_set.concept_extensions(system, code):
        if extension.get("url") in LISTED_PROPERTIES:
            name, _, kind = LISTED_PROPERTIES[extension["url"]]
            value = next((v for k, v in extension.items() if k.startswith("value")), None)
            shown.append(_cross_version("contains.property", {"url": "code", "valueCode": name}, {"url": "value", kind: value}))
        elif _defined_by_fhir(extension):  # others are ignored
            shown.append(extension)
    return shown


def _defined_by_fhir(extension: dict[str, Any]) -> bool:
    return str(extension.get("url", "")).startswith(_SD)


def _own_designation(designation: dict[str, Any]) -> dict[str, Any]:
    """A designation the value set gives a code, with only the extensions FHIR defines."""
    extensions = [e for e in designation.get("extension", []) if isinstance(e, dict) and _defined_by_fhir(e)]
    return {k: v for k, v in designation.items() if k != "extension"} | ({"extension": extensions} if extensions else {})


def _cross_version(element: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"url": CROSS_VERSION + element, "extension": list(parts)}


def _properties(context: FhirContext, concept: CatalogConcept, wanted: frozenset[str], detail: Any) -> list[dict[str, Any]]:
    """R5 ``contains.property`` values of the ``wanted`` properties a concept has, as R4 extensions."""
    values: list[tuple[str, dict[str, Any]]] = []
    if "definition" in wanted and detail is not None:
        values += [("definition", {"valueString": d.text}) for d in detail.concept.definitions[:1]]
    if "parent" in wanted:
        values += [("parent", {"valueCode": context.concept(row).code}) for row in concept.parents]
    if "inactive" in wanted:
        values.append(("inactive", {"valueBoolean": not concept.active}))
    if "status" in wanted:
        values.append(("status", {"valueCode": concept_status(concept)}))
    if "notSelectable" in wanted and concept.grouping:
        values.append(("notSelectable", {"valueBoolean": True}))
    if "kind" in wanted and concept.kind is not None:
        values.append(("kind", {"valueCode": concept.kind}))
    if "billable" in wanted and concept.billable is not None:
        values.append(("billable", {"valueBoolean": concept.billable}))
    return [
        _cross_version("contains.property", {"url": "code", "valueCode": code}, {"url": "value", **value})
        for code, value in values
    ]


@dataclass(frozen=True)
class _Shown:
    """What each code of the expansion shows besides its code and display."""

    designations: bool
    language: str | None
    properties: frozenset[str]
    sources: frozenset[str]  # knowledge sources whose designations to list (useSupplement)


def _entry(
    context: FhirContext,
    value_set: ValueSetRef,
    row: int,
    hit: Ranked | None,
    shown: _Shown,
) -> dict[str, Any]:
    concept = context.concept(row)
    system = context.bundle.systems[concept.system]
    entry: dict[str, Any] = {"system": system.uri}  # the version is used-codesystem's
    extensions = []
    if hit is not None:
        extensions = [
            {"url": MATCHED_TERM, "valueString": context.bundle.label_text[hit.label]},
            {"url": SCORE, "valueDecimal": round(hit.score, 6)},
            {"url": CONFIDENCE, "valueDecimal": round(hit.confidence, 4)},
        ]
    wanted = shown.properties
    detail = context.detail(system, concept.code) if shown.designations or shown.language or "definition" in wanted else None
    extensions += [*_listed(value_set, system, concept.code), *_properties(context, concept, wanted, detail)]
    if extensions:
        entry["extension"] = extensions
    if concept.grouping:
        entry["abstract"] = True
    if not concept.active:
        entry["inactive"] = True
    entry |= {"code": concept.code, "display": concept.display}
    if detail is not None:
        entry["display"] = display_in(detail.concept, shown.language)
    if detail is not None and shown.designations:
        labels = designations(all_designations(detail.concept, context.bundle, system.key, shown.sources))
        labels += [_own_designation(d) for d in value_set.concept_designations(system, concept.code)]
        if labels:
            entry["designation"] = labels
    return entry
