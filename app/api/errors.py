"""The one place errors become responses: :func:`render` writes any :class:`~app.errors.ApiError`
as RFC 9457 problem JSON (``application/problem+json``), or as a FHIR OperationOutcome
(``application/fhir+json``) for paths under ``/fhir``. :func:`install` routes every other error
(request validation, routing 404/405, store and backend outages, unexpected exceptions) to it.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.api.pages import error_page, is_browse
from app.errors import (
    NO_ROUTE,
    ApiError,
    Conflict,
    InvalidParameter,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    SearchBackendDown,
    StoreUnavailable,
    Unauthorized,
    Unavailable,
    UnsupportedMediaType,
)
from app.fhir.outcome import FHIR_JSON, error_outcome, error_status
from indexer.remote import BackendUnavailable

PROBLEM_JSON = "application/problem+json"
FHIR_PREFIX = "/fhir"
STORE_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError, PoolTimeout)

log = logging.getLogger("termsearch")
# What an HTTPException raised by another layer (Starlette, FastAPI) becomes, by its status.
_BY_STATUS = (Unauthorized, Conflict, PayloadTooLarge, UnsupportedMediaType, RateLimited, Unavailable)
DISK_FULL_SQLSTATE = "53100"  # PostgreSQL's disk_full
DISK_FULL_MESSAGES = ("database or disk is full", "no space left on device", "could not extend file")  # SQLite, OS, PostgreSQL


def disk_full(exc: Exception) -> bool:
    """Whether a store error means its disk is full (SQLite's and PostgreSQL's ways of saying it)."""
    original = getattr(exc, "orig", None)
    if getattr(original, "sqlstate", None) == DISK_FULL_SQLSTATE or getattr(original, "pgcode", None) == DISK_FULL_SQLSTATE:
        return True
    return any(message in str(exc).lower() for message in DISK_FULL_MESSAGES)


class Problem(BaseModel):
    """Error body of every non-FHIR route."""

    type: str
    title: str
    status: int
    detail: str
    param: str | None = None


class OperationOutcomeBody(BaseModel):
    """Error body of every route under ``/fhir`` (an R4 OperationOutcome)."""

    resourceType: str = "OperationOutcome"  # noqa: N815 - the FHIR element name
    issue: list[dict[str, Any]]


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "content": {PROBLEM_JSON: {}}} for status in (400, 404, 405, 413, 415, 422, 503)
}
FHIR_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": OperationOutcomeBody, "content": {FHIR_JSON: {}}} for status in (400, 404, 405, 413, 415, 422, 503)
}


def is_fhir(path: str) -> bool:
    return path == FHIR_PREFIX or path.startswith(f"{FHIR_PREFIX}/")


def render(error: ApiError, path: str) -> Response:
    """``error`` as the caller of ``path`` expects it: an OperationOutcome under /fhir, an HTML page
    under /browse (the browser's pages), else problem JSON."""
    if is_browse(path):
        return error_page(error)
    if is_fhir(path):
        status, body, media_type = error_status(error), error_outcome(error), FHIR_JSON
    else:
        status, media_type = error.status, PROBLEM_JSON
        problem = Problem(type=error.type, title=error.title, status=status, detail=error.detail, param=error.param)
        body = problem.model_dump(exclude_none=True) | error.extra()
    return JSONResponse(body, status_code=status, media_type=media_type, headers=error.headers)


def validation_error(exc: RequestValidationError) -> InvalidParameter:
    """The first error pydantic found, naming its parameter (``concepts.0.labels``)."""
    first = exc.errors()[0]
    location = [str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body", "header")]
    param = ".".join(location) or "body"
    return InvalidParameter(f"{param}: {first['msg']}", param)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at the request's path (HEAD wherever GET: app/api/http.py)."""
    routes = request.app.router.routes
    methods = {
        method
        for method in ("DELETE", "GET", "PATCH", "POST", "PUT")
        if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes)
    }
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def http_error(exc: StarletteHTTPException, request: Request) -> ApiError:
    """Routing's own errors: no route (404), a method the route does not take (405, with Allow)."""
    if exc.status_code == 405:
        allowed = ", ".join(allowed_methods(request))
        return MethodNotAllowed(f"{request.method} is not allowed here; allowed: {allowed}", headers={"Allow": allowed})
    if exc.status_code == 404:
        return NotFound(NO_ROUTE)
    kind = next((kind for kind in _BY_STATUS if kind.status == exc.status_code), ApiError)
    return kind(str(exc.detail), headers=exc.headers)


def install(app: FastAPI) -> None:
    """Exception handlers: every error a route can raise goes through :func:`render`."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return render(exc, request.url.path)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        return render(validation_error(exc), request.url.path)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        return render(http_error(exc, request), request.url.path)

    @app.exception_handler(BackendUnavailable)
    async def _backend(request: Request, exc: BackendUnavailable) -> Response:
        return render(SearchBackendDown(str(exc)), request.url.path)

    async def _store(request: Request, exc: Exception) -> Response:
        """A route that needs the concept store while it cannot be reached (the bundle still serves),
        or while its disk is full (named as such: nothing is wrong with the connection)."""
        if disk_full(exc):
            log.error("concept store: disk full (%s)", type(exc).__name__)
            return render(StoreUnavailable("the concept store's disk is full; free space, then try again"), request.url.path)
        log.warning("concept store unavailable: %s", type(exc).__name__)
        return render(StoreUnavailable("the concept store cannot be reached; try again later"), request.url.path)

    for error in STORE_ERRORS:
        app.add_exception_handler(error, _store)
