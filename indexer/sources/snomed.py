"""SNOMED CT RF2 Snapshot: a release directory or zip (International or a national edition).

Files (matched by name anywhere in the release; Full and Delta files are ignored):
``sct2_Concept_Snapshot``, ``sct2_Description_Snapshot``, ``sct2_Relationship_Snapshot`` and
``der2_cRefset_LanguageSnapshot`` are required; ``sct2_TextDefinition_Snapshot`` and
``der2_cRefset_Association(Reference)Snapshot`` are read when present. Every SCTID is checked
(digits, partition, Verhoeff check digit) and a bad row raises :class:`SourceError` at its line.

Mapping:

- code: the concept id; ``active``: the concept's;
- designations: one per active description and language refset that accepts it, its ``language``
  the refset's dialect (``en-US``, ``en-GB``; the description's language code for other refsets)
  and its ``use`` ``fsn``, ``preferred`` or ``synonym`` (acceptable); ``type`` is ``fsn`` or
  ``synonym``. Designations of the chosen refset (``language_refset``, US English by default)
  come first, and its preferred synonym is the display. Descriptions in no refset keep their
  language code; inactive descriptions are inactive designations;
- the FSN's semantic tag is stripped from its text into ``properties["semantic_tag"]``; terms
  whose case matters go to ``properties["case_significance"]`` (text → ``CS`` or ``cI``);
- active text definitions → definitions;
- active inferred relationships: is-a → ``IS_A``; attributes → edges typed by the attribute's id
  and labelled with its preferred term (role groups are not kept);
- active historical associations → ``associations`` (``replaced_by``, ``same_as``, ...);
- version: ``http://snomed.info/sct/{module}/version/{date}``, from the concepts' latest
  effectiveTime and the module holding most concepts of that date (the edition's).

Rows are staged in a temporary SQLite database and joined on disk (see ``_staging``).
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from operator import itemgetter
from pathlib import Path
from typing import Any

from indexer.records import (
    IS_A,
    CodeSystemInfo,
    Concept,
    Definition,
    Designation,
    DesignationUse,
    Relationship,
    SourceError,
)
from indexer.sources._release import Malformed, ReleaseFile, convert_rows, release_files, rf2_rows
from indexer.sources._staging import Aligned, Row, Staging, grouped

KEY = "snomedct"
URI = "http://snomed.info/sct"
NAME = "SNOMED CT"

FSN = 900000000000003001
PREFERRED = 900000000000548007
ACCEPTABLE = 900000000000549004
US_ENGLISH = 900000000000509007
GB_ENGLISH = 900000000000508004
IS_A_TYPE = 116680003
INFERRED = 900000000000011006
DIALECTS = {US_ENGLISH: "en-US", GB_ENGLISH: "en-GB"}
CASE_SIGNIFICANCE = {900000000000448009: "ci", 900000000000017005: "CS", 900000000000020002: "cI"}
ASSOCIATIONS = {
    900000000000523009: "possibly_equivalent_to",
    900000000000524003: "moved_to",
    900000000000525002: "moved_from",
    900000000000526001: "replaced_by",
    900000000000527005: "same_as",
    900000000000528000: "was_a",
    900000000000529008: "similar_to",
    900000000000530003: "alternative",
    900000000000531004: "refers_to",
}  # other association refsets are named after their preferred term

_COMPONENT = ("id", "effectiveTime", "active", "moduleId")
CONCEPT_COLUMNS = (*_COMPONENT, "definitionStatusId")
DESCRIPTION_COLUMNS = (*_COMPONENT, "conceptId", "languageCode", "typeId", "term", "caseSignificanceId")
RELATIONSHIP_COLUMNS = (
    *_COMPONENT,
    *("sourceId", "destinationId", "relationshipGroup", "typeId", "characteristicTypeId", "modifierId"),
)
LANGUAGE_COLUMNS = (*_COMPONENT, "refsetId", "referencedComponentId", "acceptabilityId")
ASSOCIATION_COLUMNS = (*_COMPONENT, "refsetId", "referencedComponentId", "targetComponentId")

_SEMANTIC_TAG = re.compile(r"^(.*\S)\s+\(([^()]+)\)$")
_USE_ORDER = {DesignationUse.PREFERRED: 0, DesignationUse.FSN: 1, DesignationUse.SYNONYM: 2}


# --- identifiers ----------------------------------------------------------------------------------

_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 2, 3, 4, 0, 6, 7, 8, 9, 5),
    (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7),
    (4, 0, 1, 2, 3, 9, 5, 6, 7, 8),
    (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2),
    (7, 6, 5, 9, 8, 2, 1, 0, 4, 3),
    (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_VERHOEFF_P1 = (1, 5, 7, 6, 2, 8, 3, 0, 9, 4)


def _verhoeff_runs() -> tuple[dict[str, int], dict[str, int]]:
    """The checksum of every run of 1 to 4 digits (read from the right) that starts at a position
    ≡ 0 or ≡ 4 (mod 8): the checksum is a product in the dihedral group, so runs compose."""
    permutations = [tuple(range(10))]
    for _ in range(7):
        permutations.append(tuple(_VERHOEFF_P1[x] for x in permutations[-1]))
    runs: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for offset, table in zip((0, 4), runs):
        for length in range(1, 5):
            for run in product("0123456789", repeat=length):
                state = 0
                for position, digit in enumerate(run):
                    state = _VERHOEFF_D[state][permutations[(offset + position) % 8][int(digit)]]
                table["".join(run)] = state
    return runs


_RUNS_AT_0, _RUNS_AT_4 = _verhoeff_runs()


def verhoeff_valid(digits: str) -> bool:
    """Whether ``digits`` (at most 20) ends in a correct Verhoeff check digit; unrolled, four
    digits at a time, because every identifier of a release goes through here."""
    reverse, d = digits[::-1], _VERHOEFF_D
    state = _RUNS_AT_0[reverse[:4]]
    if len(reverse) > 4:
        state = d[state][_RUNS_AT_4[reverse[4:8]]]
    if len(reverse) > 8:
        state = d[state][_RUNS_AT_0[reverse[8:12]]]
    if len(reverse) > 12:
        state = d[state][_RUNS_AT_4[reverse[12:16]]]
    if len(reverse) > 16:
        state = d[state][_RUNS_AT_0[reverse[16:20]]]
    return state == 0


@dataclass(frozen=True, slots=True)
class Partition:
    """What an SCTID identifies: its partition digits (short or namespace format)."""

    name: str
    digits: frozenset[str]


CONCEPT_ID = Partition("concept", frozenset({"00", "10"}))
DESCRIPTION_ID = Partition("description", frozenset({"01", "11"}))
RELATIONSHIP_ID = Partition("relationship", frozenset({"02", "12"}))


def sctid(value: str, column: str, partition: Partition | None = CONCEPT_ID) -> int:
    """``value`` as an integer if it is a valid SCTID (of ``partition``), else :class:`Malformed`."""
    if not (6 <= len(value) <= 18 and value.isascii() and value.isdigit() and value[0] != "0"):
        raise Malformed(f"{column}: {value!r} is not a SNOMED CT identifier")
    if partition is not None and value[-3:-1] not in partition.digits:
        raise Malformed(f"{column}: {value} is not a {partition.name} identifier")
    if not verhoeff_valid(value):
        raise Malformed(f"{column}: {value} fails its Verhoeff check digit")
    return int(value)


@lru_cache(maxsize=1024)
def _metadata_id(value: str, column: str) -> int:
    """A concept id from a column with few distinct values (module, type, refset...), cached."""
    return sctid(value, column)


def _component(fields: list[str]) -> bool:
    """Check the columns every RF2 row starts with; return ``active``."""
    time, active = fields[1], fields[2]
    if len(time) != 8 or not time.isdigit():
        raise Malformed(f"effectiveTime: {time!r} is not a YYYYMMDD date")
    if active not in ("0", "1"):
        raise Malformed(f"active: {active!r} is not 0 or 1")
    _metadata_id(fields[3], "moduleId")
    return active == "1"


# --- rows -----------------------------------------------------------------------------------------


def _concept_row(fields: list[str]) -> Row:
    active = _component(fields)
    _metadata_id(fields[4], "definitionStatusId")
    return sctid(fields[0], "id"), active


def _description_row(fields: list[str]) -> Row:
    active = _component(fields)
    case = CASE_SIGNIFICANCE.get(_metadata_id(fields[8], "caseSignificanceId"))
    if case is None:
        raise Malformed(f"caseSignificanceId: unknown value {fields[8]}")
    concept = sctid(fields[4], "conceptId")
    is_fsn = _metadata_id(fields[6], "typeId") == FSN
    return concept, sctid(fields[0], "id", DESCRIPTION_ID), active, is_fsn, fields[5], fields[7], case


def _definition_row(fields: list[str]) -> Row | None:
    concept, description, active, _, language, term, _ = _description_row(fields)
    return (concept, description, language, term) if active else None


def _language_row(fields: list[str]) -> Row | None:
    active = _component(fields)
    refset = _metadata_id(fields[4], "refsetId")
    description = sctid(fields[5], "referencedComponentId", DESCRIPTION_ID)
    acceptability = _metadata_id(fields[6], "acceptabilityId")
    if acceptability not in (PREFERRED, ACCEPTABLE):
        raise Malformed(f"acceptabilityId: unknown value {fields[6]}")
    return (description, refset, acceptability == PREFERRED) if active else None


def _relationship_row(fields: list[str]) -> Row | None:
    active = _component(fields)
    sctid(fields[0], "id", RELATIONSHIP_ID)
    source, target = sctid(fields[4], "sourceId"), sctid(fields[5], "destinationId")
    if not fields[6].isdigit():
        raise Malformed(f"relationshipGroup: {fields[6]!r} is not a number")
    type_ = _metadata_id(fields[7], "typeId")
    inferred = _metadata_id(fields[8], "characteristicTypeId") == INFERRED
    _metadata_id(fields[9], "modifierId")
    return (source, type_, target) if active and inferred else None


def _association_row(fields: list[str]) -> Row | None:
    active = _component(fields)
    refset = _metadata_id(fields[4], "refsetId")
    source = sctid(fields[5], "referencedComponentId", None)  # descriptions too (REFERS TO)
    target = sctid(fields[6], "targetComponentId", None)
    return (source, refset, target) if active and fields[5][-3:-1] in CONCEPT_ID.digits else None


@dataclass(frozen=True, slots=True)
class _Table:
    """A staging table, the release files that fill it and how each row is converted."""

    name: str
    schema: str
    prefixes: tuple[str, ...]
    columns: tuple[str, ...]
    convert: Callable[[list[str]], Row | None]
    index: str | None = None
    required: bool = True


TABLES = (
    _Table(
        "concept",
        "id INTEGER PRIMARY KEY, active INTEGER",
        ("sct2_Concept_Snapshot",),
        CONCEPT_COLUMNS,
        _concept_row,
    ),
    _Table(
        "description",
        "concept INTEGER, id INTEGER, active INTEGER, fsn INTEGER, lang TEXT, term TEXT, cs TEXT",
        ("sct2_Description_Snapshot",),
        DESCRIPTION_COLUMNS,
        _description_row,
        "concept, id",
    ),
    _Table(
        "definition",
        "concept INTEGER, id INTEGER, lang TEXT, term TEXT",
        ("sct2_TextDefinition_Snapshot",),
        DESCRIPTION_COLUMNS,
        _definition_row,
        "concept, id",
        required=False,
    ),
    _Table(
        "language",
        "description INTEGER, refset INTEGER, preferred INTEGER",
        ("der2_cRefset_LanguageSnapshot",),
        LANGUAGE_COLUMNS,
        _language_row,
        "description",
    ),
    _Table(
        "relationship",
        "source INTEGER, type INTEGER, target INTEGER",
        ("sct2_Relationship_Snapshot",),
        RELATIONSHIP_COLUMNS,
        _relationship_row,
        "source",
    ),
    _Table(
        "association",
        "source INTEGER, refset INTEGER, target INTEGER",
        ("der2_cRefset_AssociationSnapshot", "der2_cRefset_AssociationReferenceSnapshot"),
        ASSOCIATION_COLUMNS,
        _association_row,
        "source",
        required=False,
    ),
)

_NAMES = """
    SELECT d.concept, d.id, d.active, d.fsn, d.lang, d.term, d.cs, l.refset, l.preferred
    FROM description d LEFT JOIN language l ON l.description = d.id {where}
    ORDER BY d.concept, d.id"""
_LABELLED = "WHERE d.concept IN (SELECT type FROM relationship UNION SELECT refset FROM association)"


# --- the source -----------------------------------------------------------------------------------


class SnomedSource:
    """An RF2 Snapshot release (directory or zip). ``language_refset`` picks the dialect whose
    preferred terms are the displays (US English by default; GB English is 900000000000508004)."""

    def __init__(self, path: str | Path | None = None, language_refset: int | str = US_ENGLISH) -> None:
        if path is None:
            raise ValueError("a SNOMED CT source needs the path of an RF2 release directory or zip")
        self.path = Path(path)
        try:
            self.language_refset = sctid(str(language_refset), "language_refset")
        except Malformed as e:
            raise ValueError(str(e)) from None
        self.files = _find_files(self.path)
        module, date = _edition(self.files["concept"])
        self.info = CodeSystemInfo(KEY, URI, NAME, f"{URI}/{module}/version/{date}")

    def __iter__(self) -> Iterator[Concept]:
        with Staging("termsearch-rf2-") as staging:
            for table in TABLES:
                _stage(staging, table, self.files[table.name])
            self._check_refset(staging)
            labels = {code: names.display for code, names in self._labels(staging)}
            yield from self._concepts(staging, labels)

    def _check_refset(self, staging: Staging) -> None:
        if next(staging.rows("SELECT 1 FROM language WHERE refset = ? LIMIT 1", [self.language_refset]), None):
            return
        present = ", ".join(str(r) for (r,) in staging.rows("SELECT DISTINCT refset FROM language"))
        locations = ", ".join(f.location for f in self.files["language"])
        message = f"language refset {self.language_refset} has no active member (present: {present or 'none'})"
        raise SourceError(locations, None, message)

    def _labels(self, staging: Staging) -> Iterator[tuple[int, _Names]]:
        """Names of the relationship types and association refsets."""
        for code, rows in grouped(staging.rows(_NAMES.format(where=_LABELLED))):
            yield code, _Names(rows, self.language_refset)

    def _concepts(self, staging: Staging, labels: dict[int, str | None]) -> Iterator[Concept]:
        names = Aligned(staging.rows(_NAMES.format(where="")))
        definitions = Aligned(staging.rows("SELECT concept, term, lang FROM definition ORDER BY concept, id"))
        edges = Aligned(staging.rows("SELECT source, type, target FROM relationship ORDER BY source"))
        associations = Aligned(staging.rows("SELECT source, refset, target FROM association ORDER BY source"))
        for code, active in staging.rows("SELECT id, active FROM concept ORDER BY id"):
            concept_names = _Names(names.take(code), self.language_refset)
            yield Concept(
                str(code),
                concept_names.display or str(code),
                active=bool(active),
                designations=concept_names.designations,
                definitions=[Definition(term, language=language) for _, term, language in definitions.take(code)],
                relationships=_relationships(edges.take(code), labels),
                associations=_associations(associations.take(code), labels),
                properties=concept_names.properties,
            )


def _find_files(path: Path) -> dict[str, list[ReleaseFile]]:
    files = [f for f in release_files(path) if f.name.endswith(".txt")]
    found = {table.name: [f for f in files if f.name.startswith(table.prefixes)] for table in TABLES}
    for table in TABLES:
        if table.required and not found[table.name]:
            raise SourceError(path, None, f"no {table.prefixes[0]}*.txt file in the release")
    return found


def _edition(files: list[ReleaseFile]) -> tuple[int, str]:
    """The module holding most concepts of the latest effectiveTime, and that date."""
    latest, modules = "", Counter[int]()
    for file in files:
        for time, module in convert_rows(file, rf2_rows(file, CONCEPT_COLUMNS), _time_and_module):
            if time > latest:
                latest, modules = time, Counter()
            if time == latest:
                modules[module] += 1
    if not modules:
        raise SourceError(files[0].location, None, "no concepts")
    return modules.most_common(1)[0][0], latest


def _time_and_module(fields: list[str]) -> tuple[str, int]:
    """A concept row's effectiveTime and moduleId, checked (a bad one names its line)."""
    _component(fields)
    return fields[1], _metadata_id(fields[3], "moduleId")


