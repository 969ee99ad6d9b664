"""Error responses of the protective layer: problem JSON, or a FHIR OperationOutcome under ``/fhir``.

The bodies carry a fixed title and a short detail, never an exception message, a stack trace or a
file path (those go to the server log, under the request id).
"""

from __future__ import annotations

from dataclasses import dataclass
from fastapi import Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.api.errors import PROBLEM_JSON
from app.fhir.outcome import FHIR_JSON, operation_outcome

FHIR_PREFIX = "/fhir"


@dataclass(frozen=True)
class ErrorKind:
    status: int
    slug: str  # problem type: /problems/{slug}
    title: str
    fhir_code: str  # OperationOutcome issue type (http://hl7.org/fhir/issue-type)


UNAUTHORIZED = ErrorKind(401, "unauthorized", "Unauthorized", "login")
PAYLOAD_TOO_LARGE = ErrorKind(413, "payload-too-large", "Payload too large", "too-costly")
RATE_LIMITED = ErrorKind(429, "rate-limited", "Too many requests", "throttled")
INTERNAL = ErrorKind(500, "internal-error", "Internal server error", "exception")
STORE_UNAVAILABLE = ErrorKind(503, "store-unavailable", "Concept store unavailable", "transient")
TIMEOUT = ErrorKind(503, "timeout", "Request timed out", "timeout")

STORE_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError, PoolTimeout)


def error_response(path: str, kind: ErrorKind, detail: str, headers: dict[str, str] | None = None) -> Response:
    """The error body a caller of ``path`` expects: OperationOutcome under /fhir, else problem JSON."""
    if path == FHIR_PREFIX or path.startswith(f"{FHIR_PREFIX}/"):
        severity = "fatal" if kind.status >= 500 else "error"
        body, media_type = operation_outcome(detail, kind.fhir_code, None, severity), FHIR_JSON
    else:
        body = {"type": f"/problems/{kind.slug}", "title": kind.title, "status": kind.status, "detail": detail}
        media_type = PROBLEM_JSON
    return JSONResponse(body, status_code=kind.status, media_type=media_type, headers=headers)


async def store_unavailable(request: Request, _: Exception) -> Response:
    """A route that needs the concept store while it cannot be reached (the bundle still serves)."""
    return error_response(request.url.path, STORE_UNAVAILABLE, "the concept store cannot be reached; try again later")
