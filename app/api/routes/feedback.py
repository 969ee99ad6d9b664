"""Learning from use (``app/feedback``): ``POST /feedback`` from the widget and the browser, the
curator's ``/review`` (page, queue, decisions) and the usage gold set ``/benchmarks/usage``.
Served only while ``feedback.enabled``: off, every path here is 404 and nothing is stored."""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import ReaderDep, ServiceDep, SettingsDep
from app.api.errors import PROBLEM_RESPONSES
from app.api.http import Route
from app.checks import check_query, check_system
from app.errors import Forbidden, InvalidParameter
from app.evaluations.runs import RunStore, evaluate, system_hierarchy
from app.feedback.events import Action, Event, EventStore, Surface, Wrong
from app.feedback.overlay import Learning
from app.feedback.review import Decision, Review
from app.ops.access import presented_key
from app.search.service import SearchService
from app.search.values import Mode
from app.settings import Settings
from evaluation.gold import RankingItem
from indexer.knowledge import learned

router = APIRouter(tags=["feedback"], route_class=Route)
PAGE = Path(__file__).resolve().parents[2] / "web" / "review.html"
MAX_SHOWN = 1000
SCOPE_ITEMS = 16
Code = Annotated[str, Field(min_length=1, max_length=64)]
Note = Annotated[str, Field(max_length=1000)]
Short = Annotated[str, Field(max_length=200)]


class FeedbackIn(BaseModel):
    """What a user did with a ranking. ``chose`` and ``flagged`` name the row (``system``,
    ``code``); a flag says what is wrong (``wrong``) with which name (``label``). Texts are at
    most ``search.max_query_length`` characters."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="what the user typed")
    action: Action
    surface: Surface
    system: str | None = Field(
        default=None, max_length=255, description="the row's system (chose, flagged), else the one searched: its key (hpo) or URI"
    )
    code: Code | None = Field(default=None, description="the row chosen or flagged")
    rank: int | None = Field(default=None, ge=1, le=MAX_SHOWN, description="where that row was shown (1 = first)")
    shown: int | None = Field(default=None, ge=0, le=MAX_SHOWN, description="how many rows were shown")
    label: str | None = Field(default=None, description="a flagged row's matched name")
    wrong: Wrong | None = Field(default=None, description="what a flag says is wrong")
    reason: Note | None = None
    scope: dict[Short, Short | int | float | bool | None] | None = Field(
        default=None, max_length=SCOPE_ITEMS, description="the other search arguments (k, kind, billable, ...)"
    )


class DecisionIn(BaseModel):
    """A curator's decision on one queue item: a proposal (``designation``) or a flag (``denial``)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["designation", "denial"]
    system: Short
    code: Code
    text: str = Field(description="the proposal's phrasing, or the flagged name")
    decision: Literal["approve", "reject"]
    wrong: Wrong = Field(default=Wrong.NAME, description="a flag's: the name, or the alignment that lent it")
    edit_text: str | None = Field(default=None, description="approve the proposal as this phrasing")
    edit_code: Code | None = Field(default=None, description="approve the proposal for this code")
    note: Note | None = None


async def _curator(request: Request, settings: SettingsDep) -> str:
    """The name of the curator whose key the request presents; 403 otherwise."""
    curators = settings.api.curators
    if not curators:
        raise Forbidden("no curator key is configured (TERMSEARCH_API__CURATOR_KEYS): nobody may decide")
    presented = (presented_key(request.scope) or "").encode()
    found = None
    for name, key in curators.items():  # every key compared in full
        if hmac.compare_digest(presented, key.encode()):
            found = name
    if found is None:
        raise Forbidden("a curator key is required to decide: send it as X-API-Key or Authorization: Bearer")
    return found


CuratorDep = Annotated[str, Depends(_curator)]


def _check_texts(body: BaseModel, settings: Settings, *names: str) -> None:
    for name in names:
        if (text := getattr(body, name)) is not None:
            check_query(text, settings.search.max_query_length, name)


def _check_event(body: FeedbackIn, service: SearchService, settings: Settings) -> Event:
    _check_texts(body, settings, "query", "label")
    if body.system is not None:  # a key, or the URI the widget knows it by
        by_uri = {entry.uri: key for key, entry in service.bundle.systems.items()}
        body.system = check_system(service.bundle.systems, by_uri.get(body.system, body.system), "system")
    if body.action is Action.ABANDONED:
        if body.code is not None or body.wrong is not None:
            raise InvalidParameter("code: an abandoned ranking names no row (no code, no wrong)", "code")
    else:
        if body.system is None or body.code is None:
            raise InvalidParameter(f"code: a {body.action.value} row needs its system and code", "code")
        if service.bundle.concept_index(body.system, body.code) is None:
            raise InvalidParameter(f"code: {body.code!r} is not a code of {body.system}", "code")
    if body.action is Action.FLAGGED and (body.wrong is None or body.label is None):
        raise InvalidParameter("wrong: a flag says what is wrong (wrong: name or alignment) with which name (label)", "wrong")
    if body.rank is not None and body.shown is not None and body.rank > body.shown:
        raise InvalidParameter(f"rank: {body.rank} is past the {body.shown} rows shown", "rank")
    return Event(**body.model_dump())


