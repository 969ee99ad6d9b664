"""The outermost middleware: a request id, one structured log line and the metrics of every
request, and the last line of defence against unhandled exceptions (a 500 without details)."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Sequence

from fastapi.routing import iter_route_contexts
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import InternalError
from app.ops.metrics import Metrics
from app.ops.middleware import HttpMiddleware

REQUEST_ID = "x-request-id"
_VALID_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
UNMATCHED = "unmatched"  # the route label of paths no route serves (bounded label values)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})  # others: "OTHER"

access_log = logging.getLogger("termsearch.access")
log = logging.getLogger("termsearch")


def request_id_of(scope: Scope) -> str:
    """The caller's ``X-Request-ID`` when it is a sane token, else a new one."""
    for name, value in scope["headers"]:
        if name == REQUEST_ID.encode():
            candidate = value.decode("latin-1")
            if _VALID_ID.fullmatch(candidate):
                return candidate
    return uuid.uuid4().hex


def route_template(scope: Scope, routes: Sequence[BaseRoute]) -> str:
    """The path template that serves the request (``/concepts/{system}/{code}``), also for
    requests rejected before routing (401, 413, 429)."""
    route = scope.get("route")
    if route is None:  # FastAPI's included routers are matched through their routes' contexts
        route = next((r for r in iter_route_contexts(routes) if r.matches(scope)[0] is not Match.NONE), None)
    return getattr(route, "path", None) or UNMATCHED


class ObserveMiddleware(HttpMiddleware):
    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Sequence[BaseRoute]) -> None:
        super().__init__(app)
        self.metrics = metrics
        self.routes = routes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        request_id = request_id_of(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status, size, responded = 500, 0, False

        async def send_with_id(message: Message) -> None:
            nonlocal status, size, responded
            if message["type"] == "http.response.start":
                status, responded = message["status"], True
                message["headers"] = [*message.get("headers", []), (REQUEST_ID.encode(), request_id.encode())]
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("unhandled error", extra={"request_id": request_id})
            if responded:  # nothing more can be said
                raise
            error = InternalError(f"an unexpected error occurred (request id {request_id})")
            await self.refuse(error, scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
            route = route_template(scope, self.routes)
            method = scope["method"] if scope["method"] in METHODS else "OTHER"
            self.metrics.observe(method, route, status, seconds)
            access_log.info(
                "request",
                extra={
                    "request_id": request_id,
                    "method": scope["method"],
                    "path": scope["path"],  # never the query string: it holds what users typed
                    "route": route,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 2),
                    "response_bytes": size,
                    "client": (scope.get("client") or ("-",))[0],
                },
            )
