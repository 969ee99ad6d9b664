"""``python -m app --workers 2`` over one store and one bundle: a job accepted by one worker is
answered by either, is run once, and ``/metrics`` counts the requests of both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from app.settings import Settings
from bench.common import free_port
from indexer.encoders import SHIPPED_MODEL_DIR, load_encoder
from indexer.pipeline import build_bundle
from indexer.records import CodeSystemInfo
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.toy import ListSource, toy_concepts

# The toy phenotypes as "hpo", so that the built-in benchmark hpo-lay runs on them (4 lay synonyms).
HPO = CodeSystemInfo("hpo", "http://example.org/toy-hpo", "Toy HPO", "2025-01-16")
JOB_ROUTE = "/benchmarks/jobs/{job_id}"


@dataclass
class Served:
    base: str
    metrics_root: Path  # where python -m app makes its metrics directory (TMPDIR)
    process: subprocess.Popen[bytes]
    log: Path


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """The toy "hpo" built with the shipped model, served by ``python -m app --workers 2``."""
    settings = Settings(data_dir=tmp_path / "var", _env_file=None)
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    load_source(engine, ListSource(HPO, toy_concepts()))
    encoder = load_encoder(SHIPPED_MODEL_DIR, settings.encoder)
    build_bundle(settings, StoreReader(engine), encoder, ["hpo"], model_dir=SHIPPED_MODEL_DIR, show_progress=False)
    engine.dispose()
    port, root, log = free_port(), tmp_path / "tmp", tmp_path / "server.log"
    root.mkdir()
    env = {**os.environ, "TERMSEARCH_DATA_DIR": str(settings.data_dir), "TERMSEARCH_API__BUNDLE_CHECK_S": "0"}
    env["TMPDIR"] = str(root)
    command = [sys.executable, "-m", "app", "--workers", "2", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as stderr:
        process = subprocess.Popen(command, env=env, stderr=stderr, start_new_session=True)  # its workers in its group
    server = Served(f"http://127.0.0.1:{port}", root, process, log)
    try:
        _until(lambda: _status(f"{server.base}/ready") == 200, server, "the server to be ready")
        yield server
    finally:
        if process.poll() is None:  # a failed test: the launcher and its workers (a killed launcher leaves them running)
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)


def _status(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.TransportError:
        return None


def _until(condition, server: Served, what: str, seconds: float = 120) -> None:  # noqa: ANN001
    """Generous deadlines: the test machine's 2 cores are shared."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert server.process.poll() is None, f"the server stopped:\n{server.log.read_text()[-3000:]}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}:\n{server.log.read_text()[-3000:]}"
        time.sleep(0.05)


def _requests_per_worker(root: Path, route: str) -> dict[int, float]:
    """GET ``route`` answered 200, per worker pid, from each worker's own counter file."""
    counts = {}
    for path in root.glob("termsearch-metrics-*/counter_*.db"):
        samples = [s for m in MultiProcessCollector.merge([str(path)]) for s in m.samples]
        counts[int(path.stem.split("_")[1])] = sum(
            s.value for s in samples
            if s.name == "termsearch_http_requests_total" and s.labels == {"method": "GET", "route": route, "status": "200"}
        )  # fmt: skip
    return {pid: count for pid, count in counts.items() if count}


def _scraped(base: str) -> tuple[float, set[str]]:
    """From ``/metrics``: GET 200 answers of the job route, and the pids of the live workers."""
    text = httpx.get(f"{base}/metrics", timeout=10).text
    samples = [s for family in text_string_to_metric_families(text) for s in family.samples]
    total = sum(
        s.value for s in samples
        if s.name == "termsearch_http_requests_total" and s.labels == {"method": "GET", "route": JOB_ROUTE, "status": "200"}
    )  # fmt: skip
    return total, {s.labels["pid"] for s in samples if s.name == "process_resident_memory_bytes"}


def _read_from_both(served: Served, location: str, route: str, reads: list[dict]) -> dict:
    """GET ``location`` over a fresh connection each time (either worker may answer) until the
    job is done, read at least 20 times, and both workers have answered it; its last state."""

    def read() -> bool:
        response = httpx.get(location, timeout=30)
        assert response.status_code == 200, response.text  # never 404 from the worker that did not accept it
        reads.append(response.json())
        return reads[-1]["status"] == "done" and len(reads) >= 20 and len(_requests_per_worker(served.metrics_root, route)) == 2

    _until(read, served, f"{location} to be done and read from both workers")
    return reads[-1]


def test_jobs_are_answered_by_every_worker_run_once_and_metrics_count_them_all(served: Served) -> None:
    accepted = httpx.post(f"{served.base}/benchmarks/hpo-lay/run", params={"mode": "lexical"}, timeout=30)
    assert accepted.status_code == 202, accepted.text
    reads: list[dict] = []
    job = _read_from_both(served, f"{served.base}{accepted.headers['location']}", JOB_ROUTE, reads)
    assert job["progress"] == {"done": 4, "total": 4} and job["error"] is None
    runs = httpx.get(f"{served.base}/evaluations", timeout=30).json()
    assert [(run["id"], run["benchmark"], run["count"]) for run in runs] == [(job["run_id"], "hpo-lay", 4)]  # run once

    # The last answer is counted just after it was sent: wait for it, then every scrape agrees.
    _until(lambda: _scraped(served.base)[0] == len(reads), served, "the scrape to count every read")
    per_worker = _requests_per_worker(served.metrics_root, JOB_ROUTE)
    assert len(per_worker) == 2 and sum(per_worker.values()) == len(reads)
    for _ in range(6):  # fresh connections: both workers answer scrapes
        total, pids = _scraped(served.base)
        assert total == len(reads)
        assert pids == {str(pid) for pid in per_worker}

    concepts = [{"id": "a", "labels": ["fast heart rate"]}, {"id": "b", "labels": ["hearing loss"]}]
    body = {"target_system": "hpo", "concepts": concepts}
    accepted = httpx.post(f"{served.base}/match/jobs", json=body, timeout=30)
    assert accepted.status_code == 202, accepted.text
    matched = _read_from_both(served, f"{served.base}{accepted.headers['location']}", "/match/jobs/{job_id}", [])
    assert [result["id"] for result in matched["result"]["results"]] == ["a", "b"]

    directory = next(served.metrics_root.glob("termsearch-metrics-*"))
    served.process.send_signal(signal.SIGTERM)
    served.process.wait(60)
    assert not directory.exists()  # python -m app removes its metrics directory
