"""The terminology browser: server-rendered pages over the store and the served bundle.

- ``/browse``: search (the autocomplete widget, and ranked results without script for
  ``?q=``), within one system and optionally one subtree (``within``);
- ``/browse/{system}/{code}``: a concept page that can be shared: display, code (with a copy
  button and a link to its FHIR ``$lookup``), status, kind and billable, what an ICD-10-CM coder
  reads first (Excludes1, Excludes2, code first, use additional code, code also, includes and
  notes, the concept's own and those its ancestors pass down, with the codes they name linked; the
  7th-character table), every designation with its type and origin, definitions, breadcrumbs
  to the root, a side tree (the path from the root, the concept among its siblings, each
  expandable in place), parents, children with their descendant counts (each expandable in
  place), cross-references (linked in the browser when they name a loaded system), the
  alignments the build made, and the concepts of other loaded systems that the ranking core
  finds most like it;
- ``/browse/{system}/{code}/children``: the children list alone (what expanding loads).

Children and siblings are in code order (the tabular order) in a classification (a system whose
concepts have a kind: ICD-10-CM), by display in an ontology (HPO). Errors under ``/browse`` are
HTML pages (``app/api/pages.py``). No asset comes from elsewhere: styles are inline, the widget
is served by the app.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

import numpy as np
from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app.api.deps import ReaderDep, ServiceDep, SettingsDep
from app.api.http import Route
from app.api.pages import TEMPLATES
from app.api.routes.concepts import catalog_concept, store_concept
from app.api.routes.search import parse_scope
from app.checks import check_query, check_system
from app.errors import InvalidParameter
from app.search.designations import all_designations
from app.search.service import SearchService
from app.search.similar import concept_labels, match_labels
from app.search.values import Mode, Result
from indexer.bundle import Bundle, CatalogConcept
from indexer.knowledge.alignment import XREF_PREFIXES
from indexer.sources.icd10cm import with_seventh
from indexer.store import ConceptRef, StoreReader
from indexer.store.reader import SystemVersion

SIMILAR = 3  # concepts shown per other loaded system
RESULTS = 20  # a page of results
PAGES = 25  # pages of results at most
SIBLINGS = 100  # shown in the side tree; the rest are on the parent's page
# What an ICD-10-CM coder reads first, in this order (the source's property names).
NOTES = (
    ("excludes1", "Excludes1"),
    ("excludes2", "Excludes2"),
    ("code_first", "Code first"),
    ("use_additional_code", "Use additional code"),
    ("code_also", "Code also"),
    ("includes", "Includes"),
    ("notes", "Notes"),
)
# A code a note names: I25.2, I22.-, M97.0-, a range I10-I1A.
_REFERENCE = re.compile(r"\b[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4})?(?:-[A-Z][0-9][0-9A-Z](?:\.[0-9A-Z]{1,4})?)?(?:\.?-)?")
# Cross-references to a system not loaded here, linked to its own public browser.
EXTERNAL = {
    "UMLS": "https://uts.nlm.nih.gov/uts/umls/concept/{code}",
    "SNOMEDCT_US": "https://browser.ihtsdotools.org/?perspective=full&conceptId1={code}",
    "SNOMEDCT": "https://browser.ihtsdotools.org/?perspective=full&conceptId1={code}",
    "SNOMED_CT": "https://browser.ihtsdotools.org/?perspective=full&conceptId1={code}",
    "PMID": "https://pubmed.ncbi.nlm.nih.gov/{code}/",
    "MSH": "https://meshb.nlm.nih.gov/record/ui?ui={code}",
    **{p: "https://www.ebi.ac.uk/ols4/search?q={xref}" for p in ("NCIT", "MONDO", "DOID", "EFO", "MP", "MPATH", "UBERON")},
}

router = APIRouter(tags=["browser"], include_in_schema=False, route_class=Route)

Segment = tuple[str, str | None]  # text, and the code of the same system it links to (None: plain)


@dataclass(frozen=True)
class Node:
    code: str
    display: str
    below: int  # concepts below it by is-a


@dataclass(frozen=True)
class NoteGroup:
    key: str  # the property: excludes1...
    label: str  # Excludes1...
    items: list[list[Segment]]


@dataclass(frozen=True)
class Inherited:
    """Notes an ancestor passes down to every code below it."""

    code: str
    display: str
    kind: str | None
    groups: list[NoteGroup]


@dataclass(frozen=True)
class Seventh:
    """The 7th characters that extend ``leaf`` (and, by the tabular, its siblings in the category)."""

    leaf: str
    note: str | None
    rows: list[tuple[str, str]]  # character, meaning
    own: str | None  # the concept's own 7th character, for an extended code


@dataclass(frozen=True)
class TreeItem:
    code: str
    display: str
    expandable: bool  # has children (loaded in place when expanded)
    current: bool


@dataclass(frozen=True)
class Step:
    concept: CatalogConcept
    others: int  # its children besides the next step (0 for the parent: all are listed)


@dataclass(frozen=True)
class Tree:
    path: list[Step]  # the root down to the parent (first parents)
    siblings: list[TreeItem]  # the concept among its parent's children (or among the roots)
    more: int  # siblings left out


@dataclass(frozen=True)
class Xref:
    text: str
    system: str | None = None  # a loaded system holding it
    code: str | None = None
    url: str | None = None  # elsewhere


def _tabular(bundle: Bundle, system: str, code: str) -> bool:
    """Whether ``system`` is a classification (its concepts have a kind), listed in code order."""
    row = bundle.concept_index(system, code)
    return row is not None and bundle.concepts[row].kind is not None


def _children(service: SearchService, system: str, children: list[ConceptRef], tabular: bool) -> list[Node]:
    """The children, in code order (a classification) or by display, each with how many
    concepts are below it (the bundle's is-a)."""
    bundle = service.bundle
    nodes = []
    for child in children:
        row = bundle.concept_index(system, child.code)
        nodes.append(Node(child.code, child.display, len(bundle.descendants(row)) - 1 if row is not None else 0))
    return sorted(nodes, key=(lambda n: n.code) if tabular else (lambda n: n.display.casefold()))


def _breadcrumbs(service: SearchService, row: int) -> list[CatalogConcept]:
    """From the root down to the concept's first parent, by first parents (the bundle's is-a)."""
    concepts, path, seen = service.bundle.concepts, [], {row}
    parents = concepts[row].parents
    while parents and parents[0] not in seen:
        seen.add(parents[0])
        path.append(concepts[parents[0]])
        parents = concepts[parents[0]].parents
    return path[::-1]


def _similar(service: SearchService, system: str, row: int, threshold: float) -> dict[str, list[Result]]:
    """Per other loaded system, the concepts the ranking core finds most like this one."""
    out = {}
    for other in service.bundle.systems:
        if other != system:
            scope = parse_scope(service, [other])
            matches = match_labels(service, concept_labels(service, row), scope, SIMILAR, Mode.HYBRID, threshold)
            out[other] = [service.result(rank, match.ranked) for rank, match in enumerate(matches, start=1)]
    return out


def _linked(text: str, system: str, bundle: Bundle) -> list[Segment]:
    """``text`` with each code it names that ``system`` holds (I25.2, I22.- → I22) marked to link."""
    out: list[Segment] = []
    at = 0
    for found in _REFERENCE.finditer(text):
        candidates = (found[0], found[0].rstrip("-").rstrip("."))
        target = next((c for c in candidates if bundle.concept_index(system, c) is not None), None)
        if target is not None:
            out += [(text[at : found.start()], None), (found[0], target)]
            at = found.end()
    out.append((text[at:], None))
    return [segment for segment in out if segment[0]]


def _note_groups(properties: Mapping[str, Any], system: str, bundle: Bundle) -> list[NoteGroup]:
    return [
        NoteGroup(key, label, [_linked(str(item), system, bundle) for item in properties[key]])
        for key, label in NOTES
        if properties.get(key)
    ]


def _inherited(reader: StoreReader, version: SystemVersion, path: list[CatalogConcept], bundle: Bundle) -> list[Inherited]:
    """The notes of each ancestor (nearest first), which apply to every code below it."""
    out = []
    for ancestor in reversed(path):
        detail = reader.concept(version, ancestor.code)
        groups = _note_groups(detail.concept.properties, version.key, bundle) if detail else []
        if groups:
            out.append(Inherited(ancestor.code, ancestor.display, ancestor.kind, groups))
    return out


def _extensions(bundle: Bundle, row: int) -> list[tuple[str, str]]:
    """The 7th characters that extend ``row``, read off its children: each is the code padded
    and extended (S72.001 → S72.001A) and named "<its display>, <meaning>"."""
    leaf = bundle.concepts[row]
    out = []
    for child in (bundle.concepts[r] for r in bundle.children(row)):
        char, prefix = child.code[-1:], f"{leaf.display}, "
        if not char or with_seventh(leaf.code, char) != child.code or not child.display.startswith(prefix):
            return []
        out.append((char, child.display[len(prefix) :]))
    return sorted(out)


def _seventh(bundle: Bundle, row: int, properties: Mapping[str, Any]) -> Seventh | None:
    """The 7th-character table of an ICD-10-CM category or code: of the code itself when its
    children are its extensions, else of the first code below it (in code order) whose are;
    of an extended code, its parent's, with its own character."""
    concept = bundle.concepts[row]
    own = properties.get("seventh_character")
    if own and concept.parents:
        parent = concept.parents[0]
        rows = _extensions(bundle, parent)
        return Seventh(bundle.concepts[parent].code, None, rows, str(own)) if rows else None
    if concept.kind not in {"category", "code"}:
        return None
    for _ in range(8):  # ICD-10-CM is 7 characters deep
        children = sorted(bundle.children(row), key=lambda r: bundle.concepts[r].code)
        if not children:
            return None
        rows = _extensions(bundle, row)
        if rows:
            return Seventh(bundle.concepts[row].code, properties.get("seven_chr_note"), rows, None)
        row = children[0]
    return None


def _roots(bundle: Bundle, system: str) -> list[int]:
    """The system's active concepts without a parent."""
    rows = bundle.rows(system, include_inactive=True)
    if not rows:
        return []
    offsets = bundle.concepts.parents.offsets
    bare = np.flatnonzero(np.diff(offsets[rows.start : rows.stop + 1]) == 0) + rows.start
    return [int(r) for r in bare if bundle.concepts.active[r]]


def _tree(
    reader: StoreReader, version: SystemVersion, bundle: Bundle, row: int, path: list[CatalogConcept], tabular: bool
) -> Tree:
    """The path from the root to the concept's first parent, and the concept among that
    parent's children (or among the roots), in the order the children are listed."""
    concept = bundle.concepts[row]
    rows = bundle.children(concept.parents[0]) if concept.parents else _roots(bundle, version.key)
    pairs = [(bundle.concepts[r], r) for r in rows]
    if tabular and not concept.parents:  # chapters, by their number
        pairs.sort(key=lambda pair: _chapter(reader, version, pair[0].code))
    else:
        pairs.sort(key=(lambda pair: pair[0].code) if tabular else (lambda pair: pair[0].display.casefold()))
    shown = pairs[:SIBLINGS]
    if row not in {r for _, r in shown}:
        shown.append((concept, row))
    items = [TreeItem(c.code, c.display, bool(len(bundle.children(r))), r == row) for c, r in shown]
    steps = []
    for depth, ancestor in enumerate(path):
        at = bundle.concept_index(ancestor.system, ancestor.code)
        last = depth == len(path) - 1
        steps.append(Step(ancestor, 0 if last or at is None else len(bundle.children(at)) - 1))
    return Tree(steps, items, len({r for _, r in pairs} - {r for _, r in shown}))


def _chapter(reader: StoreReader, version: SystemVersion, code: str) -> tuple[int, str]:
    """A root's place: its chapter number (ICD-10-CM: "22" comes after "21"), then its code."""
    detail = reader.concept(version, code)
    chapter = str(detail.concept.properties.get("chapter", "")) if detail else ""
    return (int(chapter) if chapter.isdigit() else 10**6, code)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.casefold())


