"""Operations: limits, authentication, rate limiting, request ids, structured access logs,
Prometheus metrics and bundle hot swap (docs/OPERATIONS.md)."""

from __future__ import annotations

from fastapi import FastAPI

from app.ops import metrics
from app.ops.access import ApiKeyMiddleware, RateLimitMiddleware, TokenBuckets
from app.ops.bundle_watch import BundleWatcher, public_message, watch_bundle
from app.ops.limits import BodyLimitMiddleware, TimeoutMiddleware
from app.ops.observe import ObserveMiddleware
from indexer.settings import Settings

# Never rate limited: orchestrator probes and the metrics scraper.
UNLIMITED_PATHS = ("/health", "/ready", "/metrics")


def install(app: FastAPI, settings: Settings) -> None:
    """Add the middleware stack (outermost first: observe, auth, rate limit, timeout, body limit),
    and the ``/metrics`` route."""
    api = settings.api
    app.state.metrics = metrics.Metrics(app.state)
    app.include_router(metrics.router)
    # Starlette wraps each added middleware around the previous ones: add innermost first.
    app.add_middleware(BodyLimitMiddleware, max_bytes=api.max_body_bytes)
    app.add_middleware(TimeoutMiddleware, seconds=api.request_timeout_s)
    if api.rate_limit_per_s > 0:
        buckets = TokenBuckets(api.rate_limit_per_s, api.rate_limit_burst)
        app.add_middleware(RateLimitMiddleware, buckets=buckets, exempt_paths=UNLIMITED_PATHS)
    if api.auth_enabled:
        failures = TokenBuckets(api.auth_failures_per_s, api.auth_failure_burst)
        app.add_middleware(ApiKeyMiddleware, keys=api.keys, public_paths=api.public_paths, failures=failures)
    app.add_middleware(ObserveMiddleware, metrics=app.state.metrics, routes=app.router.routes)


__all__ = ["BundleWatcher", "install", "public_message", "watch_bundle"]
