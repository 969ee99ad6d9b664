"""Jobs shared by worker processes through the store (app/leases.py), on SQLite and PostgreSQL:
each stands for a process here with its own engine and holder."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import update

from app.errors import RateLimited
from app.evaluations import jobs as benchmark_jobs
from app.evaluations.jobs import ABANDONED, BenchmarkJobs
from app.leases import QUEUED, RUNNING, now
from app.matching.jobs import JobStore
from app.matching.request import MatchRequest, SourceConcept
from app.search.values import Mode
from app.tables import BenchmarkJobRow, MatchJobRow
from indexer.store import StoreReader, make_engine, migrate
from tests.store.test_runs_store import _info

REQUEST = MatchRequest(target_system="toy", concepts=[SourceConcept(id="a", labels=["x"])])


@pytest.fixture
def process(store_url: str) -> Iterator[Callable[[], JobStore]]:
    """``process()``: the match-job store as one more worker process sees it."""
    migrate(store_url)
    stores: list[JobStore] = []

    def start() -> JobStore:
        stores.append(JobStore(make_engine(store_url)))
        return stores[-1]

    yield start
    for store in stores:
        store.leases.stop()
        store.engine.dispose()


def _together(*calls: Callable[[], Any]) -> list[Any]:
    """The calls at once, each on its own thread, released by one barrier."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], Any]) -> Any:
        barrier.wait(10)
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def test_of_two_claimers_one_wins(process: Callable[[], JobStore]) -> None:
    first, second = process(), process()
    first.create(_info("job-1", 1), REQUEST)
    claimed = _together(first.leases.claim, second.leases.claim)
    assert set(claimed) == {"job-1", None}
    winner = first if claimed[0] == "job-1" else second
    loser = second if winner is first else first
    job = winner.get("job-1")
    assert job is not None and job.status == RUNNING
    assert not loser.save_chunk("job-1", 0, 1, [])  # only the holder writes
    assert not loser.finish("job-1", "done")
    assert winner.save_chunk("job-1", 0, 1, [{"id": "a", "label": "x", "candidates": []}])


def test_every_job_is_claimed_by_exactly_one_process(process: Callable[[], JobStore]) -> None:
    first, second = process(), process()
    ids = [f"job-{n:02d}" for n in range(12)]
    for job_id in ids:
        first.create(_info(job_id, 1), REQUEST)

    def drain(store: JobStore) -> list[str]:
        taken = []
        while (job_id := store.leases.claim()) is not None:
            taken.append(job_id)
        return taken

    mine, theirs = _together(lambda: drain(first), lambda: drain(second))
    assert sorted(mine + theirs) == ids and not set(mine) & set(theirs)


def _heartbeat_ago(store: JobStore, job_id: str, seconds: float) -> None:
    with store.engine.begin() as conn:
        conn.execute(update(MatchJobRow).where(MatchJobRow.id == job_id).values(heartbeat_at=now() - timedelta(seconds=seconds)))


def test_a_job_whose_process_died_is_queued_again_once_its_lease_lapses(process: Callable[[], JobStore]) -> None:
    dead, alive = process(), process()
    dead.create(_info("job-1", 2), REQUEST)
    assert dead.leases.claim() == "job-1"
    assert dead.save_chunk("job-1", 0, 1, [{"id": "a", "label": "x", "candidates": []}])
    _heartbeat_ago(dead, "job-1", 5)
    assert alive.leases.expire() == 0  # 5 s without a heartbeat: still within the lease
    _heartbeat_ago(dead, "job-1", alive.leases.lease_s + 1)
    assert alive.leases.expire() == 1  # handed back (a claim does it too, every lease_s / 3)
    assert alive.leases.claim() == "job-1"
    job = alive.get("job-1")
    assert job is not None and (job.status, job.done, alive.chunks("job-1")) == (RUNNING, 1, 1)
    assert not dead.save_chunk("job-1", 1, 1, [])  # a holder that comes back writes nothing


def test_a_job_left_running_before_leases_existed_is_handed_back(process: Callable[[], JobStore]) -> None:
    """A store migrated from before leases (0009) holds running jobs without a heartbeat: they are
    queued again, not left running for ever."""
    store = process()
    store.create(_info("job-1", 2), REQUEST)
    assert store.leases.claim() == "job-1"
    with store.engine.begin() as conn:
        conn.execute(update(MatchJobRow).where(MatchJobRow.id == "job-1").values(heartbeat_at=None, holder=None))
    assert store.leases.expire() == 1
    job = store.get("job-1")
    assert job is not None and job.status == "queued"