def _xref(xref: str, bundle: Bundle, names: Mapping[str, str]) -> Xref:
    """A cross-reference, linked in the browser when a loaded system holds it (its prefix names
    the system, by key, name or the alignments' prefixes, or the whole xref is one of its codes),
    else to the public browser of a few well-known systems."""
    prefix, _, code = xref.partition(":")
    for key in bundle.systems:
        aliases = {_squash(key), _squash(names.get(key, ""))} | {_squash(p) for p, k in XREF_PREFIXES.items() if k == key}
        if _squash(prefix) in aliases:
            found = next((c for c in (code, xref) if bundle.concept_index(key, c) is not None), None)
            if found is not None:
                return Xref(xref, key, found)
    for key in bundle.systems:
        if bundle.concept_index(key, xref) is not None:
            return Xref(xref, key, xref)
    url = EXTERNAL.get(prefix)
    return Xref(xref, url=url.format(code=code, xref=xref)) if url and code else Xref(xref)


@dataclass(frozen=True)
class Facets:
    """What the chosen system can be narrowed by, besides a subtree."""

    kinds: list[str]  # its kinds (ICD-10-CM: chapter, block, category, code); none in an ontology
    billable: bool  # whether its concepts say whether they are billable


def _facets(bundle: Bundle, system: str) -> Facets:
    rows = bundle.rows(system, include_inactive=True)
    if not rows:
        return Facets([], False)
    kinds = sorted(set(np.unique(bundle.kinds[rows.start : rows.stop]).tolist()) - {""})
    return Facets(kinds, bundle.concepts[rows.start].billable is not None)


