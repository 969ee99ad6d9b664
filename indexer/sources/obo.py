"""Streaming OBO 1.4 reader: one :class:`Concept` per ``[Term]`` stanza.

Mapping (tags not listed are ignored, ``[Typedef]`` and other stanzas are skipped):

- ``id`` → code; ``name`` → display and a preferred designation;
- ``synonym: "text" SCOPE [TYPE] [xrefs]`` → a synonym designation with that scope (RELATED when
  absent, as the format says) and type. The type is the ``synonymtypedef`` id (``layperson``,
  ``uk_spelling``, ...), except where the id is a CURIE (``HP:0034334``): then its quoted
  description (``allelic_requirement``) is the readable name. ``obsolete_synonym`` designations are
  marked inactive;
- ``def: "text" [xrefs]`` → a definition whose source is the xrefs joined by ``", "``;
- ``is_a`` → ``IS_A`` edges; ``relationship: TYPE TARGET`` → edges labelled with TYPE's words;
- ``is_obsolete: true`` → inactive; ``replaced_by`` / ``consider`` → associations;
- ``xref`` → xrefs (ids only); ``alt_id``, ``subset`` → ``properties["alt_ids"|"subsets"]``;
  ``comment`` → ``properties["comment"]``.

Trailing ``! comments`` and ``{qualifier}`` blocks are dropped and OBO escapes are undone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
from indexer.sources._release import decode_line

SCOPES = frozenset({"EXACT", "BROAD", "NARROW", "RELATED"})
_INACTIVE_SYNONYM_TYPES = frozenset({"obsolete_synonym"})
_ESCAPE = re.compile(r"\\(.)")
_ESCAPED = {"n": "\n", "t": "\t", "W": " "}
_QUALIFIERS = re.compile(r'(?<!\\)\{(?:[^{}"\\]|\\.|"(?:[^"\\]|\\.)*")*\}\s*$')
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

Tag = tuple[int, str, str]  # line number, tag, raw value


class _Malformed(Exception):
    """A bad value; turned into :class:`SourceError` by the caller, which knows the line."""


# --- values ---------------------------------------------------------------------------------------


def unescape(text: str) -> str:
    """Undo OBO escapes: ``\\n``, ``\\t``, ``\\W`` (space); any other ``\\c`` is ``c``."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), text)


@cache
def _unquoted_run(chars: str) -> re.Pattern[str]:
    """Matches the longest run free of unescaped, unquoted ``chars``."""
    excluded = re.escape(chars)
    return re.compile(rf'(?:[^"\\{excluded}]|\\.|"(?:[^"\\]|\\.)*")*')


def _find(text: str, chars: str, start: int = 0) -> int:
    """Index of the first of ``chars`` from ``start`` that is neither escaped nor quoted, or -1."""
    run = _unquoted_run(chars).match(text, start)
    end = run.end() if run else start  # (the pattern also matches the empty string)
    return end if end < len(text) and text[end] in chars else -1


def _strip_trailing(value: str) -> str:
    """Drop a trailing ``! comment`` and then a trailing ``{qualifiers}`` block."""
    if "!" not in value and "{" not in value:
        return value.strip()
    bang = _find(value, "!")
    if bang >= 0:
        value = value[:bang]
    return _QUALIFIERS.sub("", value).strip()


def _text(value: str) -> str:
    return unescape(_strip_trailing(value))


def _tokens(value: str, count: int) -> list[str]:
    tokens = _strip_trailing(value).split()
    if len(tokens) < count:
        raise _Malformed(f"expected {count} value(s), got {value!r}")
    return [unescape(t) for t in tokens[:count]]


def _identifier(value: str) -> str:
    return _tokens(value, 1)[0]


def _quoted(value: str) -> tuple[str, str]:
    """Split ``"text" rest`` into the unescaped text and the rest."""
    if not value.startswith('"'):
        raise _Malformed(f"expected a quoted string, got {value!r}")
    match = _QUOTED.match(value)
    if match is None:
        raise _Malformed("unterminated quoted string")
    return unescape(match.group(1)), value[match.end() :].strip()


