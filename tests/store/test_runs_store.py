"""Match jobs, evaluation runs and subtree queries in the store, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC
from types import SimpleNamespace

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

import app.tables  # noqa: F401 - the app's tables on Base.metadata
from app.evaluations.runs import RunStore
from app.leases import DONE, QUEUED, RUNNING
from app.matching.jobs import JobStore
from app.matching.request import MatchMode, MatchRequest, SourceConcept
from app.matching.result import RunInfo, SystemInfo
from app.search.values import Mode
from evaluation.gold import RankingItem
from evaluation.runner import evaluate_ranking
from indexer.store import StoreReader, load_source, make_engine, migrate
from indexer.store.db import downgrade
from indexer.store.models import Base
from tests.toy import toy_sources


def test_migrations_create_exactly_the_models(store_url: str) -> None:
    migrate(store_url)
    engine = make_engine(store_url)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    downgrade(store_url, "0001")
    with engine.connect() as conn:
        assert {"match_job", "match_job_chunk", "evaluation_run", "benchmark_job"}.isdisjoint(conn.dialect.get_table_names(conn))
    engine.dispose()


def _info(run_id: str, sources: int) -> RunInfo:
    return RunInfo(
        run_id=run_id, mode=MatchMode.DENSE, k=2, min_score=0.0, target=SystemInfo("toy", "http://example.org/toy", "1"),
        target_ancestor=None, source=None, source_ancestor=None, source_prefix="local", source_uri="urn:x:",
        sources=sources, model_id="m", bundle_id="b", created_at="2026-11-21T00:00:00+00:00",
    )


def test_job_round_trip_and_requeue(store_url: str) -> None:
    migrate(store_url)
    store = JobStore(make_engine(store_url))
    request = MatchRequest(target_system="toy", concepts=[SourceConcept(id="a", labels=["x"]), SourceConcept(id="b", labels=["y"])])
    store.create(_info("job-1", 2), request)
    store.create(_info("job-2", 2), request)
    assert store.leases.claim() == "job-1"  # the oldest
    assert store.save_chunk("job-1", 0, 1, [{"id": "a", "label": "x", "candidates": []}])
    job = store.get("job-1")
    assert (job.status, job.done, job.total, job.request, job.info) == (RUNNING, 1, 2, request, _info("job-1", 2))
    assert job.created_at.tzinfo is not None and job.created_at.utcoffset() == UTC.utcoffset(None)
    store.leases.release()  # this process stops: the job is queued again, its chunk kept
    assert store.get("job-1").status == QUEUED and store.chunks("job-1") == 1
    assert not store.save_chunk("job-1", 1, 1, [])  # no longer held: nothing is written
    assert store.leases.claim() == "job-1"
    assert store.save_chunk("job-1", 1, 1, [{"id": "b", "label": "y", "candidates": []}])
    assert store.finish("job-1", DONE)
    done = store.get("job-1")
    assert (done.status, done.done, done.finished_at is not None) == (DONE, 2, True)
    assert [r.id for r in store.run(done).results] == ["a", "b"]
    assert store.get("missing") is None
    store.engine.dispose()


def test_descendants_follow_is_a_recursively(store_url: str) -> None:
    migrate(store_url)
    engine = make_engine(store_url)
    for source in toy_sources():
        load_source(engine, source)
    reader = StoreReader(engine)
    toy = reader.system("toy")
    assert reader.descendants(toy, "T:0") == {"T:1", "T:2", "T:3", "T:4", "T:5", "T:7"}
    assert reader.descendants(toy, "T:1") == {"T:2", "T:3", "T:7"}
    assert reader.descendants(toy, "T:2") == set()
    assert reader.descendants(reader.system("toyicd"), "I21") == {"I21.0"}
    engine.dispose()


def test_evaluation_runs_round_trip(store_url: str) -> None:
    migrate(store_url)
    runs = RunStore(make_engine(store_url))
    report = evaluate_ranking([RankingItem("fast heart rate", ("T:2",), "toy")], lambda q: ["T:3", "T:2"], k=10)
    served = SimpleNamespace(encoder=SimpleNamespace(id="model-a"), bundle=SimpleNamespace(id="bundle-1"))
    saved = runs.save(report, served, "toy", Mode.DENSE, benchmark="toy-lay")  # type: ignore[arg-type]
    later = runs.save(report, served, "toy", Mode.LEXICAL)  # type: ignore[arg-type]
    assert runs.get(saved.id) == saved
    assert saved.items == [{"query": "fast heart rate", "gold": ["T:2"], "rank": 2, "results": ["T:3", "T:2"], "ndcg": None, "overlap": None}]
    assert [(r.id, r.mode, r.benchmark, r.model_id, r.items) for r in runs.list()] == [
        (later.id, "lexical", None, "model-a", None),
        (saved.id, "dense", "toy-lay", "model-a", None),
    ]
    runs.engine.dispose()
