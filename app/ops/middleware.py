"""The base of the project's pure-ASGI middlewares: other scopes (lifespan, websocket) and the
requests a middleware skips reach the app untouched; its refusals are rendered by
:func:`app.api.errors.render`, like every other error."""

from __future__ import annotations

from abc import ABC, abstractmethod

from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import render
from app.errors import ApiError


class HttpMiddleware(ABC):
    """Wraps ``app``; each HTTP request it does not :meth:`skip` goes to :meth:`handle`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.skip(scope):
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    def skip(self, scope: Scope) -> bool:
        """Whether this HTTP request passes to the app untouched (none does, unless overridden)."""
        return False

    @abstractmethod
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request, passing it on through ``self.app``."""

    @staticmethod
    async def refuse(error: ApiError, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer with ``error`` as the request's path expects it (problem JSON, or an
        OperationOutcome under /fhir)."""
        await render(error, scope["path"])(scope, receive, send)
