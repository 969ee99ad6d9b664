"""Built-in benchmark runs as jobs: ``POST /benchmarks/{name}/run`` answers 202 at once, one
worker thread runs the benchmarks one after another, and the finished run is stored like any
other (``/evaluations/{run_id}``).

Jobs live in memory: a run takes seconds to a minute, so one a restart interrupts is simply
posted again (its stored result is the only thing that outlives the process)."""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.exc import SQLAlchemyError

from app.errors import RateLimited
from app.evaluations.runs import RunStore, evaluate
from app.search.service import SearchService
from app.search.values import Mode
from evaluation.benchmarks import BenchmarkSpec
from indexer.store import StoreReader

log = logging.getLogger(__name__)
KEPT = 200  # finished jobs remembered, newest
RETRY_AFTER_S = 30  # told to a client whose run the full queue refused


@dataclass
class BenchmarkJob:
    id: str
    benchmark: str
    mode: Mode
    k: int
    name: str | None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: str = "queued"  # queued | running | done | failed | cancelled
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


class _Stopped(Exception):
    pass


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
        self._jobs: dict[str, BenchmarkJob] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="benchmark-jobs", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop before the next item; a job in progress ends ``cancelled``."""
        self._stop.set()
        self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join(timeout)

    def submit(self, benchmark: str, mode: Mode, k: int, name: str | None, max_queued: int) -> BenchmarkJob:
        """Queue a run; refused (429) while ``max_queued`` runs wait already."""
        job = BenchmarkJob(str(uuid.uuid4()), benchmark, mode, k, name)
        with self._lock:
            waiting = sum(1 for j in self._jobs.values() if j.status == "queued")
            if waiting >= max_queued:
                raise RateLimited(
                    f"{waiting} benchmark runs are queued, at most {max_queued} (match.max_queued_jobs); "
                    "try again once one has finished",
                    headers={"Retry-After": str(RETRY_AFTER_S)},
                )
            self._jobs[job.id] = job
            for old in sorted(self._jobs.values(), key=lambda j: j.created_at)[: max(len(self._jobs) - KEPT, 0)]:
                if old.finished_at is not None:
                    del self._jobs[old.id]
        self._queue.put(job.id)
        return job

    def get(self, job_id: str) -> BenchmarkJob | None:
        return self._jobs.get(job_id)

    def latest(self, limit: int) -> list[BenchmarkJob]:
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: j.created_at, reverse=True)[:limit]

    def _work(self) -> None:
        while (job_id := self._queue.get()) is not None and not self._stop.is_set():
            job = self._jobs.get(job_id)
            if job is None:
                continue
            job.status = "running"
            try:
                job.run_id = self._run(job)
                job.status = "done"
            except _Stopped:
                job.status = "cancelled"
            except Exception as error:  # one failed run never stops the worker
                log.exception("benchmark job %s failed", job.id)
                job.status, job.error = "failed", _public(error, job.id)
            job.finished_at = datetime.now(UTC)

    def _run(self, job: BenchmarkJob) -> int:
        service = self._service()
        if service is None:
            raise RuntimeError("no search bundle is loaded")
        spec = self._specs[job.benchmark]
        benchmark = spec.build(self._reader)
        job.total = len(benchmark.items)

        def check() -> None:
            if self._stop.is_set():
                raise _Stopped
            job.done += 1

        report = evaluate(service, benchmark.hierarchy, spec.system, benchmark.items, job.mode, job.k, benchmark.candidates, check, leave_out=True)
        job.done = job.total
        return RunStore(self._reader.engine).save(report, service, spec.system, job.mode, benchmark=spec.name, name=job.name).id
