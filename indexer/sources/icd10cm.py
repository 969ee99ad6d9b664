"""ICD-10-CM: the CMS tabular list XML (the one the ``simple-icd-10-cm`` package ships).

Codes and hierarchy (every edge is ``IS_A``, from child to parent):

- chapter: its code range, taken from the description, e.g. ``A00-B99`` (the chapter number,
  ``"1"``, goes to ``properties["chapter"]``). No chapter range equals a block id;
- block (``<section>``): its id, e.g. ``A00-A09``, → chapter. A block holding a single category
  has that category's id (``B10``), so its code is written as a range, ``B10-B10``, to keep every
  code unique. Some sections are empty headings that group the blocks after them
  (``C00-C96 Malignant neoplasms`` ⊃ ``C00-C75`` ⊃ ``C00-C14``): a block whose range falls
  within such a preceding heading's range is its child instead of the chapter's;
- category (a ``<diag>`` in a block) → block; code (a ``<diag>`` in a ``<diag>``) → that diag.

Displays are the descriptions, less the trailing ``(A00-A09)`` of chapters and blocks.

7th characters: a ``<sevenChrDef>`` applies to every descendant of its diag (a nearer one wins),
and so does ``<sevenChrNote>`` (``properties["seven_chr_note"]``). Each leaf diag under one is
extended with every 7th character: the code is padded with ``X`` to six characters after the
category (``T36.0X1`` + ``A``, ``W08`` → ``W08.XXXA``) and named ``"<leaf name>, <extension>"``.
The extended codes are children of the leaf and billable (``properties["seventh_character"]``
holds the added character); the leaf is not. A ``<note>`` following
an ``<extension>`` (``initial encounter for open fracture NOS``) becomes an inclusion designation
of the extended code. The XML over-generates a few extensions (S06 codes "with death" have no
subsequent-encounter or sequela codes), so a CMS code list, when given, keeps only those it lists.

``billable`` is true for leaf diags without 7th characters and for extended codes. Inclusion
terms become designations of type ``inclusion``, and the ``includes`` notes of categories and
subcategories (I10: "high blood pressure") designations of type ``includes``: both are entry terms
a coder searches by. Includes, excludes1/2, code first, code also, use additional code and notes
become lists of strings in ``properties``; excludes notes and instructions are never searchable.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexer.records import (
    IS_A,
    CodeSystemInfo,
    Concept,
    Designation,
    DesignationUse,
    Relationship,
    SourceError,
)
from indexer.sources._resources import package_file

KEY = "icd10cm"
URI = "http://hl7.org/fhir/sid/icd-10-cm"
NAME = "ICD-10-CM"
PACKAGE = "simple_icd_10_cm"
TABULAR = "icd10c-tabular-April-1-2026.xml"
CODE_LIST = "code-list-April-2026.txt"

_KINDS = {"chapter": "chapter", "section": "block", "diag": "code"}
_NOTES = {
    "includes": "includes",
    "excludes1": "excludes1",
    "excludes2": "excludes2",
    "codeFirst": "code_first",
    "codeAlso": "code_also",
    "useAdditionalCode": "use_additional_code",
    "notes": "notes",
}
_DATA = {"name", "desc", "inclusionTerm", "sevenChrDef", "sevenChrNote", *_NOTES}
_RANGE = re.compile(r"\s*\(([A-Z0-9]{3}(?:-[A-Z0-9]{3})?)\)\s*$")
_CODE_REFERENCE = re.compile(r"\b[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z-]*)?\b")  # "any condition in I50.- ..."
_NONESSENTIAL = re.compile(r"\s*\([^()]*\)")


@dataclass(frozen=True, slots=True)
class _Extension:
    char: str
    text: str
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Node:
    """A chapter, block or diag whose element is open; emitted once its first child opens."""

    element: ET.Element
    depth: int
    kind: str
    container: _Node | None  # the enclosing element's node
    parent: _Node | None  # in the hierarchy: the container, or a grouping block
    code: str = ""
    display: str = ""
    inclusions: list[str] = field(default_factory=list)  # inclusion terms
    properties: dict[str, Any] = field(default_factory=dict)
    extensions: tuple[_Extension, ...] = ()  # the 7th characters in force
    groups: list[_Node] = field(default_factory=list)  # a chapter's empty, grouping blocks
    emitted: bool = False


def default_path() -> Path:
    return package_file(PACKAGE, "data", TABULAR)


def default_code_list() -> Path:
    return package_file(PACKAGE, "data", CODE_LIST)


def read_code_list(path: str | Path) -> frozenset[str]:
    """Codes without dots, one per line (first field), as in the package's code list."""
    with open(path, encoding="utf-8") as f:
        return frozenset(line.split()[0].replace(".", "") for line in f if line.strip())


