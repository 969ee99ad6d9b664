"""FastAPI application: ``uvicorn app.main:app``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from app import ops
from app.api import errors, http
from app.api.fhir_examples import with_examples
from app.api.routes import browse, concepts, evaluations, feedback, fhir, health, match, search, web
from app.evaluations.jobs import BenchmarkJobs
from app.feedback.events import EventStore
from app.feedback.overlay import Learning
from app.matching.jobs import JobRunner, JobStore
from app.ops.bundle_watch import open_at_start
from app.settings import Settings, get_settings
from evaluation.benchmarks import BENCHMARKS
from indexer.bundle import Bundle
from indexer.encoders import Encoder
from indexer.store import StoreReader, make_engine


def create_app(settings: Settings | None = None, encoder: Encoder | None = None) -> FastAPI:
    """``encoder`` replaces the bundled model (tests use the deterministic fake)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = make_engine(settings.store.url, settings.store)  # bounded: a hung store never blocks start-up
        app.state.reader = StoreReader(engine)
        app.state.learning = Learning(engine)  # what curators approved, on every bundle served
        open_at_start(app.state, settings, encoder)  # current, else the newest older bundle that opens
        app.state.learning.refresh(app.state.service)
        if settings.feedback.enabled:
            EventStore(engine).expire(settings.feedback.retention_days)
        app.state.jobs = JobRunner(JobStore(engine), lambda: app.state.service, app.state.reader, settings)
        app.state.jobs.start()  # takes queued jobs, and those whose process died once their lease lapses
        app.state.benchmark_jobs = BenchmarkJobs(lambda: app.state.service, app.state.reader, BENCHMARKS)
        app.state.benchmark_jobs.start()
        async with ops.watch_bundle(app, settings, encoder):
            yield
        app.state.jobs.stop()
        app.state.benchmark_jobs.stop()
        engine.dispose()

    app = FastAPIOffline(  # /docs and /redoc with their assets served here (pinned in the package), no CDN
        static_url="/web/docs",
        title="termsearch",
        version="0.1.0",
        summary="Semantic search for clinical terminologies",
        lifespan=lifespan,
    )
    app.state.settings = settings
    # The FHIR routes' examples name what the served bundle holds (a base description, cached, then those).
    base_openapi = app.openapi
    app.openapi = lambda: with_examples(base_openapi(), _served_bundle(app))  # type: ignore[method-assign]
    errors.install(app)
    ops.install(app, settings)
    http.install(app)  # after ops: HEAD and the security headers cover their answers too
    # Off, learning from use has no route (404) and stores nothing; /benchmarks/usage before
    # /benchmarks/{name}/run.
    modules = (feedback,) if settings.feedback.enabled else ()
    for module in (*modules, search, concepts, match, evaluations, health, fhir, web, browse):
        app.include_router(module.router)
    return app


def _served_bundle(app: FastAPI) -> Bundle | None:
    service = getattr(app.state, "service", None)
    return None if service is None else service.bundle


app = create_app()