@router.post("/feedback", status_code=202, responses=PROBLEM_RESPONSES)
def feedback(body: FeedbackIn, request: Request, service: ServiceDep, settings: SettingsDep) -> dict[str, str]:
    """Record what a user did with a ranking (no client address or key is stored)."""
    event = _check_event(body, service, settings)
    EventStore(request.app.state.reader.engine).record(event)
    request.app.state.metrics.feedback.labels(event.action.value).inc()
    return {"status": "recorded"}


@router.get("/review", response_class=HTMLResponse, include_in_schema=False)
def review_page() -> HTMLResponse:
    """The curator's page: the queue, with approve, edit and reject (needs a curator key)."""
    return HTMLResponse(PAGE.read_text(encoding="utf-8"))


@router.get("/review/queue", responses=PROBLEM_RESPONSES)
def review_queue(request: Request, service: ServiceDep, settings: SettingsDep) -> dict[str, list[dict[str, Any]]]:
    """Proposed phrasings, flagged names and alignments, and unanswered queries, with counts."""
    return Review(request.app.state.reader.engine, settings.feedback).queue(service.bundle)


@router.post("/review/decisions", status_code=201, responses=PROBLEM_RESPONSES)
def decide(body: DecisionIn, request: Request, service: ServiceDep, settings: SettingsDep, curator: CuratorDep) -> dict[str, Any]:
    """Approve, edit or reject a queue item (a curator key only); approved knowledge serves at once."""
    _check_texts(body, settings, "text", "edit_text")
    decision = Decision(
        body.kind,
        body.system,
        body.code,
        body.text,
        body.decision == "approve",
        body.wrong,
        body.edit_text,
        body.edit_code,
        body.note,
    )
    written = Review(request.app.state.reader.engine, settings.feedback).decide(service.bundle, decision, curator)
    learning: Learning = request.app.state.learning
    learning.apply(service)
    return {"decisions": [_learned_json(item) for item in written]}


def _learned_json(item: learned.Learned) -> dict[str, Any]:
    return {
        "kind": item.kind, "system": item.system, "code": item.code, "text": item.text, "decision": item.decision,
        "count": item.count, "reviewer": item.reviewer, "decided_at": item.decided_at.isoformat(), "lent_by": item.lent_by,
    }  # fmt: skip


def usage_items(request: Request, system: str | None = None) -> list[RankingItem]:
    """The usage gold set: each approved phrasing → its concept (``system``'s only, when given)."""
    taught = learned.approved(learned.read(request.app.state.reader.engine), learned.DESIGNATION)
    return [RankingItem(item.text, (item.code,), item.system) for item in taught if system in (None, item.system)]


@router.get("/benchmarks/usage", responses=PROBLEM_RESPONSES)
def usage(request: Request) -> dict[str, Any]:
    """The usage gold set: phrasings users chose a concept for, approved by a curator (kept out of
    the ranker's fitting data); run it with ``POST /benchmarks/usage/run``."""
    items = usage_items(request)
    return {"count": len(items), "items": [{"query": i.query, "gold": list(i.gold), "system": i.system} for i in items]}


@router.post("/benchmarks/usage/run", responses=PROBLEM_RESPONSES)
async def run_usage(
    request: Request,
    service: ServiceDep,
    reader: ReaderDep,
    system: Annotated[str, Query(description="The system whose approved phrasings are run")],
    mode: Mode = Mode.HYBRID,
) -> dict[str, Any]:
    """Rank each approved phrasing of ``system`` with what users taught left out (no overlay, the
    phrasing's own label not matched): does this model and bundle serve the site's users? The
    run is stored as benchmark ``usage``."""
    check_system(service.bundle.systems, system, "system")
    items = usage_items(request, system)
    if not items:
        raise InvalidParameter(f"system: no approved phrasing of {system} yet", "system")

    def run() -> dict[str, Any]:
        report = evaluate(service, system_hierarchy(reader, system), system, items, mode, 10, leave_out=True)
        return RunStore(reader.engine).save(report, service, system, mode, benchmark="usage").to_json()

    return await run_in_threadpool(run)