def with_seventh(code: str, char: str) -> str:
    """``S72.001`` + ``A`` → ``S72.001A``; ``W08`` + ``A`` → ``W08.XXXA``."""
    dotted = code if "." in code else f"{code}."
    return dotted.ljust(7, "X") + char


def _xml_events(path: Path, events: tuple[str, ...]) -> Iterator[tuple[str, ET.Element, int]]:
    """Parser events, each with the number of the line whose reading produced it; parse errors
    are :class:`SourceError` at the parser's line."""
    parser = ET.XMLPullParser(events)
    number = 1
    with open(path, "rb") as f:
        try:
            for number, line in enumerate(f, 1):
                parser.feed(line)
                for event, element in parser.read_events():
                    yield event, element, number
            parser.close()
        except ET.ParseError as e:
            raise SourceError(path, e.position[0], f"malformed XML: {e}") from None
    for event, element in parser.read_events():
        yield event, element, number


def _read_version(path: Path) -> str:
    for _, element, _ in _xml_events(path, ("end",)):
        if element.tag == "version" and element.text and element.text.strip():
            return element.text.strip()
    raise SourceError(path, None, "no <version> element")


def _notes(element: ET.Element) -> list[str]:
    return [" ".join(note.text.split()) for note in element.iter("note") if note.text]


def _seven_chr_def(element: ET.Element) -> tuple[_Extension, ...]:
    """Extensions in order; a ``<note>`` belongs to the extension before it."""
    extensions: list[_Extension] = []
    for child in element:
        text = " ".join((child.text or "").split())
        if child.tag == "extension":
            extensions.append(_Extension(child.get("char", ""), text))
        elif child.tag == "note" and extensions and text:
            last = extensions[-1]
            extensions[-1] = _Extension(last.char, last.text, (*last.notes, text))
    return tuple(extensions)


def entry_terms(notes: Iterable[str]) -> list[str]:
    """The searchable terms of an ``includes`` note: instructions that point at other codes
    ("any condition in I50.- ... due to hypertension") are left out, and the nonessential
    modifiers that ICD-10-CM writes in parentheses are dropped ("hypertension (arterial)
    (benign)" → "hypertension")."""
    terms = []
    for note in notes:
        if _CODE_REFERENCE.search(note):
            continue
        term = " ".join(_NONESSENTIAL.sub("", note).split())
        if term:
            terms.append(term)
    return terms


def _split_range(description: str) -> tuple[str, str | None]:
    """``"Neoplasms (C00-D49)"`` → ``("Neoplasms", "C00-D49")``."""
    match = _RANGE.search(description)
    return (description[: match.start()], match.group(1)) if match else (description, None)


def _grouping_block(groups: list[_Node], block: str) -> _Node | None:
    """The innermost of the open grouping blocks whose range holds ``block``'s; the stack is
    trimmed to it (blocks come in code order, so a heading once passed is done)."""
    first, last = block.split("-")
    while groups:
        start, end = groups[-1].code.split("-")
        if start <= first and last <= end:
            return groups[-1]
        groups.pop()
    return None


