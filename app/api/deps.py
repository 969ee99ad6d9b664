"""Request dependencies: typed access to what the lifespan put on ``app.state``.

They are coroutines: FastAPI runs a plain function dependency in its thread pool, one hop per
dependency per request, for what is an attribute read."""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import Depends, Request

from app.api.errors import Unavailable
from app.ops.limits import cancellation
from app.search.service import SearchService
from app.settings import Settings
from indexer.store import StoreReader


async def _settings(request: Request) -> Settings:
    return request.app.state.settings


async def _service(request: Request) -> SearchService:
    service = request.app.state.service
    if service is None:
        raise Unavailable(f"no search bundle is loaded: {request.app.state.bundle_error}")
    return service


async def _optional_service(request: Request) -> SearchService | None:
    """The search service, or None while no bundle is loaded (for answers the store can give alone)."""
    return request.app.state.service


async def _reader(request: Request) -> StoreReader:
    return request.app.state.reader


SettingsDep = Annotated[Settings, Depends(_settings)]
ServiceDep = Annotated[SearchService, Depends(_service)]
CancelledDep = Annotated[threading.Event, Depends(cancellation)]  # set once the request has timed out
OptionalServiceDep = Annotated[SearchService | None, Depends(_optional_service)]
ReaderDep = Annotated[StoreReader, Depends(_reader)]