def _stage(staging: Staging, table: _Table, files: list[ReleaseFile]) -> None:
    staging.create(table.name, table.schema)
    for file in files:
        rows = convert_rows(file, rf2_rows(file, table.columns), table.convert)
        try:
            staging.insert(table.name, rows)
        except sqlite3.IntegrityError:  # the concept table's primary key
            line, key = _first_duplicate(staging, table, file)
            raise SourceError(file.location, line, f"duplicate {table.name} id {key}") from None
    if table.index:
        staging.index(table.name, table.index)


def _first_duplicate(staging: Staging, table: _Table, file: ReleaseFile) -> tuple[int | None, str]:
    """Line and id of ``file``'s first row whose id an earlier row (of it, or of a file staged
    before it) has; read again only once a load has already failed."""
    seen: set[int] = set()
    for number, fields in rf2_rows(file, table.columns):
        key = int(fields[0])
        if key in seen or next(staging.rows(f"SELECT 1 FROM {table.name} WHERE id = ?", [key]), None):
            return number, fields[0]
        seen.add(key)
    return None, "?"


class _Names:
    """A concept's designations, display and name properties, from its description rows
    (one row per description and language refset member, see ``_NAMES``)."""

    __slots__ = ("designations", "display", "properties")

    def __init__(self, rows: list[Row], refset: int) -> None:
        ranked: list[tuple[tuple[int, int, int, int], Designation, str | None]] = []
        case: dict[str, str] = {}
        previous = None
        for _, description, active, is_fsn, language, term, cs, member_of, preferred in rows:
            if not active and description == previous:
                continue  # an inactive description once, whatever its refset rows
            previous = description
            text, tag = _split_tag(term) if is_fsn else (term, None)
            kind = DesignationUse.FSN if is_fsn else DesignationUse.SYNONYM
            use = DesignationUse.PREFERRED if preferred and not is_fsn else kind
            if not active:
                rank, use, member_of = 3, kind, None
            elif member_of is None:
                rank = 2
            else:
                rank = 0 if member_of == refset else 1
                language = DIALECTS.get(member_of, language)
            if active and cs != "ci":
                case.setdefault(text, cs)
            designation = Designation(text, use=use, language=language, type=kind, active=bool(active))
            ranked.append(((rank, member_of or 0, _USE_ORDER[use], description), designation, tag))
        ranked.sort(key=itemgetter(0))
        self.designations = [designation for _, designation, _ in ranked]
        self.display = _first(self.designations, DesignationUse.PREFERRED, DesignationUse.FSN, DesignationUse.SYNONYM)
        tag = next((tag for _, d, tag in ranked if tag and d.active), None)
        self.properties: dict[str, Any] = {"semantic_tag": tag} if tag else {}
        if case:
            self.properties["case_significance"] = case


