"""UMLS Metathesaurus: an installed ``META`` directory (or a zip of one) of RRF files.

Column order comes from ``MRFILES.RRF`` (``FIL|DES|FMT|CLS|RWS|BTS``), so subsets and releases
that add columns read the same. ``MRCONSO.RRF`` is required; ``MRDEF``, ``MRSTY``, ``MRREL``,
``MRRANK`` and ``MRSAB`` are read when MRFILES lists them.

Filters: ``lang`` (LAT values, e.g. ``ENG``), ``sab`` (source vocabularies) and the suppressible
flag: atoms flagged O, E or Y are dropped, or, with ``include_suppressed``, kept as inactive
designations. A concept left with no active designation is inactive.

Two shapes:

- UMLS-wide (key ``umls``): one concept per CUI; the display is the preferred atom (TS=P, STT=PF,
  ISPREF=Y, in the first of ``lang``), designations are the distinct strings of its atoms, typed
  ``SAB/TTY`` of the first atom with that string; xrefs are the atoms' ``SAB:CODE``;
- one source vocabulary as its own system (``as_sab``, e.g. SNOMEDCT_US → key ``snomedct_us``):
  one concept per CODE of that SAB, designations typed by TTY, display the atom of highest MRRANK
  rank; only that SAB's definitions and relationships; xrefs are the codes' ``UMLS:CUI``.

Definitions (MRDEF) go with the atom they are attached to, their source the SAB. Semantic types
(MRSTY) go to ``properties["semantic_types"]`` (names) and ``properties["tuis"]``. MRREL rows read
right to left, "CUI2 REL CUI1" (every relationship is listed in both directions): CHD is an
``IS_A`` edge from CUI2 to CUI1, RN ("narrower than") and RO are edges typed by RELA (or REL);
PAR and RB, their inverses, are not repeated. Edges to concepts not loaded are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
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
from indexer.sources._release import (
    Malformed,
    ReleaseFile,
    convert_rows,
    disk_file,
    numbered_lines,
    release_files,
    rrf_rows,
)
from indexer.sources._staging import Aligned, Row, Staging, grouped

KEY = "umls"
URI = "http://www.nlm.nih.gov/research/umls"
NAME = "UMLS Metathesaurus"
SAB_URIS = {
    "SNOMEDCT_US": "http://snomed.info/sct",
    "MSH": "http://id.nlm.nih.gov/mesh",
    "ICD10CM": "http://hl7.org/fhir/sid/icd-10-cm",
}
SUPPRESSIBLE = frozenset({"O", "E", "Y"})
LANGUAGES = {
    "ENG": "en", "FRE": "fr", "GER": "de", "SPA": "es", "ITA": "it", "DUT": "nl", "POR": "pt",
    "SWE": "sv", "DAN": "da", "NOR": "no", "FIN": "fi", "CZE": "cs", "HUN": "hu", "POL": "pl",
    "RUS": "ru", "JPN": "ja", "CHI": "zh", "KOR": "ko", "GRE": "el", "HEB": "he", "TUR": "tr",
    "EST": "et", "LAV": "lv", "CRO": "hr", "UKR": "uk", "ARA": "ar",
}  # fmt: skip
RELATION_LABELS = {"RN": "is narrower than", "RO": "is related to"}  # CHD is IS_A
_SUPPRESS_FLAGS = frozenset({"N", *SUPPRESSIBLE})
_CUI = re.compile(r"C\d{7}")
_AUI = re.compile(r"A\d{7,10}")
_TUI = re.compile(r"T\d{3}")


@dataclass(frozen=True, slots=True)
class _File:
    name: str
    columns: tuple[str, ...]  # the columns this loader reads (MRFILES gives their positions)
    required: bool = False


CONSO = _File(
    "MRCONSO.RRF", ("CUI", "LAT", "TS", "STT", "ISPREF", "AUI", "SAB", "TTY", "CODE", "STR", "SUPPRESS"), required=True
)
DEF = _File("MRDEF.RRF", ("AUI", "SAB", "DEF", "SUPPRESS"))
STY = _File("MRSTY.RRF", ("CUI", "TUI", "STY"))
REL = _File("MRREL.RRF", ("CUI1", "AUI1", "REL", "CUI2", "AUI2", "RELA", "SAB", "SUPPRESS"))
RANK = _File("MRRANK.RRF", ("MRRANK_RANK", "SAB", "TTY"))
SAB = _File("MRSAB.RRF", ("RSAB", "SON", "SVER", "CURVER"))

_ATOMS = "SELECT key, cui, lat, sab, tty, code, str, preference, suppressed FROM atom ORDER BY key, rowid"
_DEFINITIONS = """SELECT a.key, d.text, d.sab, a.lat FROM definition d
    CROSS JOIN atom a ON a.aui = d.aui ORDER BY a.key, d.rowid"""  # CROSS: from the few definitions
_CUI_QUERIES = (
    "SELECT cui, tui, sty FROM sty ORDER BY cui, rowid",
    """SELECT r.source, r.target, r.rel, r.rela FROM relation r
       WHERE EXISTS (SELECT 1 FROM atom WHERE key = r.target) ORDER BY r.source, r.rowid""",
)
_SAB_QUERIES = (
    "SELECT DISTINCT a.key, s.tui, s.sty FROM atom a JOIN sty s ON s.cui = a.cui ORDER BY a.key, s.tui",
    """SELECT s.key, t.key, r.rel, r.rela FROM relation r
       JOIN atom s ON s.aui = r.source JOIN atom t ON t.aui = r.target ORDER BY s.key, r.rowid""",
)


Picker = Callable[[list[str]], tuple[str, ...]]


class Columns:
    """A file and the order of its columns, as MRFILES (at ``listed_in``) gives it."""

    def __init__(self, file: ReleaseFile, names: Sequence[str], listed_in: str) -> None:
        self.file, self.names, self.listed_in = file, tuple(names), listed_in

    def getter(self, wanted: Sequence[str]) -> Picker:
        """A function picking the ``wanted`` columns of a row, in that order."""
        missing = [c for c in wanted if c not in self.names]
        if missing:
            raise SourceError(self.listed_in, None, f"{self.file.name} has no column {', '.join(missing)}")
        return itemgetter(*(self.names.index(c) for c in wanted))  # type: ignore[return-value]

    def rows(self, convert: Callable[[list[str]], Row | None]) -> Iterator[Row]:
        return convert_rows(self.file, rrf_rows(self.file, len(self.names)), convert)


class UmlsSource:
    """An installed UMLS Metathesaurus (see the module docstring for options and mapping)."""

    def __init__(
        self,
        path: str | Path | None = None,
        sab: Iterable[str] | None = None,
        lang: Iterable[str] | None = None,
        as_sab: str | None = None,
        include_suppressed: bool = False,
    ) -> None:
        if path is None:
            raise ValueError("a UMLS source needs the path of a META directory")
        if sab and as_sab:
            raise ValueError("sab and as_sab exclude each other: as_sab loads that one source")
        self.path = Path(path)
        self.as_sab = as_sab.upper() if as_sab else None
        self.sabs = frozenset([self.as_sab] if self.as_sab else [s.upper() for s in sab or ()]) or None
        self.languages = tuple(code.upper() for code in lang or ())
        self.include_suppressed = include_suppressed
        listing = release_files(self.path)
        self.files = _files(self.path, listing)
        sources = self._sources()
        unknown = sorted(self.sabs - sources.keys()) if self.sabs and sources else []
        if unknown:
            listed = ", ".join(sorted(sources))
            raise ValueError(f"unknown source vocabulary {', '.join(unknown)}; MRSAB.RRF lists {listed}")
        release = _release_name(self.path, listing)
        if self.as_sab:
            name, version = sources.get(self.as_sab, (self.as_sab, release))
            uri = SAB_URIS.get(self.as_sab, f"urn:umls:sab:{self.as_sab}")
            self.info = CodeSystemInfo(self.as_sab.lower(), uri, name, version)
        else:
            self.info = CodeSystemInfo(KEY, URI, NAME, release)

    def __iter__(self) -> Iterator[Concept]:
        with Staging("termsearch-umls-") as staging:
            self._stage(staging)
            if next(staging.rows("SELECT 1 FROM atom LIMIT 1"), None) is None:
                location = self.files[CONSO.name].file.location
                raise SourceError(location, None, f"no atom passes the filters ({self._filters()})")
            types, edges = _SAB_QUERIES if self.as_sab else _CUI_QUERIES
            definitions = Aligned(staging.rows(_DEFINITIONS))
            semantic_types = Aligned(staging.rows(types))
            relationships = Aligned(staging.rows(edges))
            for key, atoms in grouped(staging.rows(_ATOMS)):
                concept = self._concept(key, atoms)
                concept.definitions = [
                    Definition(text, sab, _language(lat)) for _, text, sab, lat in definitions.take(key)
                ]
                concept.relationships = _relationships(key, relationships.take(key))
                concept.properties = _semantic_types(semantic_types.take(key))
                yield concept

    # --- metadata ---------------------------------------------------------------------------------

    def _sources(self) -> dict[str, tuple[str, str]]:
        """RSAB → (official name, version) of the current versions in MRSAB, if present."""
        if SAB.name not in self.files:
            return {}
        columns = self.files[SAB.name]
        rows = columns.rows(columns.getter(SAB.columns))
        return {rsab: (name, version) for rsab, name, version, current in rows if current == "Y"}

    def _ranks(self) -> dict[tuple[str, str], int]:
        """(SAB, TTY) → MRRANK rank (higher is preferred), if MRRANK is present."""
        if RANK.name not in self.files:
            return {}
        columns = self.files[RANK.name]
        pick = columns.getter(RANK.columns)

        def convert(fields: list[str]) -> tuple[tuple[str, str], int]:
            rank, sab, tty = pick(fields)
            if not rank.isdigit():
                raise Malformed(f"MRRANK_RANK: {rank!r} is not a number")
            return (sab, tty), int(rank)

        return dict(columns.rows(convert))

    def _filters(self) -> str:
        return f"lang={','.join(self.languages) or 'any'}, sab={','.join(sorted(self.sabs or ())) or 'any'}"

    # --- staging ----------------------------------------------------------------------------------

    def _stage(self, staging: Staging) -> None:
        tables = (
            ("atom", "key TEXT, cui TEXT, aui TEXT, lat TEXT, sab TEXT, tty TEXT, code TEXT, str TEXT, "
             "preference INTEGER, suppressed INTEGER", CONSO, self._atom_row, ("key", "aui")),
            ("definition", "aui TEXT, sab TEXT, text TEXT", DEF, self._definition_row, ()),
            ("sty", "cui TEXT, tui TEXT, sty TEXT", STY, _semantic_type_row, ("cui",)),
            ("relation", "source TEXT, target TEXT, rel TEXT, rela TEXT", REL, self._relation_row, ("source",)),
        )  # fmt: skip
        for table, schema, file, convert, indexes in tables:
            staging.create(table, schema)
            if file.name in self.files:
                columns = self.files[file.name]
                staging.insert(table, columns.rows(convert(columns.getter(file.columns))))
            for index in indexes:
                staging.index(table, index)

    def _keep(self, sab: str, suppress: str) -> bool | None:
        """None when the row is filtered out, else whether it is suppressed (kept only with
        ``include_suppressed``, and then only for atoms)."""
        if suppress not in _SUPPRESS_FLAGS:
            raise Malformed(f"SUPPRESS: unknown flag {suppress!r}")
        if self.sabs is not None and sab not in self.sabs:
            return None
        suppressed = suppress in SUPPRESSIBLE
        return None if suppressed and not self.include_suppressed else suppressed

    def _atom_row(self, pick: Picker) -> Callable[[list[str]], Row | None]:
        languages = {lat: rank for rank, lat in enumerate(self.languages)}
        ranks = self._ranks() if self.as_sab else {}

        def convert(fields: list[str]) -> Row | None:
            cui, lat, ts, stt, ispref, aui, sab, tty, code, text, suppress = pick(fields)
            _check(_CUI, cui, "CUI")
            _check(_AUI, aui, "AUI")
            suppressed = self._keep(sab, suppress)
            if suppressed is None or (languages and lat not in languages) or (self.as_sab and code == "NOCODE"):
                return None
            language_rank = languages.get(lat, 0) if languages else lat != "ENG"
            umls_rank = (ts != "P") * 4 + (stt != "PF") * 2 + (ispref != "Y")
            preference = (language_rank * 100_000 - ranks.get((sab, tty), 0)) * 8 + umls_rank
            key = code if self.as_sab else cui
            return key, cui, aui, lat, sab, tty, code, text, preference, suppressed

        return convert

    def _definition_row(self, pick: Picker) -> Callable[[list[str]], Row | None]:
        def convert(fields: list[str]) -> Row | None:
            aui, sab, text, suppress = pick(fields)
            _check(_AUI, aui, "AUI")
            return (aui, sab, text) if self._keep(sab, suppress) is False else None

        return convert

    def _relation_row(self, pick: Picker) -> Callable[[list[str]], Row | None]:
        def convert(fields: list[str]) -> Row | None:
            cui1, aui1, rel, cui2, aui2, rela, sab, suppress = pick(fields)
            for value, column in ((cui1, "CUI1"), (cui2, "CUI2")):
                if value:  # some releases hold rows without CUI1: they attach to nothing
                    _check(_CUI, value, column)
            if not (cui1 and cui2) or rel not in ("CHD", *RELATION_LABELS) or self._keep(sab, suppress) is not False:
                return None
            if self.as_sab:
                return (aui2, aui1, rel, rela) if aui1 and aui2 else None
            return cui2, cui1, rel, rela

        return convert

    # --- concepts ---------------------------------------------------------------------------------

    def _concept(self, key: str, atoms: list[Row]) -> Concept:
        """Display, designations, status and xrefs from a concept's atoms (in file order)."""
        best = min(range(len(atoms)), key=lambda i: (atoms[i][8], atoms[i][7]))
        designations: dict[tuple[str, str], Designation] = {}
        xrefs: dict[str, None] = {}
        for position in (best, *range(len(atoms))):
            _, cui, lat, sab, tty, code, text, _, suppressed = atoms[position]
            language = _language(lat)
            use = DesignationUse.PREFERRED if position == best else DesignationUse.SYNONYM
            type_ = tty if self.as_sab else f"{sab}/{tty}"
            designation = Designation(text, use, language, type=type_, active=not suppressed)
            designations.setdefault((text, language), designation)
            xrefs.setdefault(f"UMLS:{cui}" if self.as_sab else f"{sab}:{code}")
        return Concept(
            key,
            atoms[best][6],
            active=any(not atom[8] for atom in atoms),
            designations=list(designations.values()),
            xrefs=[x for x in xrefs if not x.endswith(":NOCODE")],
        )


