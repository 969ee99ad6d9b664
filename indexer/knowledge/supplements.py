"""Local supplements: a site's own terms, abbreviations and translations on loaded concepts.

Two formats, chosen by the file's suffix:

- ``.json``: a FHIR CodeSystem supplement (``resourceType`` ``CodeSystem``, ``content``
  ``supplement``, ``supplements`` the canonical URI of a loaded system, optionally ``|version``
  naming its loaded version), whose ``concept[]`` (nested ``concept[].concept[]`` too) carry
  ``designation[]`` entries ``{language, use, value}`` (``language`` defaults to the resource's,
  else ``en``). A designation's ``use`` gives its type: a code of
  :data:`TYPE_SYSTEM` (one of :data:`TYPES`), or a plain synonym use (SNOMED CT synonym or fully
  specified name, HL7 ``display``); without one, a term in another language than English is a
  ``translation`` and an English one a ``synonym``. Concepts' ``display`` and ``property`` are
  not read.
- ``.csv``: the header ``system,code,term,type,language``; ``system`` a loaded system's key
  (``hpo``) or URI, ``type`` one of :data:`TYPES`, ``language`` a BCP-47 tag (``en`` if empty).

Every term is checked (file, syntax, system, code in the system's latest loaded version, term,
type, language) before anything is written; a refusal is a :class:`SourceError` naming the file
and line. A supplement's terms are designations (``use`` synonym) of the concepts they name,
tagged ``knowledge = "supplement:NAME"`` and ``origin = "supplement NAME"``, with a row in the
``knowledge_source`` registry; adding a name again replaces it, in one transaction.
"""

from __future__ import annotations

import bisect
import csv
import hashlib
import io
import json
import json.decoder
import json.scanner
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, select

from indexer.records import DesignationUse, SourceError
from indexer.store import StoreReader, SystemVersion
from indexer.store.models import ConceptRow, DesignationRow, KnowledgeSourceRow

