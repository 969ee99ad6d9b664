"""FastAPI application: ``uvicorn app.main:app``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.api import errors
from app.api.routes import concepts, health, search
from app.search.loader import open_search_service
from indexer.bundle import BundleError
from indexer.encoders import Encoder, EncoderError
from indexer.settings import Settings, get_settings
from indexer.store import StoreReader, make_engine

log = logging.getLogger("termsearch")


def create_app(settings: Settings | None = None, encoder: Encoder | None = None) -> FastAPI:
    """``encoder`` replaces the bundled model (tests use the deterministic fake)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = make_engine(settings.store.url)
        app.state.reader = StoreReader(engine)
        app.state.service, app.state.bundle_error = None, None
        try:
            app.state.service = open_search_service(settings, encoder)
            log.info("serving bundle %s", app.state.service.bundle.id)
        except (BundleError, EncoderError) as exc:
            app.state.bundle_error = str(exc)
            log.error("no bundle served: %s", exc)
        yield
        engine.dispose()

    app = FastAPI(
        title="termsearch",
        version="0.1.0",
        summary="Semantic search for clinical terminologies",
        lifespan=lifespan,
    )
    app.state.settings = settings
    errors.install(app)
    for module in (search, concepts, health):
        app.include_router(module.router)
    return app


app = create_app()
