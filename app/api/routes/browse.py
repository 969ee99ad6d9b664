"""The terminology browser: server-rendered pages over the store and the served bundle.

- ``/browse``: search (the autocomplete widget, and ranked results without script for
  ``?q=``), within one system and optionally one subtree (``within``);
- ``/browse/{system}/{code}``: a concept page that can be shared: display, code, status, kind
  and billable, every designation with its type and origin, definitions, breadcrumbs to the
  root, parents, children with their descendant counts (each expandable in place), cross-
  references, the alignments the build made, and the concepts of other loaded systems that
  the ranking core finds most like it;
- ``/browse/{system}/{code}/children``: the children list alone (what expanding loads).

No asset comes from elsewhere: styles are inline, the widget is served by the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from app.api.deps import ReaderDep, ServiceDep, SettingsDep
from app.api.http import Route
from app.api.routes.concepts import catalog_concept, store_concept
from app.api.routes.search import parse_scope
from app.checks import check_query, check_system
from app.search.designations import all_designations
from app.search.service import SearchService
from app.search.similar import concept_labels, match_labels
from app.search.values import Mode, Result
from indexer.bundle import CatalogConcept
from indexer.store import ConceptRef

TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parents[2] / "web" / "templates")
SIMILAR = 3  # concepts shown per other loaded system
RESULTS = 20

router = APIRouter(tags=["browser"], include_in_schema=False, route_class=Route)


@dataclass(frozen=True)
class Node:
    code: str
    display: str
    below: int  # concepts below it by is-a


def _children(service: SearchService, system: str, children: list[ConceptRef]) -> list[Node]:
    """The children, by display, each with how many concepts are below it (the bundle's is-a)."""
    bundle = service.bundle
    nodes = []
    for child in children:
        row = bundle.concept_index(system, child.code)
        nodes.append(Node(child.code, child.display, len(bundle.descendants(row)) - 1 if row is not None else 0))
    return sorted(nodes, key=lambda n: n.display.casefold())


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


@router.get("/browse", response_class=HTMLResponse)
def search_page(
    request: Request,
    service: ServiceDep,
    reader: ReaderDep,
    settings: SettingsDep,
    system: Annotated[str | None, Query()] = None,
    within: Annotated[str | None, Query()] = None,
    q: Annotated[str | None, Query()] = None,
) -> HTMLResponse:
    systems = [s for s in reader.systems() if s.key in service.bundle.systems]
    chosen = system or (systems[0].key if systems else None)
    results: list[Result] = []
    if chosen is not None:
        check_system(service.bundle.systems, chosen, "system")
        within = (within or "").strip() or None
        scope = parse_scope(service, [chosen], within, ancestor_param="within")
        if q:
            check_query(q, settings.search.max_query_length, "q")
            results = service.results(service.rank(q, scope, RESULTS, Mode.HYBRID, settings.search.confidence_threshold))
    uri = next((s.uri for s in systems if s.key == chosen), "")
    valueset = f"{uri}?fhir_vs=isa/{within}" if within else f"{uri}?fhir_vs"
    context = {"systems": systems, "chosen": chosen, "within": within, "q": q, "results": results, "valueset": valueset}
    return TEMPLATES.TemplateResponse(request, "browse_search.html", context)


@router.get("/browse/{system}/{code}", response_class=HTMLResponse)
def concept_page(request: Request, system: str, code: str, service: ServiceDep, reader: ReaderDep, settings: SettingsDep) -> HTMLResponse:
    detail = store_concept(reader, system, code)
    row = catalog_concept(service, system, code)
    bundle = service.bundle
    concept = detail.concept
    context = {
        "system": detail.system,
        "concept": concept,
        "designations": [d for d in all_designations(concept, bundle, system) if d.active],
        "breadcrumbs": _breadcrumbs(service, row),
        "parents": detail.parents,
        "children": _children(service, system, detail.children),
        "alignments": [(bundle.concepts[a.row], a) for a in bundle.alignments.get(row, [])],
        "similar": _similar(service, system, row, settings.search.confidence_threshold),
        "names": {s.key: s.name for s in reader.systems()},
    }
    return TEMPLATES.TemplateResponse(request, "browse_concept.html", context)


@router.get("/browse/{system}/{code}/children", response_class=HTMLResponse)
def children_fragment(request: Request, system: str, code: str, service: ServiceDep, reader: ReaderDep) -> HTMLResponse:
    detail = store_concept(reader, system, code)
    context = {"system": detail.system, "children": _children(service, system, detail.children)}
    return TEMPLATES.TemplateResponse(request, "browse_children.html", context)
