"""The ranking core's searches run on its own threads: several queries at once rank as each alone
(a text asked twice is searched once), each FAISS search on one core, and a service that is no
longer used (a swapped-out bundle's) lets its threads end."""

from __future__ import annotations

import gc
import threading
import time

import faiss
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from app.search.loader import open_search_service
from app.search.scope import Scope
from app.search.values import Mode
from app.settings import Settings
from indexer.encoders import FakeEncoder
from tests.api.conftest import built  # noqa: F401 - the toy bundle fixture

TOY = Scope(("toy",))
QUERIES = ["fast heart rate", "hearing loss", "fast heart rate", "pnemonia"]


def _rows(ranking) -> list[tuple[int, int, float]]:  # noqa: ANN001
    return [(ranked.row, ranked.label, round(ranked.confidence, 6)) for ranked in ranking.rows]


def test_queries_ranked_together_rank_as_each_alone(built: Settings) -> None:  # noqa: F811
    service = open_search_service(built, FakeEncoder(32))
    for mode in Mode:
        together = service.rank_many(QUERIES, TOY, 5, mode)
        alone = [service.rank(query, TOY, 5, mode) for query in QUERIES]
        assert [_rows(r) for r in together] == [_rows(r) for r in alone]
        assert [r.suggestion for r in together] == [r.suggestion for r in alone]
    assert _rows(together[0])  # the toy bundle finds something


def _core_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("dense")}


def test_an_unused_service_lets_its_threads_end(built: Settings) -> None:  # noqa: F811
    before = _core_threads()
    service = open_search_service(built, FakeEncoder(32))
    service.rank("fast heart rate", TOY)
    started = _core_threads() - before
    assert started and {t.name.split("_")[0] for t in started} == {"dense"}  # BM25 runs on the request's thread
    del service
    gc.collect()
    deadline = time.monotonic() + 5
    while any(t.is_alive() for t in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(t.is_alive() for t in started)


class Broken(Exception):
    pass


def _broken(name: str):  # noqa: ANN202
    def search(*args: object, **kwargs: object) -> None:
        raise Broken(name)

    return search


def test_a_failed_search_is_raised_a_dense_failure_first(built: Settings, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """BM25 runs on the request's thread while the dense search runs on its own: its failure is
    still raised (after the dense search has ended), and when both fail the dense one is."""
    service = open_search_service(built, FakeEncoder(32))
    monkeypatch.setattr(service.bundle.lexical, "search", _broken("lexical"))
    with pytest.raises(Broken, match="lexical"):
        service.rank("fast heart rate", TOY)
    monkeypatch.setattr(service.bundle.vectors, "search", _broken("dense"))
    with pytest.raises(Broken, match="dense"):
        service.rank("hearing loss", TOY)
    assert service.channels.dense_work.submit(lambda: "idle").result() == "idle"  # no search left queued


def test_the_dense_threads_search_faiss_on_one_core(built: Settings) -> None:  # noqa: F811
    """OpenMP's thread count is a thread's own: the dense threads set theirs to one (requests are
    searched side by side), and the caller's stays as it was (a build uses every core)."""
    faiss.omp_set_num_threads(2)
    service = open_search_service(built, FakeEncoder(32))
    service.rank("fast heart rate", TOY, 5, Mode.DENSE)
    dense = [t for t in _core_threads() if t.name.startswith("dense")]
    assert dense and service.channels.dense_work.submit(faiss.omp_get_max_threads).result() == 1
    assert faiss.omp_get_max_threads() == 2


def test_blas_runs_on_the_calling_thread_once_a_service_is_open(built: Settings) -> None:  # noqa: F811
    """A BLAS's own threads, idle between a request's small products, spin on the other core: a
    serving process keeps numpy's to the calling thread (one on OpenMP threads follows the
    thread's OpenMP setting, as FAISS does)."""
    with threadpool_limits(2, user_api="blas"):
        open_search_service(built, FakeEncoder(32))
        own = [pool for pool in threadpool_info() if pool["user_api"] == "blas" and pool.get("threading_layer") != "openmp"]
        assert own and all(pool["num_threads"] == 1 for pool in own)
