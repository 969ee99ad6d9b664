"""Prometheus metrics: requests and latency per route template, the bundle and encoder served,
process memory and CPU, served at ``GET /metrics``.

One process (tests, ``uvicorn app.main:app``): one registry per app. Under ``python -m app``,
which sets ``PROMETHEUS_MULTIPROC_DIR`` to a fresh directory before any worker starts,
prometheus_client's multiprocess mode: each worker writes its counters and histograms to files
there, and a scrape, whichever worker answers it, sums them over every worker (a worker that
died keeps its counts); ``process_*`` are read from ``/proc`` for each live worker, labelled
with its ``pid``, and the bundle is the answering worker's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import InfoMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from starlette.datastructures import State

# Latency buckets (seconds): autocomplete answers in milliseconds, batch matching takes seconds.
BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

router = APIRouter()
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client reads it when it is first imported
MARK = "worker_"  # in that directory, worker_PID.pid for each worker process (not *.db: no metrics file)


class _BundleCollector(Collector):
    """``termsearch_bundle_info{bundle_id, encoder_id}``, read from the app state at scrape time."""

    def __init__(self, state: State) -> None:
        self._state = state

    def collect(self) -> Iterator[Metric]:
        service = getattr(self._state, "service", None)
        info = InfoMetricFamily("termsearch_bundle", "The bundle and encoder being served")
        if service is not None:
            info.add_metric([], {"bundle_id": service.bundle.id, "encoder_id": service.encoder.id})
        yield info


def _process(pid: int) -> ProcessCollector:
    return ProcessCollector(pid=lambda: pid, registry=None)


class _WorkersCollector(Collector):
    """``process_*`` of every live worker (those that left a mark in ``directory``), each labelled
    with its ``pid``; the marks of workers that are gone are removed."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory

    def _live(self) -> Iterator[int]:
        for mark in sorted(self._directory.glob(f"{MARK}*.pid")):
            pid = int(mark.stem.removeprefix(MARK))
            if Path("/proc", str(pid)).exists():
                yield pid
            else:
                mark.unlink(missing_ok=True)

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for pid in self._live():
            for family in _process(pid).collect():
                merged = families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                for sample in family.samples:
                    merged.add_sample(sample.name, {**sample.labels, "pid": str(pid)}, sample.value)
        yield from families.values()


class Metrics:
    """``registry``: this process's own metrics; :meth:`scrape`: what ``/metrics`` answers."""

    def __init__(self, state: State) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "termsearch_http_requests",
            "HTTP requests by method, route template and status code",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "termsearch_http_request_duration_seconds",
            "Time from the request to the end of the response, by method and route template",
            ["method", "route"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        # Learning from use (app/feedback): what users did, and rankings that found little.
        self.feedback = Counter(
            "termsearch_feedback_events",
            "Feedback events recorded, by action (chose, flagged, abandoned)",
            ["action"],
            registry=self.registry,
        )
        self.weak_rankings = Counter(
            "termsearch_weak_rankings",
            "/search rankings with no row (zero_result) or whose first row is below search.confidence_threshold (low_confidence)",
            ["outcome"],
            registry=self.registry,
        )
        directory = os.environ.get(MULTIPROCESS_DIR)
        if directory is None:
            self.registry.register(_BundleCollector(state))
            ProcessCollector(registry=self.registry)
            self._scraped = self.registry
            return
        (Path(directory) / f"{MARK}{os.getpid()}.pid").touch()
        self._scraped = CollectorRegistry()
        MultiProcessCollector(self._scraped, path=directory)
        self._scraped.register(_BundleCollector(state))
        self._scraped.register(_WorkersCollector(Path(directory)))

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)

    def scrape(self) -> bytes:
        return generate_latest(self._scraped)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    return Response(request.app.state.metrics.scrape(), media_type=CONTENT_TYPE_LATEST)