def _check(pattern: re.Pattern[str], value: str, column: str) -> None:
    if not pattern.fullmatch(value):
        raise Malformed(f"{column}: {value!r} is not a UMLS identifier")


def _semantic_type_row(pick: Picker) -> Callable[[list[str]], Row | None]:
    def convert(fields: list[str]) -> Row:
        cui, tui, name = pick(fields)
        _check(_CUI, cui, "CUI")
        _check(_TUI, tui, "TUI")
        return cui, tui, name

    return convert


def _language(lat: str) -> str:
    return LANGUAGES.get(lat, lat.lower())


def _semantic_types(rows: list[Row]) -> dict[str, Any]:
    if not rows:
        return {}
    types = dict.fromkeys((tui, name) for _, tui, name in rows)
    return {"semantic_types": [name for _, name in types], "tuis": [tui for tui, _ in types]}


def _relationships(key: str, rows: list[Row]) -> list[Relationship]:
    edges: dict[tuple[str, str], Relationship] = {}
    for _, target, rel, rela in rows:
        if target == key:
            continue
        if rel == "CHD":
            edge = Relationship(IS_A, target)
        else:
            edge = Relationship(rela or rel, target, rela.replace("_", " ") if rela else RELATION_LABELS[rel])
        edges.setdefault((edge.type, target), edge)
    return sorted(edges.values(), key=lambda edge: edge.type != IS_A)


