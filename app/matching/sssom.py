"""SSSOM/TSV (https://w3id.org/sssom/) of a match: metadata block, then one row per candidate.

Rows, for review: each candidate with its ``rank`` (an extension slot), the ranking core's
calibrated ``confidence`` and the raw ``similarity_score``, justified
``semapv:SemanticSimilarityThresholdMatching`` (dense: cosine over the encoder's vectors) or
``semapv:LexicalMatching`` (lexical). Only a top candidate at or above the confidence threshold
is asserted ``skos:closeMatch``; every other candidate is ``skos:relatedMatch``, a candidate for
a reviewer, whose ``reviewer_id`` and ``reviewer_label`` columns are left empty to fill in. A
source without a candidate at or above ``min_score`` gets one ``sssom:NoTermFound`` row.
``comment`` names the label pair.
Written by hand (a metadata block and a TSV): sssom-py, which validates it in the tests, would
bring linkml, rdflib and pandas into the serving image.
"""

from __future__ import annotations

import csv
import io
import json

from app.matching.curies import CurieMap
from app.matching.matcher import Candidate
from app.matching.cells import safe_cell
from app.matching.request import MatchMode
from app.matching.result import TOOL, MatchRun, RunInfo, tool_version

CLOSE = "skos:closeMatch"  # the top candidate, at or above the confidence threshold
CANDIDATE = "skos:relatedMatch"  # any other candidate, to be reviewed
RANK_PROPERTY = "https://w3id.org/termsearch/rank"
NO_TERM_FOUND = "sssom:NoTermFound"
LICENSE = "https://w3id.org/sssom/license/unspecified"
JUSTIFICATION = {
    MatchMode.HYBRID: "semapv:SemanticSimilarityThresholdMatching",
    MatchMode.DENSE: "semapv:SemanticSimilarityThresholdMatching",
    MatchMode.LEXICAL: "semapv:LexicalMatching",
}
MEASURE = {
    MatchMode.HYBRID: "the ranking core's calibrated confidence (the probability that the candidate is right)",
    MatchMode.DENSE: "wikidata:Q1784941",  # cosine similarity
    MatchMode.LEXICAL: "normalised Indel similarity of the sorted, folded words (rapidfuzz token_sort_ratio / 100)",
}
COLUMNS = (
    "subject_id",
    "subject_label",
    "predicate_id",
    "object_id",
    "object_label",
    "mapping_justification",
    "rank",
    "confidence",
    "similarity_score",
    "similarity_measure",
    "reviewer_id",
    "reviewer_label",
    "comment",
)


def write_sssom(run: MatchRun) -> str:
    """The SSSOM/TSV document of a match run."""
    info = run.info
    curies = CurieMap()
    rows = []
    for source in run.results:
        subject = (
            curies.concept(info.source.key, info.source.uri, source.id)
            if info.source
            else curies.listed(info.source_prefix, info.source_uri, source.id)
        )
        base = {"subject_id": subject, "subject_label": source.label, "mapping_justification": JUSTIFICATION[info.mode]}
        if not source.candidates:
            rows.append({**base, "predicate_id": CANDIDATE, "object_id": NO_TERM_FOUND})
        for candidate in source.candidates:
            rows.append(
                {
                    **base,
                    "predicate_id": predicate(candidate, info),
                    "object_id": curies.concept(info.target.key, info.target.uri, candidate.code),
                    "object_label": candidate.display,
                    "rank": str(candidate.rank),
                    "confidence": f"{candidate.confidence:.6f}",
                    "similarity_score": f"{candidate.score:.6f}",
                    "similarity_measure": MEASURE[info.mode],
                    "comment": f"matched {candidate.source_term!r} to {candidate.matched_term!r}",
                }
            )
    out = io.StringIO()
    for line in _metadata(info, curies).splitlines():
        out.write(f"#{line}\n")
    writer = csv.DictWriter(out, COLUMNS, delimiter="\t", lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows({key: _clean(value) for key, value in row.items()} for row in rows)
    return out.getvalue()


def predicate(candidate: Candidate, info: RunInfo) -> str:
    """What a candidate may claim: a close match only as the top one, confident enough."""
    return CLOSE if candidate.rank == 1 and candidate.confidence >= info.threshold else CANDIDATE


def _metadata(info: RunInfo, curies: CurieMap) -> str:
    """The metadata block as YAML (values JSON-quoted, which YAML reads as they are)."""
    source = f"{info.source.key} {info.source.version}" if info.source else "listed concepts"
    fields = {
        "mapping_set_id": f"urn:uuid:{info.run_id}",
        "mapping_set_title": f"{source} matched to {info.target.key} {info.target.version}",
        "mapping_set_description": (
            f"termsearch {info.mode} matching, k={info.k}, min_score={info.min_score}, "
            f"model {info.model_id}, bundle {info.bundle_id}; {CLOSE} for a top candidate with "
            f"confidence at least {info.threshold}, else {CANDIDATE} (a candidate to review)"
        ),
        "license": LICENSE,
        "mapping_tool": TOOL,
        "mapping_tool_version": tool_version(),
        "mapping_date": info.created_at[:10],
        "object_source_version": info.target.version,
    }
    if info.source:
        fields["subject_source_version"] = info.source.version
    lines = ["curie_map:", *(f"  {p}: {json.dumps(uri)}" for p, uri in sorted(curies.prefixes.items()))]
    lines += [f"{key}: {json.dumps(value)}" for key, value in fields.items()]
    lines += [
        "extension_definitions:",
        '  - slot_name: "rank"',
        f"    property: {json.dumps(RANK_PROPERTY)}",
        '    type_hint: "xsd:integer"',
    ]
    return "\n".join(lines)


def _clean(value: str) -> str:
    """One physical line per row (tabs and line breaks in labels become spaces), and no cell a
    spreadsheet would run as a formula (:func:`~app.matching.cells.safe_cell`)."""
    return safe_cell(" ".join(value.split()) if any(c in value for c in "\t\r\n") else value)