def _split(text: str, separator: str) -> list[str]:
    """Split at each unescaped, unquoted ``separator``."""
    parts, start = [], 0
    while (cut := _find(text, separator, start)) >= 0:
        parts.append(text[start:cut])
        start = cut + 1
    parts.append(text[start:])
    return parts


def _xrefs(value: str) -> list[str]:
    """The ids of an ``[id "description", id]`` list that makes up the whole value."""
    if not value.startswith("["):
        raise _Malformed(f"expected an xref list in [], got {value!r}")
    end = _find(value, "]", 1)
    if end < 0:
        raise _Malformed("unterminated xref list")
    if value[end + 1 :].strip():
        raise _Malformed(f"unexpected text after the xref list: {value[end + 1 :]!r}")
    return [unescape(item.split()[0]) for item in _split(value[1:end], ",") if item.strip()]


# --- tags -----------------------------------------------------------------------------------------

Handler = Callable[[Concept, str, Mapping[str, str]], None]


def _synonym(concept: Concept, value: str, types: Mapping[str, str]) -> None:
    text, rest = _quoted(value)
    rest = _strip_trailing(rest)
    bracket = _find(rest, "[")
    head = (rest if bracket < 0 else rest[:bracket]).split()
    if bracket >= 0:
        _xrefs(rest[bracket:])  # validated; synonym provenance is not kept
    if len(head) > 2:
        raise _Malformed(f"unexpected synonym fields {' '.join(head)!r}")
    scope = head[0] if head else "RELATED"
    if scope not in SCOPES:
        raise _Malformed(f"unknown synonym scope {scope!r}")
    type_ = types.get(head[1], head[1]) if len(head) == 2 else None
    active = type_ not in _INACTIVE_SYNONYM_TYPES
    concept.designations.append(Designation(text, scope=scope, type=type_, active=active))


def _definition(concept: Concept, value: str, _: Mapping[str, str]) -> None:
    text, rest = _quoted(value)
    rest = _strip_trailing(rest)
    sources = _xrefs(rest) if rest else []
    concept.definitions.append(Definition(text, ", ".join(sources) or None))


def _is_a(concept: Concept, value: str, _: Mapping[str, str]) -> None:
    concept.relationships.append(Relationship(IS_A, _identifier(value)))


def _relationship(concept: Concept, value: str, _: Mapping[str, str]) -> None:
    type_, target = _tokens(value, 2)
    concept.relationships.append(Relationship(type_, target, label=type_.replace("_", " ")))


def _xref(concept: Concept, value: str, _: Mapping[str, str]) -> None:
    concept.xrefs.append(_identifier(value))


def _comment(concept: Concept, value: str, _: Mapping[str, str]) -> None:
    concept.properties["comment"] = _text(value)


def _obsolete(concept: Concept, value: str, _: Mapping[str, str]) -> None:
    concept.active = _identifier(value) != "true"


def _collect(field_name: str, key: str) -> Handler:
    """A handler appending the value's id to ``concept.<field_name>[key]`` (a dict of lists)."""

    def add(concept: Concept, value: str, _: Mapping[str, str]) -> None:
        getattr(concept, field_name).setdefault(key, []).append(_identifier(value))

    return add


_TAGS: dict[str, Handler] = {
    "synonym": _synonym,
    "def": _definition,
    "is_a": _is_a,
    "relationship": _relationship,
    "xref": _xref,
    "comment": _comment,
    "is_obsolete": _obsolete,
    "replaced_by": _collect("associations", "replaced_by"),
    "consider": _collect("associations", "consider"),
    "alt_id": _collect("properties", "alt_ids"),
    "subset": _collect("properties", "subsets"),
}


