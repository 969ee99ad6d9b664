"""Match jobs: persisted in the store, run by one background thread a chunk at a time.

Each chunk's results and the new progress are written in one transaction, so a job never loses
finished work: an app that stops or dies leaves the job ``running`` with its chunks saved, and
the next app start puts it back in the queue and goes on from the first unsaved source. A job
is tied to the bundle it was accepted on (ids and codes are per bundle): if another bundle is
served when it runs, it fails and says so.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, func, insert, select, update
from sqlalchemy.exc import SQLAlchemyError

from app.matching.matcher import Matcher
from app.matching.request import MatchRequest, resolve
from app.matching.result import MatchRun, RunInfo, results_from_json, results_to_json
from app.search.service import SearchService
from indexer.settings import Settings
from indexer.store import StoreReader
from indexer.store.models import MatchJobChunkRow, MatchJobRow

log = logging.getLogger("termsearch.jobs")

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Job:
    id: str
    status: str
    total: int
    done: int
    error: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None
    request: MatchRequest
    info: RunInfo


class JobStore:
    """The ``match_job`` and ``match_job_chunk`` tables."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(self, info: RunInfo, request: MatchRequest) -> None:
        now = _now()
        document = {"request": request.model_dump(mode="json"), "info": info.to_dict()}
        with self.engine.begin() as conn:
            conn.execute(
                insert(MatchJobRow).values(
                    id=info.run_id, status=QUEUED, request=document, total=info.sources, done=0,
                    error=None, created_at=now, updated_at=now, finished_at=None,
                )
            )

    def get(self, job_id: str) -> Job | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(MatchJobRow).where(MatchJobRow.id == job_id)).first()
        if row is None:
            return None
        return Job(
            row.id, row.status, row.total, row.done, row.error,
            row.created_at, row.updated_at, row.finished_at,
            MatchRequest.model_validate(row.request["request"]), RunInfo.from_dict(row.request["info"]),
        )

    def run(self, job: Job) -> MatchRun:
        """The job's result so far: its saved chunks in order."""
        with self.engine.connect() as conn:
            chunks = conn.scalars(
                select(MatchJobChunkRow.results).where(MatchJobChunkRow.job_id == job.id).order_by(MatchJobChunkRow.seq)
            ).all()
        return MatchRun(job.info, [r for chunk in chunks for r in results_from_json(chunk)])

    def chunks(self, job_id: str) -> int:
        with self.engine.connect() as conn:
            return conn.scalar(select(func.count()).where(MatchJobChunkRow.job_id == job_id)) or 0

    def save_chunk(self, job_id: str, seq: int, sources: int, results: list[dict[str, Any]]) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(MatchJobChunkRow).values(job_id=job_id, seq=seq, sources=sources, results=results))
            conn.execute(
                update(MatchJobRow)
                .where(MatchJobRow.id == job_id)
                .values(done=MatchJobRow.done + sources, updated_at=_now())
            )

    def set_status(self, job_id: str, status: str, error: str | None = None) -> None:
        finished = _now() if status in (DONE, FAILED) else None
        with self.engine.begin() as conn:
            conn.execute(
                update(MatchJobRow)
                .where(MatchJobRow.id == job_id)
                .values(status=status, error=error, updated_at=_now(), finished_at=finished)
            )

    def requeue_unfinished(self) -> list[str]:
        """Jobs a previous process left running go back to the queue; every queued job's id,
        oldest first."""
        with self.engine.begin() as conn:
            conn.execute(update(MatchJobRow).where(MatchJobRow.status == RUNNING).values(status=QUEUED, updated_at=_now()))
            return list(
                conn.scalars(select(MatchJobRow.id).where(MatchJobRow.status == QUEUED).order_by(MatchJobRow.created_at))
            )


class JobRunner:
    """One worker thread working through queued jobs, oldest first."""

    def __init__(
        self,
        store: JobStore,
        service: Callable[[], SearchService | None],
        reader: StoreReader,
        settings: Settings,
    ) -> None:
        self.store = store
        self._service = service  # asked again for every chunk: the app may switch bundles
        self.reader = reader
        self.settings = settings
        self.error: str | None = None  # set when the job tables cannot be used
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="match-jobs", daemon=True)

    def start(self) -> None:
        try:
            pending = self.store.requeue_unfinished()
        except SQLAlchemyError as exc:
            self.error = f"the job store cannot be used ({type(exc).__name__}); run `python -m indexer migrate`"
            log.error("match jobs disabled: %s", exc)
            return
        if pending:
            log.info("resuming %d match job(s)", len(pending))
        for job_id in pending:
            self._queue.put(job_id)
        self._thread.start()

    def submit(self, job_id: str) -> None:
        self._queue.put(job_id)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the chunk in progress (its results are saved); unfinished jobs stay
        ``running`` in the store and are resumed by the next start."""
        self._stop.set()
        self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _work(self) -> None:
        while not self._stop.is_set():
            job_id = self._queue.get()
            if job_id is None:
                return
            try:
                self._run(job_id)
            except Exception as exc:  # any failure ends this job, not the worker
                log.exception("match job %s failed", job_id)
                self.store.set_status(job_id, FAILED, f"{type(exc).__name__}: {exc}")

    def _run(self, job_id: str) -> None:
        job = self.store.get(job_id)
        if job is None or job.status != QUEUED:
            return
        resolved = resolve(job.request, self._current(job), self.settings, self.settings.match.max_job_sources)
        self.store.set_status(job_id, RUNNING)
        seq, done, size = self.store.chunks(job_id), job.done, self.settings.match.job_chunk
        matcher = Matcher(self._current(job))
        while done < len(resolved.sources):
            if self._stop.is_set():
                return
            batch = resolved.sources[done : done + size]
            if (service := self._current(job)) is not matcher.service:  # a reloaded copy of the same bundle
                matcher = Matcher(service)
            results = matcher.match(batch, resolved.target, job.request.k, job.request.min_score, job.request.mode)
            self.store.save_chunk(job_id, seq, len(batch), results_to_json(results))
            seq, done = seq + 1, done + len(batch)
        self.store.set_status(job_id, DONE)

    def _current(self, job: Job) -> SearchService:
        service = self._service()
        if service is None or service.bundle.id != job.info.bundle_id:
            serving = service.bundle.id if service else "none"
            raise RuntimeError(f"the job was accepted on bundle {job.info.bundle_id}, now {serving} is served; submit it again")
        return service
