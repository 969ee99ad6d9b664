"""The project's curated term tables, as searchable labels: clinical abbreviations
(``abbreviations.tsv``: "HTN", "CHF") and everyday wordings (``lay_terms.tsv``: "heart attack",
"pink eye").

Each row's expansions find their concepts by name (:func:`~indexer.lexical.normalise.label_key`
equal to a preferred name, exact synonym, inclusion or includes term, or a name an alignment
lent), in every loaded system; the row's term becomes a designation of the table's type
(``abbreviation``, ``layperson``) on each, with its origin (table, version, line). A term with
several meanings (one row each: "PE", "MS") lands on every meaning's concepts, so no single one
of them is certain (the ranking core's confidence splits).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from indexer.catalog import Catalog, Entry
from indexer.knowledge import tsv
from indexer.knowledge.alignment import codable, names
from indexer.lexical.normalise import label_key
from indexer.records import Designation, DesignationUse, SourceError

# How a row finds its concepts (:meth:`TermTable.apply`): a bundle's knowledge is rebuilt when it changes.
RESOLUTION_VERSION = 3
_ORIGIN = re.compile(r"^.+ v\d+, line \d+: .+? = (?P<first>[^|]+?)(?: \| .*)?$")


@dataclass(frozen=True)
class Row:
    text: str
    expansions: tuple[str, ...]
    line: int
    context: tuple[str, ...] = ()  # words of a query that select this meaning of an ambiguous term
    note: str = ""


@dataclass(frozen=True)
class Resolution:
    labels: int  # designations added
    unresolved: list[str]  # "MI = myocardial infarction" rows that found no concept


@dataclass(frozen=True)
class TermTable:
    knowledge: str  # the knowledge source its labels name ("abbreviations")
    path: Path
    type: str  # the designation type of its terms
    title: str  # as origins name it ("abbreviation table")
    column: str  # its first column's name
    contexts: bool = False  # a context column after the expansions

    @property
    def header(self) -> list[str]:
        return [self.column, "expansions", *(["context"] if self.contexts else []), "note"]

    @cached_property
    def version(self) -> int:
        """The table's version, stated on its first line ("... Version 2 (2026-11-24)")."""
        return tsv.version(self.path)

    def read(self) -> list[Row]:
        out = []
        for number, fields in tsv.rows(self.path, self.header):
            expansions = tuple(e.strip() for e in fields[1].split("|") if e.strip())
            if not fields[0].strip() or not expansions:
                raise SourceError(self.path, number, "a term and at least one expansion are required")
            context = tuple(c.strip().lower() for c in fields[2].split("|") if c.strip()) if self.contexts else ()
            out.append(Row(fields[0].strip(), expansions, number, context, fields[-1].strip()))
        return out

    def apply(self, index: dict[str, list[tuple[Entry, bool]]], rows: list[Row]) -> Resolution:
        """Lend each row's term to the concepts its expansions name (``index``: :func:`name_index`):
        in each system, those whose own name it is, else those an alignment lent it to ("end stage
        renal disease" is N18.6's own name; HPO's alignments lent it to N18.5 and N18.9 too); of
        those, the ones its first wording that names any names (the wordings of one meaning are
        listed most precise first: "SOB = shortness of breath | dyspnea" is R06.02's, not also the
        category R06.0 *Dyspnea* and R06.00 *Dyspnea, unspecified*)."""
        added, unresolved = 0, []
        for row in rows:
            by_system: dict[str, list[tuple[tuple[bool, int], Entry]]] = defaultdict(list)
            for number, expansion in enumerate(row.expansions):
                for entry, own in index.get(label_key(expansion), []):
                    by_system[entry.system].append(((not own, number), entry))
            found: dict[int, Entry] = {}
            for named in by_system.values():
                first = min(rank for rank, _ in named)
                found.update((entry.row, entry) for rank, entry in named if rank == first)
            if not found:
                unresolved.append(f"{row.text} = {row.expansions[0]}")
            designation = Designation(
                row.text, DesignationUse.SYNONYM, "en", "EXACT", self.type, True, _origin(self, row), self.knowledge
            )
            added += sum(entry.add(designation) for entry in found.values())
        return Resolution(added, unresolved)


def name_index(catalog: Catalog) -> dict[str, list[tuple[Entry, bool]]]:
    """The codable concepts by the :func:`label_key` of each of their names, lent ones included,
    each with whether the name is its own. A table's terms are no names of this kind, so one
    index serves every table."""
    index: dict[str, list[tuple[Entry, bool]]] = defaultdict(list)
    for entry in catalog.entries:
        if codable(entry):
            keys: dict[str, bool] = {}  # each name's key, and whether one of the names so keyed is its own
            for d in names(entry, lent=True):
                key = label_key(d.text)
                keys[key] = keys.get(key, False) or d.knowledge is None
            for key, own in keys.items():
                index[key].append((entry, own))
    return index


def _origin(table: TermTable, row: Row) -> str:
    return f"{table.title} v{table.version}, line {row.line}: {row.text} = {' | '.join(row.expansions)}"


def expansion(origin: str) -> str | None:
    """The first expansion a term-table label's origin (:func:`_origin`) names."""
    found = _ORIGIN.match(origin)
    return found.group("first") if found else None


_HERE = Path(__file__).parent
ABBREVIATIONS = TermTable(
    "abbreviations", _HERE / "abbreviations.tsv", "abbreviation", "abbreviation table", "abbreviation", contexts=True
)
LAY_TERMS = TermTable("lay_terms", _HERE / "lay_terms.tsv", "layperson", "lay-term table", "term")
TABLES = (ABBREVIATIONS, LAY_TERMS)
