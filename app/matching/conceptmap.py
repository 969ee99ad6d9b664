"""A match run as a FHIR R4 ConceptMap (JSON), one group from the source system to the target.

Each source is an ``element``; each candidate a ``target`` with equivalence ``relatedto`` (a
similarity candidate for review, not an asserted equivalence), its score in the
:data:`SCORE_EXTENSION` extension and in ``comment`` with the matched label pair. A source
without a candidate at or above ``min_score`` gets one target with equivalence ``unmatched``.
"""

from __future__ import annotations

from typing import Any

from app.matching.matcher import Candidate
from app.matching.request import MatchMode
from app.matching.result import TOOL, MatchRun

SCORE_EXTENSION = "urn:termsearch:fhir:StructureDefinition:match-score"
MEASURE = {MatchMode.HYBRID: "calibrated confidence", MatchMode.DENSE: "cosine similarity", MatchMode.LEXICAL: "token-sort similarity"}


def build_conceptmap(run: MatchRun) -> dict[str, Any]:
    info = run.info
    source_uri = info.source.uri if info.source else info.source_uri
    group: dict[str, Any] = {"source": source_uri, "target": info.target.uri, "targetVersion": info.target.version}
    if info.source:
        group["sourceVersion"] = info.source.version
    group["element"] = [
        {
            "code": source.id,
            "display": source.label,
            "target": [_target(c, MEASURE[info.mode]) for c in source.candidates] or [{"equivalence": "unmatched"}],
        }
        for source in run.results
    ]
    return {
        "resourceType": "ConceptMap",
        "id": info.run_id,
        "url": f"urn:uuid:{info.run_id}",
        "name": "TermsearchMatch",
        "title": f"Candidates for {source_uri} in {info.target.uri}",
        "status": "draft",
        "experimental": True,
        "date": info.created_at,
        "publisher": TOOL,
        "description": (
            f"{info.mode} matching by termsearch (model {info.model_id}, bundle {info.bundle_id}), "
            f"k={info.k}, min_score={info.min_score}; candidates for review"
        ),
        "group": [group],
    }


def _target(candidate: Candidate, measure: str) -> dict[str, Any]:
    return {
        "code": candidate.code,
        "display": candidate.display,
        "equivalence": "relatedto",
        "comment": (
            f"score {candidate.score:.4f} ({measure}); "
            f"matched {candidate.source_term!r} to {candidate.matched_term!r}"
        ),
        "extension": [{"url": SCORE_EXTENSION, "valueDecimal": round(candidate.score, 6)}],
    }