def _term(path: Path, start: int, tags: list[Tag], types: Mapping[str, str]) -> Concept:
    """Build the concept of the ``[Term]`` stanza opened at line ``start``."""
    concept = Concept(code="", display="")
    name: str | None = None
    for line, tag, value in tags:
        try:
            if tag == "id":
                concept.code = _identifier(value)
            elif tag == "name":
                name = _text(value)
            elif tag in _TAGS:
                _TAGS[tag](concept, value, types)
        except _Malformed as e:
            raise SourceError(path, line, f"{tag}: {e}") from None
    if not concept.code:
        raise SourceError(path, start, "[Term] stanza without id")
    if name:
        concept.display = name
        concept.designations.insert(0, Designation(name, use=DesignationUse.PREFERRED))
    else:
        concept.display = concept.code
    return concept


# --- file -----------------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """Numbered, stripped lines, without blank and ``!`` comment lines."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            line = decode_line(raw, path, number).strip().lstrip("\ufeff")
            if line and not line.startswith("!"):
                yield number, line


def _stanzas(path: Path) -> Iterator[tuple[str | None, int, list[Tag]]]:
    """Yield ``(kind, first line, tags)``: the header first (kind None), then each stanza."""
    kind: str | None = None
    start, tags = 1, []
    for number, line in _lines(path):
        if line.startswith("["):
            if not line.endswith("]"):
                raise SourceError(path, number, f"malformed stanza header {line!r}")
            yield kind, start, tags
            kind, start, tags = line[1:-1].strip(), number, []
            continue
        tag, colon, value = line.partition(":")
        if not colon or not tag.strip() or " " in tag.strip():
            raise SourceError(path, number, f"expected 'tag: value', got {line!r}")
        tags.append((number, tag.strip(), value.strip()))
    yield kind, start, tags


@dataclass(frozen=True, slots=True)
class OboHeader:
    version: str
    synonym_types: dict[str, str]  # synonymtypedef id -> readable name (see the module docstring)


def read_header(path: Path) -> OboHeader:
    """Read the header stanza only: version (the date in ``data-version`` if it has one)."""
    with closing(_stanzas(path)) as stanzas:
        _, _, tags = next(stanzas)
    version, types = "unknown", {}
    for line, tag, value in tags:
        if tag == "data-version":
            version = _text(value)
            date = _DATE.search(version)
            version = date.group() if date else version
        elif tag == "synonymtypedef":
            type_id, _, rest = value.partition(" ")
            try:
                description = _quoted(rest.strip())[0] if rest.strip() else type_id
            except _Malformed as e:
                raise SourceError(path, line, f"{tag}: {e}") from None
            types[type_id] = description if ":" in type_id else type_id
    return OboHeader(version, types)


class OboSource:
    """An OBO file opened for streaming. ``key`` defaults to the lower-cased prefix of the first
    term's id, ``uri`` to its OBO PURL and ``name`` to the key."""

    def __init__(
        self,
        path: str | Path | None = None,
        key: str | None = None,
        uri: str | None = None,
        name: str | None = None,
    ) -> None:
        if path is None:
            raise ValueError("an OBO source needs the path of an .obo file")
        self.path = Path(path)
        self.header = read_header(self.path)
        key = key or _prefix_key(self.path)
        uri = uri or f"http://purl.obolibrary.org/obo/{key}.owl"
        self.info = CodeSystemInfo(key=key, uri=uri, name=name or key, version=self.header.version)

    def __iter__(self) -> Iterator[Concept]:
        first_line: dict[str, int] = {}  # id -> line of its stanza: a second stanza is refused
        for kind, start, tags in _stanzas(self.path):
            if kind == "Term":
                concept = _term(self.path, start, tags, self.header.synonym_types)
                if concept.code in first_line:
                    message = f"duplicate id {concept.code!r} (first at line {first_line[concept.code]})"
                    raise SourceError(self.path, start, message)
                first_line[concept.code] = start
                yield concept


def _prefix_key(path: Path) -> str:
    """The lower-cased id prefix of the first term (``HP:0000001`` → ``hp``)."""
    with closing(_stanzas(path)) as stanzas:
        for kind, start, tags in stanzas:
            if kind == "Term":
                return _term(path, start, tags, {}).code.split(":", 1)[0].lower()
    raise SourceError(path, None, "no [Term] stanza to take a key from; pass key=")
