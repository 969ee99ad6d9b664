"""Built-in benchmark runs as jobs: ``POST /benchmarks/{name}/run`` answers 202 at once, and the
finished run is stored like any other (``/evaluations/{run_id}``).

Jobs are rows of the store's ``benchmark_job`` table, so every worker process answers for every
job. Each process has one thread that claims the oldest queued job (:mod:`app.leases`: exactly
one process runs a job) and runs it, writing its progress about once a second. A run is not
resumed: one a stop interrupts ends ``cancelled``, one whose process died ends ``failed`` once
its lease lapses; either is simply posted again (its stored result is what outlives the job)."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, literal, select
from sqlalchemy.exc import SQLAlchemyError

from app.errors import RateLimited
from app.evaluations.runs import RunStore, evaluate
from app.leases import DONE, FAILED, POLL_S, QUEUED, Leases, now
from app.search.service import SearchService
from app.search.values import Mode
from app.tables import BenchmarkJobRow
from evaluation.benchmarks import BenchmarkSpec
from indexer.store import StoreReader

log = logging.getLogger(__name__)
KEPT = 200  # finished jobs remembered, newest
RETRY_AFTER_S = 30  # told to a client whose run the full queue refused
PROGRESS_S = 1.0  # a run's progress is written this often
CANCELLED = "cancelled"  # a run a stop interrupted (not resumed)
ABANDONED = "the process running the job stopped before it finished; submit it again"
QUEUE_LOCK = 0x7E5B  # PostgreSQL advisory lock: one submit at a time counts the queue


@dataclass(frozen=True)
class BenchmarkJob:
    id: str
    benchmark: str
    mode: Mode
    k: int
    name: str | None
    created_at: datetime = field(default_factory=now)
    status: str = QUEUED  # queued | running | done | failed | cancelled
    done: int = 0  # items searched
    total: int | None = None  # items, once the benchmark is built
    run_id: int | None = None
    error: str | None = None
    finished_at: datetime | None = None

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "benchmark": self.benchmark,
            "mode": self.mode.value,
            "k": self.k,
            "name": self.name,
            "status": self.status,
            "progress": {"done": self.done, "total": self.total},
            "run_id": self.run_id,
            "error": self.error,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
        }


def _job(row: Any) -> BenchmarkJob:
    return BenchmarkJob(
        row.id, row.benchmark, Mode(row.mode), row.k, row.name, row.created_at,
        row.status, row.done, row.total, row.run_id, row.error, row.finished_at,
    )  # fmt: skip


class _Stopped(Exception):
    pass


class _Lost(Exception):
    """This process no longer holds the job (its lease lapsed): it stops without writing."""


def _abandoned() -> dict[str, Any]:
    """How a run ends whose process died: it is not resumed."""
    return {"status": FAILED, "error": ABANDONED, "finished_at": now()}


def _public(error: Exception, job_id: str) -> str:
    """What a caller reads of a failed run: the store's errors name its host and port, so those are logged, not shown."""
    if isinstance(error, SQLAlchemyError):
        return f"the store failed during the run (logged under job {job_id}); submit it again"
    return f"{type(error).__name__}: {error}"