def test_a_live_holder_renews_its_lease(process: Callable[[], JobStore]) -> None:
    holder, other = process(), process()
    holder.leases.lease_s = other.leases.lease_s = 0.6  # renewed every 0.2 s
    holder.create(_info("job-1", 1), REQUEST)
    holder.leases.start()
    assert holder.leases.claim() == "job-1"
    time.sleep(1.5)  # over twice the lease
    assert other.leases.expire() == 0
    job = holder.get("job-1")
    assert job is not None and job.status == RUNNING
    holder.leases.stop()
    holder.leases.release()  # a process that stops hands its job back at once
    job = holder.get("job-1")
    assert job is not None and job.status == QUEUED
    assert other.leases.claim() == "job-1"


@pytest.fixture
def benchmark_process(store_url: str) -> Iterator[Callable[[], BenchmarkJobs]]:
    """``benchmark_process()``: the benchmark jobs as one more worker process sees them (its
    thread not started)."""
    migrate(store_url)
    made: list[BenchmarkJobs] = []

    def start() -> BenchmarkJobs:
        made.append(BenchmarkJobs(lambda: None, StoreReader(make_engine(store_url)), {}))
        return made[-1]

    yield start
    for jobs in made:
        jobs.stop()
        jobs.engine.dispose()


def test_the_benchmark_queue_cap_holds_across_processes(benchmark_process: Callable[[], BenchmarkJobs]) -> None:
    first, second = benchmark_process(), benchmark_process()

    def submit(jobs: BenchmarkJobs) -> str:
        try:
            return jobs.submit("hpo-lay", Mode.LEXICAL, 10, None, max_queued=3).id
        except RateLimited as refused:
            assert refused.detail == (
                "3 benchmark runs are queued, at most 3 (match.max_queued_jobs); try again once one has finished"
            )
            return "refused"

    answers = _together(*(lambda jobs=jobs: submit(jobs) for jobs in [first, second] * 4))
    accepted = [answer for answer in answers if answer != "refused"]
    assert len(accepted) == 3
    assert {job.id for job in second.latest(10)} == set(accepted)  # each process sees every job
    assert first.get(accepted[0]) == second.get(accepted[0])


def test_finished_benchmark_jobs_beyond_the_kept_are_forgotten(
    benchmark_process: Callable[[], BenchmarkJobs], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(benchmark_jobs, "KEPT", 2)
    jobs = benchmark_process()
    old = [jobs.submit("hpo-lay", Mode.LEXICAL, 10, None, max_queued=8).id for _ in range(4)]
    with jobs.engine.begin() as conn:
        conn.execute(update(BenchmarkJobRow).values(status="done", finished_at=now()))
    new = jobs.submit("hpo-lay", Mode.LEXICAL, 10, None, max_queued=8).id
    assert [job.id for job in jobs.latest(10)] == [new, old[3], old[2]]


def test_a_benchmark_job_whose_process_died_fails_and_says_why(benchmark_process: Callable[[], BenchmarkJobs]) -> None:
    dead, alive = benchmark_process(), benchmark_process()
    job = dead.submit("hpo-lay", Mode.LEXICAL, 10, None, max_queued=8)
    assert dead.leases.claim() == job.id
    with dead.engine.begin() as conn:
        ago = now() - timedelta(seconds=dead.leases.lease_s + 1)
        conn.execute(update(BenchmarkJobRow).where(BenchmarkJobRow.id == job.id).values(heartbeat_at=ago))
    assert alive.leases.claim() is None  # handed back as failed: not run again
    failed = alive.get(job.id)
    assert failed is not None and (failed.status, failed.error, failed.finished_at is not None) == ("failed", ABANDONED, True)


def test_a_stopped_process_cancels_its_run_and_its_progress_is_seen_by_the_others(
    benchmark_process: Callable[[], BenchmarkJobs], monkeypatch: pytest.MonkeyPatch
) -> None:
    def evaluate(*args: Any, **kwargs: Any) -> None:
        check = args[7]
        while True:  # one item every 10 ms until the process stops
            check()
            time.sleep(0.01)

    built = SimpleNamespace(items=[None] * 1000, hierarchy=None, candidates=None)
    spec = SimpleNamespace(build=lambda reader: built, system="hpo")
    monkeypatch.setattr(benchmark_jobs, "evaluate", evaluate)
    monkeypatch.setattr(benchmark_jobs, "PROGRESS_S", 0.05)
    runner, other = benchmark_process(), benchmark_process()
    runner._service = lambda: object()  # type: ignore[assignment,return-value]  # never searched: evaluate is replaced
    runner._specs = {"hpo-lay": spec}  # type: ignore[dict-item]
    job = other.submit("hpo-lay", Mode.LEXICAL, 10, None, max_queued=8)  # accepted by another process
    runner.start()
    deadline = time.monotonic() + 30
    while (seen := other.get(job.id)) is not None and seen.done < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert seen is not None and seen.status == "running" and seen.total == 1000 and seen.done >= 5
    runner.stop()
    cancelled = other.get(job.id)
    assert cancelled is not None and (cancelled.status, cancelled.finished_at is not None) == ("cancelled", True)
