"""``GET /search``: text → concept."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from app.api.deps import ServiceDep, SettingsDep
from app.api.errors import PROBLEM_RESPONSES, InvalidParameter
from app.search.service import Mode, Result, SearchService

router = APIRouter(tags=["search"])


class SearchResponse(BaseModel):
    query: str
    mode: Mode
    results: list[Result]
    took_ms: float


def parse_systems(service: SearchService, system: str | None, param: str = "system") -> list[str]:
    """Comma-separated system keys, each one loaded in the bundle (else 422 naming ``param``)."""
    keys = [key.strip() for key in (system or "").split(",") if key.strip()]
    unknown = [key for key in keys if key not in service.bundle.systems]
    if unknown:
        known = ", ".join(service.bundle.systems)
        raise InvalidParameter(f"{param}: unknown code system {unknown[0]!r}; loaded: {known}", param)
    return keys


@router.get("/search", response_model=SearchResponse, responses=PROBLEM_RESPONSES)
def search(
    service: ServiceDep,
    settings: SettingsDep,
    q: Annotated[str, Query(description="What the user typed (at most 512 characters by default)")],
    system: Annotated[str | None, Query(description="Code system key(s), comma-separated; all when absent")] = None,
    k: Annotated[int, Query(description="Number of concepts (1 to 100 by default)")] = 10,
    mode: Mode = Mode.HYBRID,
    include_inactive: bool = False,
) -> SearchResponse:
    started = time.perf_counter()
    limits = settings.search
    if not q.strip():
        raise InvalidParameter("q: must not be empty", "q")
    if len(q) > limits.max_query_length:
        raise InvalidParameter(f"q: longer than {limits.max_query_length} characters ({len(q)})", "q")
    if not 1 <= k <= limits.max_k:
        raise InvalidParameter(f"k: must be between 1 and {limits.max_k} (got {k})", "k")
    systems = parse_systems(service, system)
    results = service.search(q, systems, k, mode, include_inactive)
    return SearchResponse(
        query=q,
        mode=mode,
        results=results,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
    )