class BenchmarkJobs:
    def __init__(self, service: Callable[[], SearchService | None], reader: StoreReader, specs: dict[str, BenchmarkSpec]) -> None:
        self._service = service
        self._reader = reader
        self._specs = specs
        self.engine = reader.engine
        self.leases = Leases(self.engine, BenchmarkJobRow, expired=_abandoned)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="benchmark-jobs", daemon=True)

    def start(self) -> None:
        self.leases.start()
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop before the next item; a job in progress ends ``cancelled``."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.leases.stop()

    def submit(self, benchmark: str, mode: Mode, k: int, name: str | None, max_queued: int) -> BenchmarkJob:
        """Queue a run; refused (429) while ``max_queued`` runs wait already, in any process."""
        job = BenchmarkJob(str(uuid.uuid4()), benchmark, mode, k, name)
        t = BenchmarkJobRow
        row = {
            "id": job.id, "benchmark": benchmark, "mode": mode.value, "k": k, "name": name, "status": QUEUED,
            "done": 0, "created_at": job.created_at, "updated_at": job.created_at,
        }  # fmt: skip
        waiting = select(func.count()).select_from(t).where(t.status == QUEUED)
        # Counted and added in one statement: SQLite runs it under its one writer lock; PostgreSQL
        # submits wait for each other on an advisory lock held to the end of the transaction.
        values = select(*(literal(value, t.__table__.c[column].type) for column, value in row.items()))
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(select(func.pg_advisory_xact_lock(QUEUE_LOCK)))
            added = conn.execute(
                insert(t).from_select(list(row), values.where(waiting.scalar_subquery() < max_queued)).returning(t.id)
            ).first()
            if added is None:
                raise RateLimited(
                    f"{conn.scalar(waiting)} benchmark runs are queued, at most {max_queued} (match.max_queued_jobs); "
                    "try again once one has finished",
                    headers={"Retry-After": str(RETRY_AFTER_S)},
                )
            kept = select(t.id).where(t.finished_at.is_not(None)).order_by(t.created_at.desc()).limit(KEPT)
            conn.execute(delete(t).where(t.finished_at.is_not(None), t.id.not_in(kept)))
        self._wake.set()
        return job

    def get(self, job_id: str) -> BenchmarkJob | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(BenchmarkJobRow).where(BenchmarkJobRow.id == job_id)).first()
        return None if row is None else _job(row)

    def latest(self, limit: int) -> list[BenchmarkJob]:
        t = BenchmarkJobRow
        with self.engine.connect() as conn:
            return [_job(row) for row in conn.execute(select(t).order_by(t.created_at.desc(), t.id).limit(limit))]

    def _work(self) -> None:
        failing = False  # the store failed the last look for a job: said once, not every poll
        while not self._stop.is_set():
            self._wake.clear()
            try:
                job_id = self.leases.claim()
            except SQLAlchemyError as exc:
                if not failing:
                    log.warning("benchmark jobs wait: the store failed (%s)", type(exc).__name__)
                failing, job_id = True, None
            else:
                failing = False
            if job_id is None:
                self._wake.wait(POLL_S)
            else:
                self._execute(job_id)

    def _execute(self, job_id: str) -> None:
        ends: dict[str, Any]
        try:
            ends = {"status": DONE, "run_id": self._run(job_id)}
        except _Stopped:
            ends = {"status": CANCELLED}
        except _Lost:
            log.warning("benchmark job %s was taken back from this process (its lease lapsed)", job_id)
            ends = {}
        except Exception as error:  # one failed run never stops the worker
            log.exception("benchmark job %s failed", job_id)
            ends = {"status": FAILED, "error": _public(error, job_id)}
        try:
            self.leases.end(job_id, finished_at=now(), **ends)
        except SQLAlchemyError as exc:  # its lease lapses, and it ends failed
            log.warning("benchmark job %s: its end was not stored (%s)", job_id, type(exc).__name__)

    def _progress(self, job_id: str, **values: Any) -> None:
        if not self.leases.write(job_id, **values):
            raise _Lost

    def _run(self, job_id: str) -> int:
        service = self._service()
        if service is None:
            raise RuntimeError("no search bundle is loaded")
        job = self.get(job_id)
        assert job is not None  # claimed, so stored (only finished jobs are pruned)
        spec = self._specs[job.benchmark]
        benchmark = spec.build(self._reader)
        total = len(benchmark.items)
        self._progress(job_id, total=total)
        done, written = 0, time.monotonic()

        def check() -> None:
            nonlocal done, written
            if self._stop.is_set():
                raise _Stopped
            done += 1
            if time.monotonic() - written >= PROGRESS_S:
                self._progress(job_id, done=done)
                written = time.monotonic()

        report = evaluate(service, benchmark.hierarchy, spec.system, benchmark.items, job.mode, job.k, benchmark.candidates, check, leave_out=True)
        self._progress(job_id, done=total)  # still ours: the run is stored once
        return RunStore(self._reader.engine).save(report, service, spec.system, job.mode, benchmark=spec.name, name=job.name).id
