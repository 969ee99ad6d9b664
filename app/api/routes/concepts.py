"""``GET /concepts/{system}/{code}``: one concept from the store; ``.../similar``: concept → concept."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from app.api.deps import OptionalServiceDep, ReaderDep, ServiceDep, SettingsDep
from app.api.errors import PROBLEM_RESPONSES
from app.api.http import Route
from app.api.routes.search import parse_scope
from app.checks import FRACTION, K, check_range, parse_systems
from app.errors import NotFound
from app.search.designations import all_designations
from app.search.service import SearchService
from app.search.similar import concept_labels, match_labels
from app.search.values import Mode, Result
from indexer.store import ConceptDetail, StoreReader

router = APIRouter(tags=["concepts"], route_class=Route)


class Label(BaseModel):
    text: str
    use: str
    language: str
    scope: str | None = None
    type: str | None = None
    kind: str  # as why-this-hit names it: preferred, layperson, abbreviation, inclusion, exact synonym...
    origin: str | None = None  # where a label the terminology does not state came from
    knowledge: str | None = None  # the knowledge source that added it: alignments, abbreviations, supplement:NAME


class DefinitionOut(BaseModel):
    text: str
    source: str | None = None


class Ref(BaseModel):
    code: str
    display: str


class ConceptOut(BaseModel):
    system: str
    version: str
    code: str
    display: str
    status: str  # "active" or "inactive"
    synonyms: list[Label]
    definitions: list[DefinitionOut]
    parents: list[Ref]
    children: list[Ref]
    associations: dict[str, list[str]]  # e.g. replaced_by, consider for inactive concepts
    xrefs: list[str]
    properties: dict[str, Any]


def store_concept(reader: StoreReader, system: str, code: str) -> ConceptDetail:
    """The concept from the store, or 404 naming the unknown system or code."""
    version = reader.system(system)
    if version is None:
        known = ", ".join(s.key for s in reader.systems())
        raise NotFound(f"system: unknown code system {system!r}; loaded: {known}", "system")
    detail = reader.concept(version, code)
    if detail is None:
        raise NotFound(f"code: {code!r} is not a code of {system} {version.version}", "code")
    return detail


@router.get("/concepts/{system}/{code}", response_model=ConceptOut, responses=PROBLEM_RESPONSES)
def get_concept(system: str, code: str, reader: ReaderDep, service: OptionalServiceDep) -> ConceptOut:
    detail = store_concept(reader, system, code)
    version, concept = detail.system, detail.concept
    return ConceptOut(
        system=system,
        version=version.version,
        code=concept.code,
        display=concept.display,
        status="active" if concept.active else "inactive",
        synonyms=[
            Label(
                text=d.text, use=d.use, language=d.language, scope=d.scope, type=d.type,
                kind=d.kind, origin=d.origin, knowledge=d.knowledge,
            )
            for d in all_designations(concept, service.bundle if service else None, system)
            if d.active
        ],
        definitions=[DefinitionOut(text=d.text, source=d.source) for d in concept.definitions],
        parents=[Ref(code=p.code, display=p.display) for p in detail.parents],
        children=[Ref(code=c.code, display=c.display) for c in detail.children],
        associations=concept.associations,
        xrefs=concept.xrefs,
        properties=concept.properties,
    )


class AlignmentOut(BaseModel):
    system: str
    code: str
    display: str
    score: float
    method: str  # xref, label, dense
    evidence: str


class SimilarResponse(BaseModel):
    system: str
    code: str
    mode: Mode
    target_systems: list[str]
    results: list[Result]
    # Concepts of the target systems the build aligned with this one (indexer/knowledge/alignment.py).
    alignments: list[AlignmentOut]
    took_ms: float


def catalog_concept(service: SearchService, system: str, code: str) -> int:
    """The bundle's catalog row of a concept, or 404 naming the unknown system or code."""
    served = service.bundle.systems.get(system)
    if served is None:
        raise NotFound(f"system: unknown code system {system!r}; loaded: {', '.join(service.bundle.systems)}", "system")
    index = service.bundle.concept_index(system, code)
    if index is None:
        raise NotFound(f"code: {code!r} is not a code of {system} {served.version}", "code")
    return index


@router.get("/concepts/{system}/{code}/similar", response_model=SimilarResponse, responses=PROBLEM_RESPONSES)
def similar(
    system: str,
    code: str,
    service: ServiceDep,
    settings: SettingsDep,
    k: Annotated[int, Query(description="Number of concepts (1 to 100 by default)", **K)] = 10,
    target_system: Annotated[
        str | None, Query(description="Code system key(s) to search, comma-separated; the concept's own when absent")
    ] = None,
    mode: Mode = Mode.HYBRID,
    ancestor: Annotated[str | None, Query(description="Only this target concept and those below it by is-a")] = None,
    kind: Annotated[str | None, Query(description="Only these kinds, comma-separated (as in /search)")] = None,
    billable: Annotated[bool | None, Query(description="Only billable (true) or non-billable (false) codes")] = None,
    include_inactive: bool = False,
    min_confidence: Annotated[float, Query(description="Leave out rows below this confidence (0 to 1)", **FRACTION)] = 0.0,
) -> SimilarResponse:
    """Concepts similar to this one, searched with all its labels (combined by max score) and
    never the concept itself; ``target_system`` searches other systems (HPO → ICD-10-CM)."""
    started = time.perf_counter()
    concept = catalog_concept(service, system, code)
    check_range(k, 1, settings.search.max_k, "k")
    check_range(min_confidence, 0, 1, "min_confidence")
    targets = parse_systems(service.bundle.systems, target_system, "target_system") or [system]
    scope = parse_scope(service, targets, ancestor, kind, billable, include_inactive, frozenset({concept}))
    matches = match_labels(service, concept_labels(service, concept), scope, k, mode, min_confidence)
    results = [service.result(rank, match.ranked) for rank, match in enumerate(matches, start=1)]
    return SimilarResponse(
        system=system,
        code=code,
        mode=mode,
        target_systems=targets,
        results=results,
        alignments=[
            AlignmentOut(system=other.system, code=other.code, display=other.display, score=a.score,
                         method=a.method, evidence=a.evidence)
            for a in service.bundle.alignments.get(concept, [])
            if (other := service.bundle.concepts[a.row]).system in targets
        ],
        took_ms=round((time.perf_counter() - started) * 1000, 3),
    )
