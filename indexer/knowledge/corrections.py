"""Corrections: knowledge a reviewer denied (``corrections.tsv``), applied while a bundle is built.

An ``alignment`` row stops two concepts from lending each other names (R12 *Heartburn* and HPO's
*Gastroesophageal reflux*: the alignment lent "GERD" to R12); a ``designation`` row removes a
name a knowledge source lent or a table gave (never one the terminology states). Each row says
why, who and when; the build reports what each denied.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from indexer.catalog import Catalog
from indexer.knowledge import tsv
from indexer.knowledge.alignment import Alignment
from indexer.lexical.normalise import fold
from indexer.records import SourceError

PATH = Path(__file__).with_name("corrections.tsv")
HEADER = ["kind", "system", "code", "what", "reason", "reviewer", "date"]
KINDS = ("alignment", "designation")


@dataclass(frozen=True)
class Correction:
    kind: str
    system: str
    code: str
    what: str
    reason: str
    line: int


def read(path: Path = PATH) -> list[Correction]:
    out = []
    for number, fields in tsv.rows(path, HEADER, csv.QUOTE_NONE):
        kind, system, code, what, reason = (field.strip() for field in fields[:5])
        if kind not in KINDS:
            raise SourceError(path, number, f"kind {kind!r} is not one of {', '.join(KINDS)}")
        if kind == "alignment" and len(what.split()) != 2:
            raise SourceError(path, number, f"an alignment names the other concept as 'system code' (got {what!r})")
        if not (system and code and what and reason):
            raise SourceError(path, number, "system, code, what and reason are required")
        out.append(Correction(kind, system, code, what, reason, number))
    return out


def denied_alignments(catalog: Catalog, alignments: list[Alignment], corrections: list[Correction]) -> list[Alignment]:
    """``alignments`` but those a correction denies (either way round)."""
    pairs = set()
    for c in corrections:
        if c.kind == "alignment":
            one, other = catalog.get(c.system, c.code), catalog.get(*c.what.split())
            if one is not None and other is not None:
                pairs |= {(one.row, other.row), (other.row, one.row)}
    return [a for a in alignments if (a.source, a.target) in pairs]


def deny_designations(catalog: Catalog, corrections: list[Correction]) -> int:
    """Remove the denied names that knowledge sources gave; how many were removed."""
    removed = 0
    for c in corrections:
        entry = catalog.get(c.system, c.code) if c.kind == "designation" else None
        if entry is not None:
            kept = [d for d in entry.labels if d.knowledge is None or fold(d.text).strip() != fold(c.what).strip()]
            removed += len(entry.labels) - len(kept)
            entry.labels[:] = kept
    return removed