class Icd10cmSource:
    """The ICD-10-CM tabular list. ``code_list`` (a CMS code list, see :func:`read_code_list`)
    filters the 7th-character extensions; by default both files are the package's."""

    def __init__(self, path: str | Path | None = None, code_list: str | Path | None = None) -> None:
        if path is None:
            path, code_list = default_path(), code_list or default_code_list()
        self.path = Path(path)
        self._valid = read_code_list(code_list) if code_list else None
        self.info = CodeSystemInfo(KEY, URI, NAME, _read_version(self.path))

    def __iter__(self) -> Iterator[Concept]:
        seen: set[str] = set()
        for concept, line in self._walk():
            if concept.code in seen:
                raise SourceError(self.path, line, f"duplicate code {concept.code}")
            seen.add(concept.code)
            yield concept

    def _walk(self) -> Iterator[tuple[Concept, int]]:
        """Every concept, with the line the parser is at when it is complete."""
        nodes: list[_Node] = []
        depth = 0
        for event, element, line in _xml_events(self.path, ("start", "end")):
            if event == "start":
                depth += 1
                if element.tag in _KINDS:
                    parent = nodes[-1] if nodes else None
                    if parent and not parent.emitted:
                        parent.emitted = True
                        yield self._node_concept(parent, False, line), line
                    nodes.append(self._open(element, depth, parent))
                continue
            if nodes and element is nodes[-1].element:
                for concept in self._close(nodes.pop(), line):
                    yield concept, line
                element.clear()
            elif nodes and depth == nodes[-1].depth + 1:
                self._read(nodes[-1], element, line)
                element.clear()
            depth -= 1

    # --- nodes ------------------------------------------------------------------------------------

    def _open(self, element: ET.Element, depth: int, container: _Node | None) -> _Node:
        kind = _KINDS[element.tag]
        if kind == "code" and container is not None and container.kind == "block":
            kind = "category"
        node = _Node(element, depth, kind, container, container)
        if container is not None:
            node.extensions = container.extensions
            if "seven_chr_note" in container.properties:
                node.properties["seven_chr_note"] = container.properties["seven_chr_note"]
        if kind == "block" and container is not None:
            block = element.get("id", "")
            node.code = block if "-" in block else f"{block}-{block}"
            node.parent = _grouping_block(container.groups, node.code) or container
        return node

    def _read(self, node: _Node, element: ET.Element, line: int) -> None:
        """Take in one data element of ``node`` (name, desc, notes, 7th characters...)."""
        tag = element.tag
        if node.emitted and tag in _DATA:
            raise SourceError(self.path, line, f"<{tag}> after the child codes of {node.code}")
        text = " ".join((element.text or "").split())
        if tag == "name" and node.kind == "chapter":
            node.properties["chapter"] = text
        elif tag == "name":
            node.code = text
        elif tag == "desc":
            node.display, code_range = _split_range(text)
            if node.kind == "chapter":
                node.code = code_range or ""
        elif tag == "inclusionTerm":
            node.inclusions += _notes(element)
        elif tag in _NOTES:
            node.properties.setdefault(_NOTES[tag], []).extend(_notes(element))
        elif tag == "sevenChrDef":
            node.extensions = _seven_chr_def(element)
        elif tag == "sevenChrNote":
            node.properties["seven_chr_note"] = " ".join(_notes(element))

    def _close(self, node: _Node, line: int) -> Iterator[Concept]:
        if node.emitted:
            return
        if node.kind == "block" and node.container is not None:
            node.container.groups.append(node)
        extended = self._extended(node) if node.kind in {"category", "code"} else []
        yield self._node_concept(node, node.kind in {"category", "code"} and not extended, line)
        yield from extended

    def _extended(self, leaf: _Node) -> list[Concept]:
        """The codes made by adding each 7th character in force to ``leaf``."""
        concepts = []
        for extension in leaf.extensions:
            code = with_seventh(leaf.code, extension.char)
            if self._valid is None or code.replace(".", "") in self._valid:
                inclusions = [f"{leaf.display}, {note}" for note in extension.notes]
                properties = {"kind": "code", "billable": True, "seventh_character": extension.char}
                display = f"{leaf.display}, {extension.text}"
                concepts.append(_concept(code, display, leaf.code, properties, inclusions))
        return concepts

    def _node_concept(self, node: _Node, billable: bool, line: int) -> Concept:
        """``line``: where the parser is (the node's first child, or its end)."""
        if not node.code or not node.display:
            where = f" in {node.container.code}" if node.container else ""
            raise SourceError(self.path, line, f"<{node.element.tag}> without code or name{where}")
        properties = {"kind": node.kind, "billable": billable, **node.properties}
        parent = node.parent.code if node.parent else None
        includes = entry_terms(node.properties.get("includes", [])) if node.kind in {"category", "code"} else []
        return _concept(node.code, node.display, parent, properties, node.inclusions, includes)


def _concept(
    code: str,
    display: str,
    parent: str | None,
    properties: dict[str, Any],
    inclusions: Iterable[str],
    includes: Iterable[str] = (),
) -> Concept:
    return Concept(
        code,
        display,
        designations=[
            Designation(display, use=DesignationUse.PREFERRED),
            *(Designation(text, type="inclusion") for text in inclusions),
            *(Designation(text, type="includes") for text in includes),
        ],
        relationships=[Relationship(IS_A, parent)] if parent else [],
        properties=properties,
    )
