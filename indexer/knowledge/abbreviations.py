"""The project's table of clinical abbreviations (``abbreviations.tsv``), as searchable labels.

Each expansion finds its concepts by name (:func:`~indexer.lexical.normalise.label_key` equal to
a preferred name, exact synonym, inclusion or includes term, or a name an alignment lent), in
every loaded system; the abbreviation becomes a designation typed ``abbreviation`` on each, with
its origin. An abbreviation with several meanings (one row each: "PE", "MS") lands on every
meaning's concepts, so no single one of them is certain (the ranking core's confidence splits).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from indexer.catalog import Catalog, Entry
from indexer.knowledge.alignment import codable, names
from indexer.lexical.normalise import label_key
from indexer.records import Designation, DesignationUse, SourceError

KNOWLEDGE = "abbreviations"
TABLE = Path(__file__).with_name("abbreviations.tsv")
HEADER = ["abbreviation", "expansions", "note"]


@dataclass(frozen=True)
class Abbreviation:
    text: str
    expansions: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class Resolution:
    labels: int  # designations added
    unresolved: list[str]  # "MI = myocardial infarction" rows that found no concept


def read_table(path: Path = TABLE) -> list[Abbreviation]:
    rows = [(number, line) for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    rows = [(n, line) for n, line in rows if line.strip() and not line.startswith("#")]
    out = []
    for (number, line), fields in zip(rows, csv.reader((line for _, line in rows), delimiter="\t"), strict=True):
        if fields == HEADER:
            continue
        if len(fields) != len(HEADER):
            raise SourceError(path, number, f"expected {len(HEADER)} tab-separated fields, found {len(fields)}")
        expansions = tuple(e.strip() for e in fields[1].split("|") if e.strip())
        if not fields[0].strip() or not expansions:
            raise SourceError(path, number, "an abbreviation and at least one expansion are required")
        out.append(Abbreviation(fields[0].strip(), expansions, number))
    return out


def apply(catalog: Catalog, table: list[Abbreviation]) -> Resolution:
    index: dict[str, list[Entry]] = defaultdict(list)
    for entry in catalog.entries:
        if codable(entry):
            for key in dict.fromkeys(label_key(d.text) for d in names(entry, lent=True)):
                index[key].append(entry)
    added, unresolved = 0, []
    for row in table:
        found = {e.row: e for expansion in row.expansions for e in index.get(label_key(expansion), ())}
        if not found:
            unresolved.append(f"{row.text} = {row.expansions[0]}")
        for entry in found.values():
            origin = f"abbreviation table v1, line {row.line}: {row.text} = {' | '.join(row.expansions)}"
            designation = Designation(row.text, DesignationUse.SYNONYM, "en", "EXACT", "abbreviation", True, origin, KNOWLEDGE)
            added += entry.add(designation)
    return Resolution(added, unresolved)