KIND = "supplement"
TYPES = ("synonym", "abbreviation", "layperson", "translation")
# FHIR designation.use codes naming a type directly (code: one of TYPES).
TYPE_SYSTEM = "urn:termsearch:designation-type"
# Designation uses that say no more than "another name": a synonym, or a translation.
SYNONYM_USES = {
    ("http://snomed.info/sct", "900000000000013009"),  # Synonym
    ("http://snomed.info/sct", "900000000000003001"),  # Fully specified name
    ("http://terminology.hl7.org/CodeSystem/designation-usage", "display"),
}
BASE_LANGUAGE = "en"  # the loaded terminologies' language: other languages are translations
CSV_HEADER = ["system", "code", "term", "type", "language"]
MAX_TERM = 512  # characters, as for a search query
MAX_LANGUAGE = 16  # characters of the designation.language column
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_LANGUAGE = re.compile(  # RFC 5646 language tag (grandfathered tags aside)
    r"(?:(?:[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4,8})"
    r"(?:-[a-z]{4})?(?:-(?:[a-z]{2}|[0-9]{3}))?"
    r"(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*"
    r"(?:-[0-9a-wyz](?:-[a-z0-9]{2,8})+)*"
    r"(?:-x(?:-[a-z0-9]{1,8})+)?"
    r"|x(?:-[a-z0-9]{1,8})+)",
    re.IGNORECASE,
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CHUNK = 500  # codes per lookup query


class SupplementError(ValueError):
    """A supplement name that cannot be used, or removed because nothing has it."""


@dataclass(frozen=True, slots=True)
class SystemRef:
    """A system as a supplement names it (key or URI, optional version), and where."""

    name: str
    version: str | None
    line: int


@dataclass(frozen=True, slots=True)
class Term:
    line: int  # where the term is written
    system: SystemRef
    code: str
    code_line: int  # where its code is written (a FHIR concept's line)
    text: str
    type: str
    language: str


@dataclass(frozen=True)
class SupplementResult:
    name: str
    path: str
    terms: int
    per_system: dict[str, int]  # system key -> terms added to it
    replaced: bool  # a supplement of that name was there before


def add_supplement(engine: Engine, path: Path, name: str | None = None) -> SupplementResult:
    """Check every term of the supplement at ``path``, then store it as ``name`` (default: the
    file's stem), replacing a supplement of that name, in one transaction."""
    name = _check_name(path.stem if name is None else name)
    data = _read_bytes(path)
    terms = _read_terms(path, data)
    systems = _resolve_systems(path, terms, StoreReader(engine).systems())
    with engine.begin() as conn:
        existing = conn.execute(select(KnowledgeSourceRow.kind).where(KnowledgeSourceRow.name == name)).scalar()
        if existing not in (None, KIND):
            raise SupplementError(f"the name {name!r} is taken by the {existing} knowledge source; pass --name")
        concept_ids = _concept_ids(conn, path, terms, systems)
        _delete(conn, name)
        conn.execute(
            insert(DesignationRow),
            [
                {
                    "concept_id": concept_ids[term.system, term.code],
                    "text": term.text,
                    "use": DesignationUse.SYNONYM,
                    "language": term.language,
                    "scope": None,
                    "type": term.type,
                    "active": True,
                    "origin": f"{KIND} {name}",
                    "knowledge": knowledge_key(name),
                }
                for term in terms
            ],
        )
        conn.execute(
            insert(KnowledgeSourceRow).values(
                name=name,
                kind=KIND,
                path=str(path.resolve()),
                sha256=hashlib.sha256(data).hexdigest(),
                terms=len(terms),
                loaded_at=datetime.now(UTC),
            )
        )
    per_system = Counter(systems[term.system].key for term in terms)
    return SupplementResult(name, str(path), len(terms), dict(sorted(per_system.items())), existing is not None)


def remove_supplement(engine: Engine, name: str) -> int:
    """Delete the supplement ``name`` and its designations; how many there were."""
    with engine.begin() as conn:
        terms = conn.execute(
            select(KnowledgeSourceRow.terms).where(KnowledgeSourceRow.name == name, KnowledgeSourceRow.kind == KIND)
        ).scalar()
        if terms is None:
            loaded = conn.scalars(
                select(KnowledgeSourceRow.name).where(KnowledgeSourceRow.kind == KIND).order_by(KnowledgeSourceRow.name)
            ).all()
            raise SupplementError(f"no supplement named {name!r} (loaded: {', '.join(loaded) or 'none'})")
        _delete(conn, name)
    return terms


def knowledge_key(name: str) -> str:
    """The ``knowledge`` value of a supplement's designations."""
    return f"{KIND}:{name}"


def _read_terms(path: Path, data: bytes) -> list[Term]:
    """Every term of a supplement file, checked for everything but the store's systems and codes."""
    read = {".json": _read_fhir, ".csv": _read_csv}.get(path.suffix.lower())
    if read is None:
        raise SourceError(path, None, "expected a FHIR CodeSystem supplement (.json) or a CSV file (.csv)")
    terms = read(path, _decode(path, data))
    if not terms:
        raise SourceError(path, None, "no terms to add")
    return terms


def _check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise SupplementError(
            f"invalid supplement name {name!r}: letters, digits, '.', '_' and '-', at most 100, "
            "starting with a letter or digit"
        )
    return name


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SourceError(path, None, "no such file") from None
    except OSError as e:
        raise SourceError(path, None, f"cannot read: {e.strerror or e}") from None


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SourceError(path, data.count(b"\n", 0, e.start) + 1, f"not UTF-8: {e.reason}") from None


def _check_term(path: Path, line: int, text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise SourceError(path, line, "empty term")
    text = text.strip()
    if len(text) > MAX_TERM:
        raise SourceError(path, line, f"term of {len(text)} characters, more than {MAX_TERM}")
    if _CONTROL.search(text):
        raise SourceError(path, line, f"control character in the term {text!r}")
    return text


def _check_type(path: Path, line: int, value: str) -> str:
    if value not in TYPES:
        raise SourceError(path, line, f"unknown type {value!r}; expected one of {', '.join(TYPES)}")
    return value


def _language(path: Path, line: int, tag: object) -> str:
    """A well-formed BCP-47 tag in its usual case (``en-GB``, ``zh-Hant``, ``es-419``)."""
    if not isinstance(tag, str) or not _LANGUAGE.fullmatch(tag):
        raise SourceError(path, line, f"invalid language tag {tag!r} (expected BCP-47, e.g. en, fr, pt-BR)")
    if len(tag) > MAX_LANGUAGE:
        raise SourceError(path, line, f"language tag {tag!r} longer than {MAX_LANGUAGE} characters")
    primary, *rest = tag.split("-")
    subtags = [primary.lower()]
    for subtag in rest:
        if len(subtags[-1]) == 1:  # after a singleton (extension, private use): lower case
            subtags.append(subtag.lower())
        elif len(subtag) == 2 and subtag.isalpha():
            subtags.append(subtag.upper())
        elif len(subtag) == 4 and subtag.isalpha():
            subtags.append(subtag.title())
        else:
            subtags.append(subtag.lower())
    return "-".join(subtags)


def _is_foreign(language: str) -> bool:
    return language.split("-")[0] != BASE_LANGUAGE


# CSV


def _read_csv(path: Path, text: str) -> list[Term]:
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    terms: list[Term] = []
    end = 0  # last line of the previous record
    try:
        for fields in rows:
            line, end = end + 1, rows.line_num
            if line == 1:
                if [f.strip().lower() for f in fields] != CSV_HEADER:
                    raise SourceError(path, line, f"expected the header {','.join(CSV_HEADER)!r}")
                continue
            if not fields:
                continue
            if len(fields) != len(CSV_HEADER):
                raise SourceError(path, line, f"expected {len(CSV_HEADER)} comma-separated columns, got {len(fields)}")
            system, code, term, kind, language = (f.strip() for f in fields)
            if not system or not code:
                raise SourceError(path, line, f"empty {'system' if not system else 'code'}")
            terms.append(
                Term(
                    line,
                    SystemRef(system, None, line),
                    code,
                    line,
                    _check_term(path, line, term),
                    _check_type(path, line, kind),
                    _language(path, line, language or BASE_LANGUAGE),
                )
            )
    except csv.Error as e:
        raise SourceError(path, rows.line_num, f"malformed CSV: {e}") from None
    if end == 0:
        raise SourceError(path, 1, f"empty file; expected the header {','.join(CSV_HEADER)!r}")
    return terms


# FHIR CodeSystem supplement (JSON)


class _Node(dict[str, Any]):
    """A JSON object, with the line it starts on and the line of each member's value."""

    line: int
    lines: dict[str, int]

    def line_of(self, key: str) -> int:
        return self.lines.get(key, self.line)


def _parse_json(path: Path, text: str) -> Any:
    """``json.loads`` whose objects are :class:`_Node` (json's pure-Python scanner, with its
    object parser wrapped to note where each object and member value starts)."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    value_starts: list[list[int]] = []  # per object being parsed, where its values start

    def line(index: int) -> int:
        return bisect.bisect_left(newlines, index) + 1

    def scan_value(string: str, index: int) -> tuple[Any, int]:
        value_starts[-1].append(index)
        return scan_once(string, index)

    def parse_object(s_and_end: tuple[str, int], strict: bool, *_: Any) -> tuple[_Node, int]:
        value_starts.append([])
        try:
            pairs, end = json.decoder.JSONObject(s_and_end, strict, scan_value, None, list, {})
        finally:
            starts = value_starts.pop()
        node = _Node(pairs)
        node.line = line(s_and_end[1] - 1)
        node.lines = {key: line(start) for (key, _), start in zip(pairs, starts, strict=True)}
        return node, end

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[assignment]
    scan_once = decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as e:
        raise SourceError(path, e.lineno, f"not valid JSON: {e.msg}") from None
    except RecursionError:
        raise SourceError(path, None, "not valid JSON: nested too deeply") from None


def _read_fhir(path: Path, text: str) -> list[Term]:
    root = _parse_json(path, text)
    if not isinstance(root, _Node):
        raise SourceError(path, 1, "expected a FHIR CodeSystem resource (a JSON object)")
    for key, expected in (("resourceType", "CodeSystem"), ("content", "supplement")):
        if root.get(key) != expected:
            raise SourceError(path, root.line_of(key), f"expected {key} {expected!r}, got {root.get(key)!r}")
    supplements = root.get("supplements")
    if not isinstance(supplements, str) or not supplements.strip("| "):
        raise SourceError(path, root.line_of("supplements"), "expected supplements: the URI of the supplemented code system")
    uri, _, version = supplements.strip().partition("|")
    system = SystemRef(uri, version or None, root.line_of("supplements"))
    default_language = _language(path, root.line_of("language"), root.get("language", BASE_LANGUAGE))
    terms: list[Term] = []
    pending = list(reversed(_objects(path, root, "concept", "concept")))
    while pending:  # depth first, in file order
        concept = pending.pop()
        code = concept.get("code")
        if not isinstance(code, str) or not code.strip():
            raise SourceError(path, concept.line, "concept without a code")
        for designation in _objects(path, concept, "designation", "designation"):
            terms.append(_fhir_term(path, designation, system, code.strip(), concept.line, default_language))
        pending.extend(reversed(_objects(path, concept, "concept", "concept")))
    return terms


def _objects(path: Path, node: _Node, key: str, what: str) -> list[_Node]:
    """The objects listed under ``node[key]`` (none when absent)."""
    items = node.get(key, [])
    if not isinstance(items, list) or not all(isinstance(item, _Node) for item in items):
        raise SourceError(path, node.line_of(key), f"expected {key} to be a list of {what} objects")
    return items


def _fhir_term(
    path: Path, designation: _Node, system: SystemRef, code: str, code_line: int, default_language: str
) -> Term:
    line = designation.line
    text = _check_term(path, line, designation.get("value"))
    language = _language(path, line, designation.get("language", default_language))
    use = designation.get("use")
    if use is None:
        kind = "translation" if _is_foreign(language) else "synonym"
    elif not isinstance(use, _Node):
        raise SourceError(path, line, "expected use to be a Coding object")
    elif use.get("system") == TYPE_SYSTEM:
        kind = _check_type(path, line, use.get("code"))
    elif (use.get("system"), use.get("code")) in SYNONYM_USES:
        kind = "translation" if _is_foreign(language) else "synonym"
    else:
        raise SourceError(
            path,
            line,
            f"unknown designation use {use.get('system')}|{use.get('code')}; expected a code of "
            f"{TYPE_SYSTEM} ({', '.join(TYPES)}) or a synonym use",
        )
    return Term(line, system, code, code_line, text, kind, language)


# The store


def _resolve_systems(path: Path, terms: list[Term], loaded: list[SystemVersion]) -> dict[SystemRef, SystemVersion]:
    """The loaded (latest) version of each system the terms name, by key or URI."""
    by_name = {s.key: s for s in loaded} | {s.uri: s for s in loaded}
    resolved: dict[SystemRef, SystemVersion] = {}
    for ref in dict.fromkeys(term.system for term in terms):
        system = by_name.get(ref.name)
        if system is None:
            known = ", ".join(f"{s.key} ({s.uri})" for s in loaded) or "none"
            raise SourceError(path, ref.line, f"no loaded code system {ref.name!r} (loaded: {known})")
        if ref.version is not None and ref.version != system.version:
            raise SourceError(
                path, ref.line, f"supplements {system.key} version {ref.version!r}, but the store's is {system.version!r}"
            )
        resolved[ref] = system
    return resolved


def _concept_ids(
    conn: Connection, path: Path, terms: list[Term], systems: dict[SystemRef, SystemVersion]
) -> dict[tuple[SystemRef, str], int]:
    """The concept row of each term's code; the first unknown code (by line) is refused."""
    wanted: dict[SystemVersion, set[str]] = {}
    for term in terms:
        wanted.setdefault(systems[term.system], set()).add(term.code)
    found: dict[tuple[int, str], int] = {}
    for system, codes in wanted.items():
        ordered = sorted(codes)
        for start in range(0, len(ordered), _CHUNK):
            rows = conn.execute(
                select(ConceptRow.code, ConceptRow.id).where(
                    ConceptRow.version_id == system.version_id, ConceptRow.code.in_(ordered[start : start + _CHUNK])
                )
            )
            found.update(((system.version_id, code), row_id) for code, row_id in rows)
    unknown = [term for term in terms if (systems[term.system].version_id, term.code) not in found]
    if unknown:
        first, system = unknown[0], systems[unknown[0].system]
        more = f" ({len(unknown) - 1} more terms with unknown codes)" if len(unknown) > 1 else ""
        raise SourceError(path, first.code_line, f"unknown code {first.code!r} in {system.key} {system.version}{more}")
    return {(term.system, term.code): found[systems[term.system].version_id, term.code] for term in terms}


def _delete(conn: Connection, name: str) -> None:
    conn.execute(delete(DesignationRow).where(DesignationRow.knowledge == knowledge_key(name)))
    conn.execute(delete(KnowledgeSourceRow).where(KnowledgeSourceRow.name == name))
