"""``ValueSet/$expand``: an implicit value set's codes, or, with ``filter``, the concepts that the
ranking core puts above the confidence threshold for the text, best first, through the
autocomplete rewrite (``app.search.autocomplete``: "tachyc" finds Tachycardia).

A filtered expansion lists at most ``fhir.filter_depth`` concepts, those with a confidence of at
least ``min_confidence`` (default ``search.confidence_threshold``), and ``total`` counts them, so
a filter that means nothing ("xxxqqq") expands to nothing; ``offset`` and ``count`` page through
that one ranking (only the rows up to the page are built: the candidates, hence ``total`` and
the order, are the same for every page within ``search.fusion_depth``). An unfiltered one lists codes in catalog order. ICD-10-CM chapters and blocks
are never listed by a filter; an unfiltered expansion lists them as ``abstract`` (not selectable),
unless ``excludeNotForUI=true`` or ``abstract=false`` leaves them out. Each code carries its
system and version; filtered ones also the label that matched, its score and confidence
(extensions ``MATCHED_TERM``, ``SCORE``, ``CONFIDENCE``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.fhir.context import FhirContext
from app.fhir.designations import designations, display_in
from app.checks import check_length, check_range
from app.errors import TooCostly
from app.fhir.params import OperationParams
from app.fhir.valuesets import ValueSetRef, operation_value_set
from app.search.service import Ranked

MATCHED_TERM = "urn:termsearch:fhir:matched-term"
SCORE = "urn:termsearch:fhir:score"
CONFIDENCE = "urn:termsearch:fhir:confidence"

# Echoed in expansion.parameter when given, with their FHIR types.
ECHOED = {
    "url": "valueUri",
    "filter": "valueString",
    "count": "valueInteger",
    "offset": "valueInteger",
    "activeOnly": "valueBoolean",
    "includeDesignations": "valueBoolean",
    "displayLanguage": "valueCode",
    "excludeNotForUI": "valueBoolean",
    "excludeNested": "valueBoolean",  # honoured whatever its value: expansions are always flat
    "abstract": "valueBoolean",
    "min_confidence": "valueDecimal",
}


def expand(context: FhirContext, params: OperationParams) -> dict[str, Any]:
    limits = context.settings.fhir
    value_set = operation_value_set(context, params)
    text = (params.text("filter") or "").strip()
    count, offset = params.integer("count"), params.integer("offset") or 0
    active_only = bool(params.boolean("activeOnly"))
    include_designations = bool(params.boolean("includeDesignations"))
    language = params.language("displayLanguage")
    selectable_only = bool(params.boolean("excludeNotForUI")) or params.boolean("abstract") is False
    if count is not None and count > limits.max_count:
        raise TooCostly(f"count: at most {limits.max_count} codes per page (got {count})")
    check_length(text, context.settings.search.max_query_length, "filter")
    min_confidence = params.decimal("min_confidence")
    if min_confidence is None:
        min_confidence = context.settings.search.confidence_threshold
    check_range(min_confidence, 0, 1, "min_confidence")

    hits: Sequence[Ranked] | None = None
    if text:
        scope = value_set.scope(include_inactive=not active_only)
        wanted = limits.filter_depth if count is None else min(limits.filter_depth, offset + count)
        ranking = context.autocomplete.rank(text, scope, wanted, min_confidence)  # only the rows up to this page
        hits = ranking.rows
        rows: Sequence[int] = [hit.concept for hit in hits]
        total = min(ranking.above, limits.filter_depth)
    else:
        rows = value_set.rows(context, active_only)
        if selectable_only:
            listed = np.asarray(rows, dtype=np.int64)
            rows = listed[~context.bundle.grouping[listed]].tolist()
        total = len(rows)
    if count is None and total - offset > limits.max_count:
        raise TooCostly(
            f"{value_set.url} has {total} codes, more than {limits.max_count} at once; page it with count and offset"
        )
    stop = total if count is None else offset + count
    page = [(row, hits[i] if hits else None) for i, row in enumerate(rows[offset:stop], start=offset)]
    contains = [_entry(context, value_set, row, hit, include_designations, language) for row, hit in page]

    used = {name: value for name in ECHOED if (value := _given(params, name)) is not None}
    system = value_set.system
    expansion: dict[str, Any] = {
        "identifier": f"urn:uuid:{uuid.uuid4()}",
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "total": total,
        "offset": offset,
        "parameter": [{"name": name, ECHOED[name]: value} for name, value in used.items()]
        + [{"name": "used-codesystem", "valueUri": f"{system.uri}|{system.version}"}],
    }
    if contains:
        expansion["contains"] = contains
    resource = {"resourceType": "ValueSet", "status": "active", "url": value_set.url}
    if value_set.version is not None:
        resource["version"] = value_set.version
    return {**resource, "expansion": expansion}


def _given(params: OperationParams, name: str) -> Any:
    """A parameter as used, in its FHIR type (already validated by ``expand``)."""
    kind = ECHOED[name]
    if kind == "valueInteger":
        return params.integer(name)
    if kind == "valueBoolean":
        return params.boolean(name)
    if kind == "valueDecimal":
        return params.decimal(name)
    return params.text(name)


def _entry(
    context: FhirContext,
    value_set: ValueSetRef,
    row: int,
    hit: Ranked | None,
    include_designations: bool,
    language: str | None,
) -> dict[str, Any]:
    concept = context.concept(row)
    entry: dict[str, Any] = {"system": value_set.system.uri, "version": value_set.system.version}
    if hit is not None:
        entry["extension"] = [
            {"url": MATCHED_TERM, "valueString": context.bundle.label_text[hit.label]},
            {"url": SCORE, "valueDecimal": round(hit.score, 6)},
            {"url": CONFIDENCE, "valueDecimal": round(hit.confidence, 4)},
        ]
    if concept.grouping:
        entry["abstract"] = True
    if not concept.active:
        entry["inactive"] = True
    entry |= {"code": concept.code, "display": concept.display}
    if include_designations or language:
        detail = context.detail(value_set.system, concept.code)
        if detail is not None:
            entry["display"] = display_in(detail.concept, language)
            if include_designations:
                entry["designation"] = designations(detail.concept)
    return entry
