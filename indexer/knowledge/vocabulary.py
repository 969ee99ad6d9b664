"""The project's vocabulary: lay, parent and clinician phrasings of the concepts people use
(``indexer/knowledge/vocabulary/*.tsv``), as searchable labels.

Each table names its system by its file name (``icd10cm_a_e.tsv``, ``hpo_1.tsv``) and states its
version on its first line; its rows are ``code, name, phrasing, register``: the concept by code,
its name as the writer read it (a check that the code is the one meant: a row whose name is not
the concept's display in the loaded release is not applied and is reported), the phrasing, and
who says it that way (``lay``: a patient, ``parent``: a parent describing a child, ``clinician``:
a note or problem list). A phrasing becomes a designation of its register's type with its origin
(table, version, line). Tables are switched off one by one with ``knowledge.vocabulary_off``, all
of them with ``knowledge.vocabulary``. Written from clinical knowledge by writers who saw no
evaluation set; each version judged on a random sample by a second reader (docs/VOCABULARY.md).
"""

from __future__ import annotations

import csv
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from indexer.catalog import Catalog
from indexer.knowledge import tsv
from indexer.lexical.normalise import fold
from indexer.records import Designation, DesignationUse, SourceError

DIRECTORY = Path(__file__).with_name("vocabulary")
HEADER = ["code", "name", "phrasing", "register"]
REGISTERS = {"lay": "lay phrasing", "parent": "parent phrasing", "clinician": "clinician phrasing"}
KNOWLEDGE = "vocabulary"


@dataclass(frozen=True)
class Phrasing:
    code: str
    name: str
    text: str
    register: str
    line: int


@dataclass(frozen=True)
class Applied:
    labels: int  # designations added
    unresolved: list[str]  # "line N: CODE (why)" for rows not applied


@dataclass(frozen=True)
class VocabularyTable:
    path: Path

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def system(self) -> str:
        """The system it phrases: its file name up to the first underscore (``hpo_1`` → ``hpo``)."""
        return self.name.split("_", 1)[0]

    @cached_property
    def version(self) -> int:
        return tsv.version(self.path)

    def read(self) -> list[Phrasing]:
        out = []
        for number, fields in tsv.rows(self.path, HEADER, csv.QUOTE_NONE):
            code, name, text, register = (field.strip() for field in fields)
            if register not in REGISTERS:
                raise SourceError(self.path, number, f"register {register!r} is not one of {', '.join(REGISTERS)}")
            if not code or not text:
                raise SourceError(self.path, number, "a code and a phrasing are required")
            out.append(Phrasing(code, name, text, register, number))
        return out

    def apply(self, catalog: Catalog, rows: list[Phrasing]) -> Applied:
        """Add each row's phrasing to its concept, when the concept is loaded under that name."""
        added, unresolved = 0, []
        for row in rows:
            entry = catalog.get(self.system, row.code)
            if entry is None:
                unresolved.append(f"line {row.line}: {row.code} (not in the loaded release)")
                continue
            if fold(entry.display).strip() != fold(row.name).strip():
                unresolved.append(f"line {row.line}: {row.code} (named {row.name!r}, the release says {entry.display!r})")
                continue
            origin = f"vocabulary {self.name} v{self.version}, line {row.line}: {row.register}"
            designation = Designation(
                row.text, DesignationUse.SYNONYM, "en", "EXACT", REGISTERS[row.register], True, origin, KNOWLEDGE
            )
            added += entry.add(designation)
        return Applied(added, unresolved)


def tables(off: Collection[str] = ()) -> list[VocabularyTable]:
    """The vocabulary's tables, but those switched off (by name)."""
    return [VocabularyTable(path) for path in sorted(DIRECTORY.glob("*.tsv")) if path.stem not in off]
