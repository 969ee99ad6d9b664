"""``POST /evaluate``, built-in benchmarks, and the stored runs (JSON and a results page)."""

from __future__ import annotations

import csv
import io
import threading
from functools import partial
from importlib.resources import files
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field

from app.api.deps import CancelledDep, ReaderDep, ServiceDep, SettingsDep
from app.api.errors import PROBLEM_RESPONSES
from app.api.http import Route, read_text
from app.checks import MATCH, QUERY, K, check_length, check_query, check_range, check_system, documented
from app.errors import InvalidParameter, NotFound
from app.evaluations.jobs import BenchmarkJobs
from app.evaluations.runs import RunStore, evaluate, system_hierarchy, unknown_gold
from app.ops.limits import check_cancelled
from app.search.service import SearchService
from app.search.values import Mode
from app.settings import Settings
from evaluation.benchmarks import BENCHMARKS
from evaluation.gold import RankingItem
from indexer.store import StoreReader

router = APIRouter(tags=["evaluation"], route_class=Route)


class GoldItem(BaseModel):
    query: str = Field(**QUERY)
    gold: list[str] = Field(**documented(min_items=1))


RUN_NAME = 100  # characters
CSV_MEDIA = "text/csv"
CSV_HEADER = ["query", "gold"]


def gold_from_csv(text: str) -> list[GoldItem]:
    """Items of an uploaded gold set: header ``query,gold``, gold codes separated by ``|``."""
    rows = csv.reader(io.StringIO(text))
    try:
        header = next(rows, None)
    except csv.Error as exc:
        raise InvalidParameter(f"body: line 1: not CSV this endpoint reads ({exc})", "body") from None
    if header is None or [h.strip().lower() for h in header] != CSV_HEADER:
        raise InvalidParameter(f"body: line 1: expected the header query,gold (got {','.join(header or [])!r})", "body")
    items = []
    while True:
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as exc:  # a field over the csv module's limit (131,072 characters), a stray NUL...
            raise InvalidParameter(f"body: line {rows.line_num}: not CSV this endpoint reads ({exc})", "body") from None
        line = rows.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(CSV_HEADER):
            raise InvalidParameter(f"body: line {line}: expected 2 fields (query, gold), found {len(row)}", "body")
        gold = [code.strip() for code in row[1].split("|") if code.strip()]
        if not row[0].strip() or not gold:
            raise InvalidParameter(f"body: line {line}: a query and at least one gold code are required", "body")
        items.append(GoldItem(query=row[0].strip(), gold=gold))
    return items


class EvaluateRequest(BaseModel):
    run_name: str | None = Field(default=None, **documented(max_length=RUN_NAME))  # to tell runs apart
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
KParam = Annotated[int, Query(description="Cut-off of every metric (1 to 100 by default)", **K)]
RunNameParam = Annotated[
    str | None, Query(description="A name to tell this run apart (at most 100 characters)", **documented(max_length=RUN_NAME))
]


def _check_name(run_name: str | None) -> None:
    if run_name is not None:
        check_length(run_name, RUN_NAME, "run_name")
        if not run_name.strip():
            raise InvalidParameter("run_name: must not be blank", "run_name")


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
    return _evaluate(body, service, reader, settings, runs, cancelled)


@router.post(
    "/evaluate/csv",
    responses=PROBLEM_RESPONSES,
    openapi_extra={"requestBody": {"required": True, "content": {"text/csv": {"schema": {"type": "string"}}}}},
)
async def evaluate_csv(
    request: Request,
    service: ServiceDep,
    reader: ReaderDep,
    settings: SettingsDep,
    runs: RunsDep,
    cancelled: CancelledDep,
    system: Annotated[str, Query(description="The system the gold codes belong to")],
    mode: Mode = Mode.HYBRID,
    k: KParam = 10,
    run_name: RunNameParam = None,
) -> dict[str, Any]:
    """``POST /evaluate`` with the gold set uploaded as CSV (``text/csv``): a header ``query,gold``,
    then one item a line, its gold codes separated by ``|``."""
    items = gold_from_csv(await read_text(request, CSV_MEDIA))
    body = EvaluateRequest(run_name=run_name, system=system, mode=mode, k=k, items=items)
    return await run_in_threadpool(_evaluate, body, service, reader, settings, runs, cancelled)