# --- files ----------------------------------------------------------------------------------------


def _files(path: Path, listing: list[ReleaseFile]) -> dict[str, Columns]:
    """The RRF files this loader reads, with their columns from MRFILES."""
    on_disk = {f.name: f for f in listing if f.name.endswith(".RRF")}
    if "MRFILES.RRF" not in on_disk:
        raise SourceError(path, None, "no MRFILES.RRF: expected an installed META directory")
    mrfiles = on_disk["MRFILES.RRF"]
    listed = {name: columns for name, columns in convert_rows(mrfiles, rrf_rows(mrfiles, 6), _mrfiles_row)}
    files: dict[str, Columns] = {}
    for file in (CONSO, DEF, STY, REL, RANK, SAB):
        if file.name in listed and file.name not in on_disk:
            raise SourceError(path, None, f"{file.name} is listed in MRFILES.RRF but missing")
        if file.name in on_disk and file.name not in listed:
            raise SourceError(mrfiles.location, None, f"{file.name} is not listed, so its columns are unknown")
        if file.name in on_disk:
            files[file.name] = Columns(on_disk[file.name], listed[file.name], mrfiles.location)
        elif file.required:
            raise SourceError(path, None, f"no {file.name}")
    return files


def _mrfiles_row(fields: list[str]) -> tuple[str, list[str]]:
    name, _, fmt, count = fields[:4]
    columns = fmt.split(",")
    if not count.isdigit() or int(count) != len(columns):
        raise Malformed(f"{name}: CLS {count!r} does not match the {len(columns)} columns of FMT")
    return name.rsplit("/", 1)[-1], columns


def _release_name(path: Path, listing: list[ReleaseFile]) -> str:
    """``umls.release.name`` from a release.dat in the release (or beside a META directory),
    else the directory's name (its parent's for a directory named META)."""
    found = [f for f in listing if f.name == "release.dat"]
    beside = path.parent / "release.dat"
    if path.is_dir() and beside.is_file():
        found.append(disk_file(beside))
    for file in found:
        for _, line in numbered_lines(file):
            key, _, value = line.partition("=")
            if key.strip() == "umls.release.name" and value.strip():
                return value.strip()
    named = path if path.is_dir() else path.with_suffix("")
    return named.parent.name if named.name.upper() == "META" else named.name
