"""Errors under ``/fhir`` are OperationOutcomes (``application/fhir+json``), never problem JSON.

``FhirError`` (raised by ``app/fhir``) renders its own outcome. Everything else that answers a
``/fhir`` request with problem JSON (unknown route 404, 405, request validation, no bundle 503,
...) is rewritten on its way out by :class:`ProblemsAsOperationOutcome`, so non-FHIR routes keep
their problem JSON and every error layer, present or future, is covered.
"""

from __future__ import annotations

import json

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import PROBLEM_JSON
from app.fhir.outcome import FHIR_JSON, FhirError, outcome_for_status

FHIR_PREFIX = "/fhir"


async def _fhir_error(_: Request, exc: FhirError) -> JSONResponse:
    return JSONResponse(exc.outcome(), status_code=exc.status, media_type=FHIR_JSON)


class ProblemsAsOperationOutcome:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == FHIR_PREFIX or path.startswith(f"{FHIR_PREFIX}/")):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        body = bytearray()

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if MutableHeaders(raw=message["headers"]).get("content-type", "").startswith(PROBLEM_JSON):
                    start = message  # hold it until the body is complete
                    return
            elif start is not None:
                body.extend(message.get("body", b""))
                if message.get("more_body", False):
                    return
                problem = json.loads(body)
                text = problem.get("detail") or problem.get("title") or "error"
                payload = json.dumps(outcome_for_status(start["status"], text)).encode()
                headers = MutableHeaders(raw=list(start["headers"]))
                headers["content-type"] = FHIR_JSON
                headers["content-length"] = str(len(payload))
                await send({**start, "headers": headers.raw})
                await send({"type": "http.response.body", "body": payload})
                return
            await send(message)

        await self.app(scope, receive, rewrite)


def install(app: FastAPI) -> None:
    """Add after the other middleware, so that this one sees their problem JSON too."""
    app.add_exception_handler(FhirError, _fhir_error)
    app.add_middleware(ProblemsAsOperationOutcome)
