"""Match jobs: persisted in the store, run a chunk at a time by one background thread in each
worker process, each job by the one process that claimed it (:mod:`app.leases`).

Each chunk's results and the new progress are written in one transaction, so a job never loses
finished work: a process that stops hands its job back to the queue, one that dies leaves it
``running`` until its lease lapses and another process (or the next start) takes it back; either
way the job goes on from the first unsaved source. A job is tied to the bundle it was accepted
on (ids and codes are per bundle): if another bundle is served when it runs, it fails and says so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, func, insert, inspect, select
from sqlalchemy.exc import SQLAlchemyError

from app.leases import DONE, FAILED, POLL_S, QUEUED, Leases, now
from app.matching.matcher import Matcher
from app.matching.request import MatchRequest, resolve
from app.matching.result import MatchRun, RunInfo, results_from_json, results_to_json
from app.search.service import SearchService
from app.settings import Settings
from app.tables import MatchJobChunkRow, MatchJobRow
from indexer.store import StoreReader

log = logging.getLogger("termsearch.jobs")



def _job(row: Any) -> Job:
    return Job(
        row.id, row.status, row.total, row.done, row.error,
        row.created_at, row.updated_at, row.finished_at,
        MatchRequest.model_validate(row.request["request"]), RunInfo.from_dict(row.request["info"]),
    )


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
    """The ``match_job`` and ``match_job_chunk`` tables; ``leases``: the jobs this process holds
    (a job whose process died is queued again, to go on from its saved chunks)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.leases = Leases(engine, MatchJobRow, expired=lambda: {"status": QUEUED})

    def create(self, info: RunInfo, request: MatchRequest) -> None:
        at = now()
        document = {"request": request.model_dump(mode="json"), "info": info.to_dict()}
        with self.engine.begin() as conn:
            conn.execute(
                insert(MatchJobRow).values(
                    id=info.run_id, status=QUEUED, request=document, total=info.sources, done=0,
                    error=None, created_at=at, updated_at=at, finished_at=None,
                )
            )

    def get(self, job_id: str) -> Job | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(MatchJobRow).where(MatchJobRow.id == job_id)).first()
        return None if row is None else _job(row)

    def latest(self, limit: int) -> list[Job]:
        """The ``limit`` newest jobs, newest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(MatchJobRow).order_by(MatchJobRow.created_at.desc(), MatchJobRow.id).limit(limit))
            return [_job(row) for row in rows]

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

    def save_chunk(self, job_id: str, seq: int, sources: int, results: list[dict[str, Any]]) -> bool:
        """A step's results and the new progress, in one transaction, if this process still
        holds the job; False (nothing written) when it does not."""
        with self.engine.begin() as conn:
            if not self.leases.held(conn, job_id, done=MatchJobRow.done + sources):
                return False
            conn.execute(insert(MatchJobChunkRow).values(job_id=job_id, seq=seq, sources=sources, results=results))
        return True

    def finish(self, job_id: str, status: str, error: str | None = None) -> bool:
        """End a job this process holds: ``done``, or ``failed`` with the caller's message."""
        return self.leases.end(job_id, status=status, error=error, finished_at=now())


class JobError(Exception):
    """A job that cannot go on; its message is the job's ``error``."""