def _evaluate(
    body: EvaluateRequest, service: SearchService, reader: StoreReader, settings: Settings, runs: RunStore, cancelled: threading.Event
) -> dict[str, Any]:
    _check(service, settings, body.system, body.k)
    _check_name(body.run_name)
    items = _items(body, settings)
    missing = unknown_gold(service, body.system, items)
    if missing:
        raise GoldNotInSystem(body.system, service.bundle.systems[body.system].version, missing)
    report = evaluate(service, system_hierarchy(reader, body.system), body.system, items, body.mode, body.k, check=partial(check_cancelled, cancelled))
    check_cancelled(cancelled)  # a caller already answered 503 gets no stored run
    return runs.save(report, service, body.system, body.mode, name=body.run_name).to_json()


@router.get("/benchmarks", response_model=list[Benchmark])
def benchmarks(service: ServiceDep) -> list[Benchmark]:
    """The built-in ranking benchmarks on the open terminologies (fixed seeds and sizes)."""
    return [
        Benchmark(name=s.name, system=s.system, description=s.description, size=s.size, available=s.system in service.bundle.systems)
        for s in BENCHMARKS.values()
    ]


async def _benchmark_jobs(request: Request) -> BenchmarkJobs:
    return request.app.state.benchmark_jobs


BenchmarkJobsDep = Annotated[BenchmarkJobs, Depends(_benchmark_jobs)]


@router.post("/benchmarks/{name}/run", status_code=202, responses=PROBLEM_RESPONSES)
def run_benchmark(
    name: str,
    service: ServiceDep,
    settings: SettingsDep,
    jobs: BenchmarkJobsDep,
    mode: Mode = Mode.HYBRID,
    k: KParam = 10,
    run_name: RunNameParam = None,
) -> JSONResponse:
    """Start a job that builds the benchmark's items from the store and runs them against the
    served bundle (each query's own label left out of the search: no self-retrieval); answers
    202 at once with the job, to poll at ``Location``; the finished run is stored (``run_id``)."""
    spec = BENCHMARKS.get(name)
    if spec is None:
        raise NotFound(f"name: unknown benchmark {name!r}; built in: {', '.join(BENCHMARKS)}", "name")
    if spec.system not in service.bundle.systems:
        known = ", ".join(service.bundle.systems)
        raise InvalidParameter(f"name: benchmark {name!r} runs on {spec.system}, which is not loaded; loaded: {known}", "name")
    _check(service, settings, spec.system, k)
    _check_name(run_name)
    job = jobs.submit(name, mode, k, run_name, settings.match.max_queued_jobs)
    return JSONResponse(job.to_json(), status_code=202, headers={"Location": f"/benchmarks/jobs/{job.id}"})


@router.get("/benchmarks/jobs", responses=PROBLEM_RESPONSES)
def list_benchmark_jobs(
    jobs: BenchmarkJobsDep,
    limit: Annotated[int, Query(description="How many jobs, newest first (1 to 200)", **documented(minimum=1, maximum=200))] = 50,
) -> list[dict[str, Any]]:
    """The benchmark jobs, newest first, with status and progress (the last 200 finished are kept)."""
    check_range(limit, 1, 200, "limit")
    return [job.to_json() for job in jobs.latest(limit)]


@router.get("/benchmarks/jobs/{job_id}", responses=PROBLEM_RESPONSES)
def get_benchmark_job(job_id: str, jobs: BenchmarkJobsDep) -> dict[str, Any]:
    """A benchmark job's status and progress; once ``done``, ``run_id`` names its stored run."""
    job = jobs.get(job_id)
    if job is None:
        raise NotFound(f"job_id: no benchmark job {job_id!r}", "job_id")
    return job.to_json()


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
