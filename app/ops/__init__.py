"""Operations: limits, authentication, rate limiting, CORS, request ids, structured access logs,
Prometheus metrics and bundle hot swap (docs/OPERATIONS.md)."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from app.ops import metrics
from app.ops.access import ApiKeyMiddleware, RateLimitMiddleware, TokenBuckets
from app.ops.bundle_watch import BundleWatcher, public_message, watch_bundle
from app.ops.limits import BodyLimitMiddleware, TimeoutMiddleware
from app.ops.observe import ObserveMiddleware
from app.settings import Settings

# Never rate limited: orchestrator probes and the metrics scraper.
UNLIMITED_PATHS = ("/health", "/ready", "/metrics")
# CORS: the methods the API serves, the request headers a page may send besides the safelisted
# ones (Accept, Accept-Language, Content-Language, Content-Type), and the response headers it may read.
CORS_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE")  # PUT and DELETE: stored ValueSets
CORS_REQUEST_HEADERS = ("Authorization", "X-API-Key", "X-Request-ID")
CORS_EXPOSED_HEADERS = ("Location", "Retry-After", "WWW-Authenticate", "X-Request-ID")


def install(app: FastAPI, settings: Settings) -> None:
    """Add the middleware stack (outermost first: observe, CORS, auth, rate limit, timeout, body
    limit), and the ``/metrics`` route. CORS answers preflights before auth (a browser sends no key
    with them) and adds its headers to refusals (401, 429) too, so a page can read them."""
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
        app.add_middleware(
            ApiKeyMiddleware,
            keys=api.keys,
            public_paths=api.public_paths,
            failures=TokenBuckets(api.auth_failures_per_s, api.auth_failure_burst),
            ceiling=TokenBuckets(api.auth_failures_global_per_s, api.auth_failure_global_burst),
            trust_s=api.auth_trust_s,
        )
    if api.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=api.cors_origins,
            allow_methods=CORS_METHODS,
            allow_headers=CORS_REQUEST_HEADERS,
            expose_headers=CORS_EXPOSED_HEADERS,
        )
    app.add_middleware(ObserveMiddleware, metrics=app.state.metrics, routes=app.router.routes)


__all__ = ["BundleWatcher", "install", "public_message", "watch_bundle"]
