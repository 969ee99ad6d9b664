"""/metrics under several workers (prometheus_client's multiprocess mode): a scrape, whichever
worker answers it, sums every worker's counts. Here two workers are two value classes writing
under two pids into one directory, as ``python -m app`` arranges for its workers."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from prometheus_client import values
from prometheus_client.parser import text_string_to_metric_families
from starlette.datastructures import State

from app.ops.metrics import MULTIPROCESS_DIR, Metrics


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_a_scrape_sums_the_counts_of_every_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MULTIPROCESS_DIR, str(tmp_path))
    state = State()
    state.service = SimpleNamespace(bundle=SimpleNamespace(id="bundle-1"), encoder=SimpleNamespace(id="encoder-1"))
    workers = []
    for pid, requests in ((101, 2), (102, 3)):
        monkeypatch.setattr(values, "ValueClass", values.MultiProcessValue(lambda pid=pid: pid))
        workers.append(metrics := Metrics(state))
        for _ in range(requests):
            metrics.observe("GET", "/search", 200, 0.01)
        metrics.requests.labels("POST", "/match/jobs", "202").inc()
    (tmp_path / "worker_4194999.pid").touch()  # a worker that is gone (above Linux's largest pid)

    for scraping in workers:  # the same answer from either worker
        samples = _samples(scraping.scrape().decode())
        assert samples[("termsearch_http_requests_total", (("method", "GET"), ("route", "/search"), ("status", "200")))] == 5
        assert samples[("termsearch_http_requests_total", (("method", "POST"), ("route", "/match/jobs"), ("status", "202")))] == 2
        assert samples[("termsearch_http_request_duration_seconds_count", (("method", "GET"), ("route", "/search")))] == 5
        assert samples[("termsearch_bundle_info", (("bundle_id", "bundle-1"), ("encoder_id", "encoder-1")))] == 1
        # process_* of each live worker, by pid (both "workers" here are this process)
        memory = [labels for name, labels in samples if name == "process_resident_memory_bytes"]
        assert memory == [(("pid", str(os.getpid())),)]
    assert not (tmp_path / "worker_4194999.pid").exists()


def test_one_process_without_the_directory_keeps_its_own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MULTIPROCESS_DIR, raising=False)
    metrics = Metrics(State())
    metrics.observe("GET", "/search", 200, 0.01)
    samples = _samples(metrics.scrape().decode())
    assert samples[("termsearch_http_requests_total", (("method", "GET"), ("route", "/search"), ("status", "200")))] == 1
    assert ("process_resident_memory_bytes", ()) in samples