def _split_tag(fsn: str) -> tuple[str, str | None]:
    """``"Asthma (disorder)"`` → ``("Asthma", "disorder")``."""
    match = _SEMANTIC_TAG.match(fsn)
    return (match.group(1), match.group(2)) if match else (fsn, None)


def _first(designations: list[Designation], *uses: str) -> str | None:
    """The text of the first active designation of the earliest of ``uses`` that has one."""
    for use in uses:
        for designation in designations:
            if designation.active and designation.use == use:
                return designation.text
    return None


def _relationships(rows: list[Row], labels: dict[int, str | None]) -> list[Relationship]:
    """Is-a edges first, then attributes in file order, each (type, target) once."""
    edges = dict.fromkeys((type_, target) for _, type_, target in rows)
    ordered = sorted(edges, key=lambda edge: edge[0] != IS_A_TYPE)
    return [
        Relationship(IS_A, str(target))
        if type_ == IS_A_TYPE
        else Relationship(str(type_), str(target), labels.get(type_))
        for type_, target in ordered
    ]


def _associations(rows: list[Row], labels: dict[int, str | None]) -> dict[str, list[str]]:
    associations: dict[str, list[str]] = {}
    for _, refset, target in rows:
        associations.setdefault(_association_name(refset, labels), []).append(str(target))
    return associations


def _association_name(refset: int, labels: dict[int, str | None]) -> str:
    """``replaced_by`` and so on; an unlisted refset by its term less "association reference set"."""
    if refset in ASSOCIATIONS:
        return ASSOCIATIONS[refset]
    label = labels.get(refset)
    if not label:
        return str(refset)
    words = re.sub(r"\s+association\s+(reference\s+set|refset)$", "", label, flags=re.IGNORECASE)
    return "_".join(words.lower().split())