def _page_link(request: Request, page: int) -> str:
    """This search's link to another page of its results."""
    return f"/browse?{urlencode([*((k, v) for k, v in request.query_params.multi_items() if k != 'page'), ('page', str(page))])}"


@router.get("/browse", response_class=HTMLResponse)
def search_page(
    request: Request,
    service: ServiceDep,
    reader: ReaderDep,
    settings: SettingsDep,
    system: Annotated[str | None, Query()] = None,
    within: Annotated[str | None, Query()] = None,
    q: Annotated[str | None, Query()] = None,
    kind: Annotated[str | None, Query()] = None,
    billable: Annotated[str | None, Query(description="true, false, or empty for any")] = None,
    inactive: Annotated[bool, Query()] = False,
    page: Annotated[int, Query(ge=1, le=PAGES)] = 1,
) -> HTMLResponse:
    """Search one system (optionally one subtree, kind, billable, inactive included): the widget
    suggests as the user types; submitted, the words list every concept above the confidence
    threshold, counted, a page of ``RESULTS`` at a time."""
    systems = [s for s in reader.systems() if s.key in service.bundle.systems]
    chosen = system or (systems[0].key if systems else None)
    results: list[Result] = []
    total, facets = 0, Facets([], False)
    within = (within or "").strip() or None
    kind = (kind or "").strip() or None
    if billable not in (None, "", "true", "false"):
        raise InvalidParameter(f"billable: true, false or empty for any (got {billable!r})", "billable")
    billed = {"true": True, "false": False}.get(billable or "")
    if chosen is not None:
        check_system(service.bundle.systems, chosen, "system")
        facets = _facets(service.bundle, chosen)
        scope = parse_scope(service, [chosen], within, kind, billed, inactive, ancestor_param="within")
        if q:
            check_query(q, settings.search.max_query_length, "q")
            threshold = settings.search.confidence_threshold
            ranking = service.rank(q, scope, page * RESULTS, Mode.HYBRID, threshold)
            total = min(ranking.above, PAGES * RESULTS)
            results = service.results(ranking)[(page - 1) * RESULTS :]
    uri = next((s.uri for s in systems if s.key == chosen), "")
    valueset = f"{uri}?fhir_vs=isa/{within}" if within else f"{uri}?fhir_vs"
    pages = -(-total // RESULTS)
    context = {
        "systems": systems, "chosen": chosen, "within": within, "q": q, "results": results, "valueset": valueset,
        "facets": facets, "kind": kind, "billable": billed, "inactive": inactive,
        "total": total, "page": page, "pages": pages, "first": (page - 1) * RESULTS + 1,
        "previous": _page_link(request, page - 1) if page > 1 else None,
        "next": _page_link(request, page + 1) if page < pages else None,
    }
    return TEMPLATES.TemplateResponse(request, "browse_search.html", context)


@router.get("/browse/{system}/{code}", response_class=HTMLResponse)
def concept_page(request: Request, system: str, code: str, service: ServiceDep, reader: ReaderDep, settings: SettingsDep) -> HTMLResponse:
    detail = store_concept(reader, system, code)
    row = catalog_concept(service, system, code)
    bundle = service.bundle
    concept = detail.concept
    tabular = bundle.concepts[row].kind is not None
    path = _breadcrumbs(service, row)
    names = {s.key: s.name for s in reader.systems()}
    context = {
        "system": detail.system,
        "concept": concept,
        "notes": _note_groups(concept.properties, system, bundle),
        "inherited": _inherited(reader, detail.system, path, bundle) if tabular else [],
        "seventh": _seventh(bundle, row, concept.properties) if tabular else None,
        "designations": [d for d in all_designations(concept, bundle, system) if d.active],
        "breadcrumbs": path,
        "tree": _tree(reader, detail.system, bundle, row, path, tabular),
        "parents": detail.parents,
        "children": _children(service, system, detail.children, tabular),
        "xrefs": [_xref(x, bundle, names) for x in concept.xrefs],
        "alignments": [(bundle.concepts[a.row], a) for a in bundle.alignments.get(row, [])],
        "similar": _similar(service, system, row, settings.search.confidence_threshold),
        "names": names,
    }
    return TEMPLATES.TemplateResponse(request, "browse_concept.html", context)


@router.get("/browse/{system}/{code}/children", response_class=HTMLResponse)
def children_fragment(request: Request, system: str, code: str, service: ServiceDep, reader: ReaderDep) -> HTMLResponse:
    detail = store_concept(reader, system, code)
    tabular = _tabular(service.bundle, system, code)
    context = {"system": detail.system, "children": _children(service, system, detail.children, tabular)}
    return TEMPLATES.TemplateResponse(request, "browse_children.html", context)
