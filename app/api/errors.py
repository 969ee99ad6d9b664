"""One error hierarchy, rendered as RFC 9457 problem JSON (``application/problem+json``)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from indexer.remote import BackendUnavailable

PROBLEM_JSON = "application/problem+json"


class Problem(BaseModel):
    """Error body of every non-FHIR route."""

    type: str
    title: str
    status: int
    detail: str
    param: str | None = None


class ApiError(Exception):
    status = 400
    type = "/problems/bad-request"
    title = "Bad request"

    def __init__(self, detail: str, param: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.param = param

    def problem(self) -> Problem:
        return Problem(type=self.type, title=self.title, status=self.status, detail=self.detail, param=self.param)


class InvalidParameter(ApiError):
    status = 422
    type = "/problems/invalid-parameter"
    title = "Invalid parameter"


class NotFound(ApiError):
    status = 404
    type = "/problems/not-found"
    title = "Not found"


class Unavailable(ApiError):
    status = 503
    type = "/problems/unavailable"
    title = "Service unavailable"


class SearchBackendDown(Unavailable):
    """A remote index (Elasticsearch) cannot answer and the bundle has no embedded fallback for it."""

    type = "/problems/backend-unavailable"
    title = "Search backend unavailable"


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "content": {PROBLEM_JSON: {}}} for status in (404, 422, 503)
}


def problem_response(problem: Problem) -> JSONResponse:
    return JSONResponse(problem.model_dump(exclude_none=True), status_code=problem.status, media_type=PROBLEM_JSON)


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return problem_response(exc.problem())

    @app.exception_handler(BackendUnavailable)
    async def _backend(_: Request, exc: BackendUnavailable) -> JSONResponse:
        return problem_response(SearchBackendDown(str(exc)).problem())

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        location = [str(part) for part in first.get("loc", ()) if part not in ("query", "path", "body")]
        param = ".".join(location) or None
        detail = f"{param}: {first['msg']}" if param else first["msg"]
        return problem_response(InvalidParameter(detail, param).problem())

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "HTTP error")
        slug = title.lower().replace(" ", "-")
        return problem_response(
            Problem(type=f"/problems/{slug}", title=title, status=exc.status_code, detail=str(exc.detail))
        )
