"""``GET /search``: text → concept."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from app.api.deps import ServiceDep, SettingsDep
from app.api.errors import PROBLEM_RESPONSES
from app.api.http import Route
from app.checks import FRACTION, QUERY, K, check_query, check_range, parse_systems
from app.errors import InvalidParameter
from app.search.scope import Scope
from app.search.service import SearchService
from app.search.values import Mode, Result

router = APIRouter(tags=["search"], route_class=Route)


class SearchResponse(BaseModel):
    query: str
    mode: Mode
    results: list[Result]
    suggestion: str | None = None  # the query with unknown words corrected ("did you mean")
    took_ms: float


def parse_scope(
    service: SearchService,
    systems: list[str],
    ancestor: str | None = None,
    kind: str | None = None,
    billable: bool | None = None,
    include_inactive: bool = False,
    exclude: frozenset[int] = frozenset(),
    ancestor_param: str = "ancestor",
) -> Scope:
    """The ranking scope of a request; ``ancestor`` (the request's ``ancestor_param``) is a code
    of one of ``systems`` (of the only system when one is given), its subtree taken from the
    bundle's is-a links."""
    bundle = service.bundle
    subtree, root = None, None
    if ancestor is not None:
        keys = systems or list(bundle.systems)
        rows = [row for key in keys if (row := bundle.concept_index(key, ancestor)) is not None]
        if len(rows) != 1:
            where = ", ".join(keys)
            problem = "is not a code of" if not rows else "is a code of more than one of"
            raise InvalidParameter(f"{ancestor_param}: {ancestor!r} {problem} {where}; name one system", ancestor_param)
        subtree, root = bundle.subtree(rows[0]), rows[0]
    kinds = None
    if kind is not None:
        kinds = frozenset(part.strip() for part in kind.split(",") if part.strip())
        unknown = sorted(kinds - bundle.kind_names)
        if unknown or not kinds:
            known = ", ".join(sorted(bundle.kind_names))
            raise InvalidParameter(f"kind: unknown kind {unknown[0] if unknown else kind!r}; known: {known}", "kind")
    return Scope(tuple(systems), subtree, exclude, kinds, billable, include_inactive, root=root)


@router.get("/search", response_model=SearchResponse, responses=PROBLEM_RESPONSES)
def search(
    request: Request,
    service: ServiceDep,
    settings: SettingsDep,
    q: Annotated[str, Query(description="What the user typed, or a code in any usual form (at most 512 characters by default)", **QUERY)],
    system: Annotated[str | None, Query(description="Code system key(s), comma-separated; all when absent")] = None,
    k: Annotated[int, Query(description="Number of concepts (1 to 100 by default)", **K)] = 10,
    mode: Mode = Mode.HYBRID,
    ancestor: Annotated[str | None, Query(description="Only this concept and those below it by is-a")] = None,
    kind: Annotated[
        str | None, Query(description="Only these kinds, comma-separated (ICD-10-CM: chapter, block, category, code); chapters and blocks only when named")
    ] = None,
    billable: Annotated[bool | None, Query(description="Only billable (true) or non-billable (false) codes")] = None,
    include_inactive: bool = False,
    min_confidence: Annotated[float, Query(description="Leave out rows below this confidence (0 to 1)", **FRACTION)] = 0.0,
) -> SearchResponse:
    started = time.perf_counter()
    check_query(q, settings.search.max_query_length, "q")
    check_range(k, 1, settings.search.max_k, "k")
    check_range(min_confidence, 0, 1, "min_confidence")
    systems = parse_systems(service.bundle.systems, system, "system")
    scope = parse_scope(service, systems, ancestor, kind, billable, include_inactive)
    ranking = service.rank(q, scope, k, mode, min_confidence)
    if not ranking.rows or ranking.rows[0].confidence < settings.search.confidence_threshold:
        request.app.state.metrics.weak_rankings.labels("low_confidence" if ranking.rows else "zero_result").inc()
    return SearchResponse(
        query=q,
        mode=mode,
        results=service.results(ranking),
        suggestion=ranking.suggestion,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
    )
