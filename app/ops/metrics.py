"""Prometheus metrics: requests and latency per route template, the bundle and encoder served,
process memory and CPU. One registry per app, served at ``GET /metrics``."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import InfoMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from starlette.datastructures import State

# Latency buckets (seconds): autocomplete answers in milliseconds, batch matching takes seconds.
BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

router = APIRouter()


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


class Metrics:
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
        self.registry.register(_BundleCollector(state))
        ProcessCollector(registry=self.registry)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)


@router.get("/metrics", include_in_schema=False)
def metrics(request: Request) -> Response:
    return Response(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
