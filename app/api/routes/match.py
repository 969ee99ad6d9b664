"""``POST /match`` (batch ontology matching) and ``/match/jobs`` (the same, in the background).

The answer's format follows ``Accept``: JSON (default), SSSOM/TSV (``text/tab-separated-values``)
or a FHIR R4 ConceptMap (``application/fhir+json``).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from app.api.deps import CancelledDep, ServiceDep, SettingsDep
from app.api.errors import PROBLEM_RESPONSES
from app.api.http import Route
from app.checks import check_range, documented
from app.errors import Conflict, NotFound, Unavailable
from app.leases import DONE
from app.matching.conceptmap import build_conceptmap
from app.matching.jobs import Job, JobRunner
from app.matching.matcher import Matcher
from app.matching.request import MatchRequest, resolve
from app.matching.result import MatchRun, RunInfo
from app.matching.review import write_review_csv
from app.matching.sssom import write_sssom
from app.ops.limits import check_cancelled

router = APIRouter(tags=["match"], route_class=Route)

TSV = "text/tab-separated-values"  # SSSOM
CSV = "text/csv"  # the review sheet
FHIR_JSON = "application/fhir+json"  # ConceptMap
FORMATS = {200: {"content": {"application/json": {}, TSV: {}, CSV: {}, FHIR_JSON: {}}}}
FORMAT_NAMES = {TSV: "SSSOM", CSV: "review CSV", FHIR_JSON: "ConceptMap"}


class Progress(BaseModel):
    done: int
    total: int


class JobOut(BaseModel):
    id: str
    status: str  # queued, running, done, failed
    progress: Progress
    error: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    result: dict[str, Any] | None = None  # the JSON answer of POST /match, once done


async def _jobs(request: Request) -> JobRunner:
    runner: JobRunner = request.app.state.jobs
    if runner.error:
        raise Unavailable(runner.error)
    return runner


JobsDep = Annotated[JobRunner, Depends(_jobs)]


def _format(request: Request) -> str:
    accept = request.headers.get("accept", "")
    return next((media for media in (TSV, CSV, FHIR_JSON) if media in accept), "application/json")


def render(run: MatchRun, media: str) -> Response:
    if media == TSV:
        return Response(write_sssom(run), media_type=f"{TSV}; charset=utf-8")
    if media == CSV:
        disposition = f'attachment; filename="match-{run.info.run_id}.csv"'
        return Response(write_review_csv(run), media_type=f"{CSV}; charset=utf-8", headers={"Content-Disposition": disposition})
    if media == FHIR_JSON:
        return JSONResponse(build_conceptmap(run), media_type=FHIR_JSON)
    return JSONResponse(run.to_json())


@router.post("/match", responses={**FORMATS, **PROBLEM_RESPONSES})
def match(
    body: MatchRequest, request: Request, service: ServiceDep, settings: SettingsDep, cancelled: CancelledDep
) -> Response:
    """Top ``k`` target concepts per source, at most ``match.max_sync_sources`` sources."""
    resolved = resolve(body, service, settings, settings.match.max_sync_sources)
    info = RunInfo.of(str(uuid.uuid4()), body, resolved, service)
    matcher = Matcher(service)
    check = partial(check_cancelled, cancelled)  # a timed-out request stops at its next source
    results = matcher.match(resolved.sources, resolved.target, body.k, body.min_score, body.mode, body.min_confidence, check)
    return render(MatchRun(info, results), _format(request))


@router.post("/match/jobs", status_code=202, response_model=JobOut, responses=PROBLEM_RESPONSES)
def submit_job(body: MatchRequest, service: ServiceDep, settings: SettingsDep, jobs: JobsDep) -> JSONResponse:
    """Accept a batch of up to ``match.max_job_sources`` sources; poll ``Location`` for progress."""
    resolved = resolve(body, service, settings, settings.match.max_job_sources)
    info = RunInfo.of(str(uuid.uuid4()), body, resolved, service)
    jobs.store.create(info, body)
    jobs.wake()
    job = jobs.store.get(info.run_id)
    assert job is not None
    location = f"/match/jobs/{job.id}"
    return JSONResponse(_job_out(job).model_dump(mode="json"), status_code=202, headers={"Location": location})


@router.get("/match/jobs", response_model=list[JobOut], responses=PROBLEM_RESPONSES)
def list_jobs(
    jobs: JobsDep,
    limit: Annotated[int, Query(description="How many jobs, newest first (1 to 1000)", **documented(minimum=1, maximum=1000))] = 50,
) -> JSONResponse:
    """The newest match jobs with their status and progress (results: ``GET /match/jobs/{id}``)."""
    check_range(limit, 1, 1000, "limit")
    return JSONResponse([_job_out(job).model_dump(mode="json") for job in jobs.store.latest(limit)])


@router.get("/match/jobs/{job_id}", response_model=JobOut, responses={**FORMATS, 409: PROBLEM_RESPONSES[404], **PROBLEM_RESPONSES})
def get_job(job_id: str, request: Request, jobs: JobsDep) -> Response:
    """Progress, then (status ``done``) the result: in JSON under ``result``, or the whole answer
    as SSSOM, the review CSV or ConceptMap by ``Accept`` (409 until the job is done)."""
    job = jobs.store.get(job_id)
    if job is None:
        raise NotFound(f"job_id: no match job {job_id!r}", "job_id")
    media = _format(request)
    if media != "application/json":
        if job.status != DONE:
            raise Conflict(
                f"job_id: job {job_id} is {job.status} ({job.done} of {job.total} sources); "
                f"its {FORMAT_NAMES[media]} is ready once it is done",
                "job_id",
            )
        return render(jobs.store.run(job), media)
    out = _job_out(job)
    if job.status == DONE:
        out.result = jobs.store.run(job).to_json()
    return JSONResponse(out.model_dump(mode="json"))


def _job_out(job: Job) -> JobOut:
    return JobOut(
        id=job.id,
        status=job.status,
        progress=Progress(done=job.done, total=job.total),
        error=job.error,
        created_at=job.created_at,
        updated_at=job.updated_at,
        finished_at=job.finished_at,
    )