class JobRunner:
    """One worker thread working through queued jobs, oldest first: those this process accepted
    at once (:meth:`wake`), those another process accepted within ``POLL_S``.

    Start-up never waits on the store: the worker retries (backing off up to ``max_retry_s``)
    while the store cannot be used. A store error during a job pauses the worker the same way;
    once the store answers the job goes back to the queue, keeping its saved chunks, and goes on
    in whichever process claims it. Any other failure ends that job, never the worker.
    """

    def __init__(
        self,
        store: JobStore,
        service: Callable[[], SearchService | None],
        reader: StoreReader,
        settings: Settings,
        max_retry_s: float = 10.0,
    ) -> None:
        self.store = store
        self._service = service  # asked again for every chunk: the app may switch bundles
        self.reader = reader
        self.settings = settings
        self.max_retry_s = max_retry_s
        self.error: str | None = None  # why jobs cannot run now (the store), for callers
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="match-jobs", daemon=True)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        self.store.leases.start()
        self._thread.start()

    def wake(self) -> None:
        """A job was accepted here: look for it now rather than at the next poll."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the chunk in progress (its results are saved); the job goes back to the
        queue, for another process or the next start."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.store.leases.stop()
        try:
            self.store.leases.release()
        except SQLAlchemyError as exc:  # its lease lapses instead, and another process takes it back
            log.warning("match job not handed back: the store failed (%s)", type(exc).__name__)

    def _work(self) -> None:
        failures = 0  # store failures in a row: the wait before the next try doubles up to max_retry_s
        while not self._stop.wait(min(0.25 * 2**failures, self.max_retry_s) if failures else 0):
            if not self._recover():
                failures = min(failures + 1, 16)
                continue
            while not self._stop.is_set():
                self._wake.clear()
                try:
                    job_id = self.store.leases.claim()
                except SQLAlchemyError:
                    break
                if job_id is None:
                    self._wake.wait(POLL_S)
                elif self._step(job_id):
                    failures = 0
                else:
                    break
            else:  # stop() was called
                return
            failures = min(failures + 1, 16)

    def _step(self, job_id: str) -> bool:
        """Run one job; False when the store failed (the worker then recovers and resumes it)."""
        try:
            self._run(job_id)
        except SQLAlchemyError as exc:
            log.warning("match job %s paused: the store failed (%s)", job_id, type(exc).__name__)
            return False
        except Exception as exc:  # any other failure ends this job, not the worker
            if isinstance(exc, JobError):
                message = str(exc)
            else:
                log.exception("match job %s failed", job_id)
                message = f"the job failed on an internal error (logged under job {job_id}); submit it again"
            try:
                self.store.finish(job_id, FAILED, message)
            except SQLAlchemyError:  # it runs again once the store is back, and fails the same way
                return False
        return True

    def _recover(self) -> bool:
        """Hand back the job a store failure interrupted, and those of processes that died;
        False (and ``error`` set) while the store cannot be used."""
        try:
            self.store.leases.release()
            self.store.leases.expire()
        except SQLAlchemyError as exc:
            error = self._diagnose()
            if error != self.error:
                log.error("match jobs paused: %s (%s)", error, type(exc).__name__)
            self.error = error
            return False
        if self.error:
            log.info("match jobs running again")
        self.error = None
        return True

    def _diagnose(self) -> str:
        try:
            tables = inspect(self.store.engine).get_table_names()
        except SQLAlchemyError:
            return "the concept store cannot be reached; match jobs resume once it answers"
        if not {MatchJobRow.__tablename__, MatchJobChunkRow.__tablename__} <= set(tables):
            return "the match job tables are missing; run `python -m indexer migrate`"
        return "the concept store is busy or failing; match jobs resume once it answers"

    def _run(self, job_id: str) -> None:
        job = self.store.get(job_id)
        assert job is not None  # claimed, so stored (match jobs are never deleted)
        resolved = resolve(job.request, self._current(job), self.settings, self.settings.match.max_job_sources)
        seq, done, size = self.store.chunks(job_id), job.done, self.settings.match.job_chunk
        matcher = Matcher(self._current(job))
        while done < len(resolved.sources):
            if self._stop.is_set():  # stop() hands the job back
                return
            batch = resolved.sources[done : done + size]
            if (service := self._current(job)) is not matcher.service:  # a reloaded copy of the same bundle
                matcher = Matcher(service)
            request = job.request
            results = matcher.match(batch, resolved.target, request.k, request.min_score, request.mode, request.min_confidence)
            if not self.store.save_chunk(job_id, seq, len(batch), results_to_json(results)):
                log.warning("match job %s was taken back from this process (its lease lapsed)", job_id)
                self.store.leases.end(job_id)
                return
            seq, done = seq + 1, done + len(batch)
        self.store.finish(job_id, DONE)

    def _current(self, job: Job) -> SearchService:
        service = self._service()
        if service is None or service.bundle.id != job.info.bundle_id:
            serving = service.bundle.id if service else "none"
            raise JobError(f"the job was accepted on bundle {job.info.bundle_id}, now {serving} is served; submit it again")
        return service
