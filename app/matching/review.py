"""A match as a review sheet (CSV, one row per candidate, best first per source): what a
terminologist opens in a spreadsheet, marks and hands back. The ``decision``, ``reviewer`` and
``note`` columns are left empty to fill in; ``suggested`` says what the tool would assert (the
SSSOM predicate: a close match only for a confident top candidate). No cell runs as a formula
(:mod:`app.matching.cells`)."""

from __future__ import annotations

import csv
import io

from app.matching.cells import safe_cell
from app.matching.result import MatchRun
from app.matching.sssom import CLOSE, predicate

COLUMNS = (
    "source_id", "source_label", "rank", "target_code", "target_display", "kind", "billable",
    "confidence", "score", "source_term", "matched_term", "suggested", "decision", "reviewer", "note",
)  # fmt: skip


def write_review_csv(run: MatchRun) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, COLUMNS, lineterminator="\n", restval="")
    writer.writeheader()
    for source in run.results:
        if not source.candidates:
            writer.writerow({"source_id": safe_cell(source.id), "source_label": safe_cell(source.label), "suggested": "no match"})
        for candidate in source.candidates:
            writer.writerow(
                {
                    "source_id": safe_cell(source.id),
                    "source_label": safe_cell(source.label),
                    "rank": candidate.rank,
                    "target_code": safe_cell(candidate.code),
                    "target_display": safe_cell(candidate.display),
                    "kind": candidate.kind or "",
                    "billable": "" if candidate.billable is None else str(candidate.billable).lower(),
                    "confidence": f"{candidate.confidence:.4f}",
                    "score": f"{candidate.score:.4f}",
                    "source_term": safe_cell(candidate.source_term),
                    "matched_term": safe_cell(candidate.matched_term),
                    "suggested": "close match" if predicate(candidate, run.info) == CLOSE else "candidate",
                }
            )
    return out.getvalue()
