"""``POST /evaluate``, built-in benchmarks, and the stored runs (JSON and a results page)."""

from __future__ import annotations

from functools import partial
from importlib.resources import files
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from app.api.deps import CancelledDep, ReaderDep, ServiceDep, SettingsDep
from app.api.errors import PROBLEM_RESPONSES
from app.api.http import Route
from app.checks import K, MATCH, QUERY, check_query, check_range, check_system, documented
from app.errors import InvalidParameter, NotFound
from app.evaluations.runs import RunStore, evaluate, system_hierarchy, unknown_gold
from app.ops.limits import check_cancelled
from app.search.service import Mode, SearchService
from evaluation.benchmarks import BENCHMARKS
from evaluation.gold import RankingItem
from indexer.settings import Settings

router = APIRouter(tags=["evaluation"], route_class=Route)


class GoldItem(BaseModel):
    query: str = Field(**QUERY)
    gold: list[str] = Field(**documented(min_items=1))


class EvaluateRequest(BaseModel):
    system: str
    mode: Mode = Mode.HYBRID
    k: int = Field(default=10, **K)
    items: list[GoldItem] = Field(**documented(min_items=1, max_items=MATCH.max_eval_items))


class UnknownGold(BaseModel):
    item: int
    codes: list[str]


class GoldNotInSystem(InvalidParameter):
    """Gold codes the system does not have: every one is listed back, none is dropped."""

    def __init__(self, system: str, version: str, unknown: dict[int, list[str]]) -> None:
        first, codes = next(iter(unknown.items()))
        more = len(unknown) - 1
        detail = f"items.{first}.gold: not codes of {system} {version}: {', '.join(map(repr, codes))}"
        if more:
            detail += f"; {more} more item(s) name unknown codes (see unknown_gold)"
        super().__init__(detail, f"items.{first}.gold")
        self.unknown = [UnknownGold(item=i, codes=c) for i, c in unknown.items()]

    def extra(self) -> dict[str, Any]:
        return {"unknown_gold": [item.model_dump() for item in self.unknown]}


class Benchmark(BaseModel):
    name: str
    system: str
    description: str
    size: int
    available: bool  # the served bundle has the system


async def _runs(request: Request) -> RunStore:
    return RunStore(request.app.state.reader.engine)


RunsDep = Annotated[RunStore, Depends(_runs)]
def _check(service: SearchService, settings: Settings, system: str, k: int) -> None:
    check_system(service.bundle.systems, system, "system")
    check_range(k, 1, settings.search.max_k, "k")


def _items(body: EvaluateRequest, settings: Settings) -> list[RankingItem]:
    if not body.items:
        raise InvalidParameter("items: must not be empty", "items")
    if len(body.items) > settings.match.max_eval_items:
        limit = settings.match.max_eval_items
        raise InvalidParameter(f"items: {len(body.items)} items, more than {limit}", "items")
    for number, item in enumerate(body.items):
        check_query(item.query, settings.search.max_query_length, f"items.{number}.query")
        if not item.gold:
            raise InvalidParameter(f"items.{number}.gold: must not be empty", f"items.{number}.gold")
    return [RankingItem(item.query, tuple(item.gold), body.system) for item in body.items]


@router.post("/evaluate", responses=PROBLEM_RESPONSES)
def evaluate_items(
    body: EvaluateRequest, service: ServiceDep, reader: ReaderDep, settings: SettingsDep, runs: RunsDep, cancelled: CancelledDep
) -> dict[str, Any]:
    """Hits@1/5/10, MRR, graded nDCG@k (3 exact, 2 parent or child, 1 grandparent, grandchild,
    sibling or uncle), per-item ranks, and Hits@k by query–gold word overlap; the run is stored."""
    _check(service, settings, body.system, body.k)
    items = _items(body, settings)
    missing = unknown_gold(service, body.system, items)
    if missing:
        raise GoldNotInSystem(body.system, service.bundle.systems[body.system].version, missing)
    report = evaluate(service, system_hierarchy(reader, body.system), body.system, items, body.mode, body.k, check=partial(check_cancelled, cancelled))
    check_cancelled(cancelled)  # a caller already answered 503 gets no stored run
    return runs.save(report, service, body.system, body.mode).to_json()


@router.get("/benchmarks", response_model=list[Benchmark])
def benchmarks(service: ServiceDep) -> list[Benchmark]:
    """The built-in ranking benchmarks on the open terminologies (fixed seeds and sizes)."""
    return [
        Benchmark(name=s.name, system=s.system, description=s.description, size=s.size, available=s.system in service.bundle.systems)
        for s in BENCHMARKS.values()
    ]


@router.post("/benchmarks/{name}/run", responses=PROBLEM_RESPONSES)
def run_benchmark(
    name: str,
    service: ServiceDep,
    reader: ReaderDep,
    settings: SettingsDep,
    runs: RunsDep,
    cancelled: CancelledDep,
    mode: Mode = Mode.HYBRID,
    k: Annotated[int, Query(description="Cut-off of every metric (1 to 100 by default)", **K)] = 10,
) -> dict[str, Any]:
    """Build the benchmark's items from the store, run them against the served bundle, store the run."""
    spec = BENCHMARKS.get(name)
    if spec is None:
        raise NotFound(f"name: unknown benchmark {name!r}; built in: {', '.join(BENCHMARKS)}", "name")
    if spec.system not in service.bundle.systems:
        known = ", ".join(service.bundle.systems)
        raise InvalidParameter(f"name: benchmark {name!r} runs on {spec.system}, which is not loaded; loaded: {known}", "name")
    _check(service, settings, spec.system, k)
    benchmark = spec.build(reader)
    report = evaluate(service, benchmark.hierarchy, spec.system, benchmark.items, mode, k, benchmark.candidates, partial(check_cancelled, cancelled))
    check_cancelled(cancelled)
    return runs.save(report, service, spec.system, mode, benchmark=name).to_json()


@router.get("/evaluations", responses=PROBLEM_RESPONSES)
def list_runs(runs: RunsDep) -> list[dict[str, Any]]:
    """Stored runs, newest first, without their per-item results."""
    return [run.to_json() for run in runs.list()]


@router.get("/evaluations/view", response_class=HTMLResponse)
def results_page() -> HTMLResponse:
    """The stored runs plotted: Hits@K per mode and model, and Hits@10 by word overlap."""
    return HTMLResponse(files("app.evaluations").joinpath("results.html").read_text(encoding="utf-8"))


@router.get("/evaluations/{run_id}", responses=PROBLEM_RESPONSES)
def get_run(run_id: Annotated[int, Path(ge=1, le=2**31 - 1)], runs: RunsDep) -> dict[str, Any]:
    run = runs.get(run_id)
    if run is None:
        raise NotFound(f"run_id: no evaluation run {run_id}", "run_id")
    return run.to_json()
