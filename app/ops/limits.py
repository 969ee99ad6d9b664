"""Costly requests: a request body limit (413) and a per-request time limit (503), whose work
stops at its next check once the caller has been answered (``cancellation``)."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from contextvars import ContextVar

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import PayloadTooLarge, RequestTimeout
from app.ops.middleware import HttpMiddleware

log = logging.getLogger("termsearch")


class BodyLimitMiddleware(HttpMiddleware):
    """Reads the request body (at most ``max_bytes``) before the app sees it; a larger one, by its
    ``Content-Length`` or by what arrives, is answered 413 without reading the rest."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = f"the request body is limited to {self.max_bytes} bytes"
        await self.refuse(PayloadTooLarge(detail, headers={"Connection": "close"}), scope, receive, send)


CANCELLED = "cancelled"  # scope["state"] key: an Event set once the request has timed out


class RequestCancelled(Exception):
    """The request timed out and was answered 503: its work stops here, storing nothing."""


async def cancellation(request: Request) -> threading.Event:
    """A dependency: set once the request has timed out. Long work (evaluations, benchmark runs)
    checks it between items and before storing anything (:func:`check_cancelled`)."""
    return request.scope.setdefault("state", {}).setdefault(CANCELLED, threading.Event())


def check_cancelled(cancelled: threading.Event | None = None) -> None:
    """Stop here if the request timed out: ``cancelled``, else the current request's event
    (work deep in a call, such as a value set's compose, checks the one its request set)."""
    event = cancelled if cancelled is not None else _CURRENT.get()
    if event is not None and event.is_set():
        raise RequestCancelled


_CURRENT: ContextVar[threading.Event | None] = ContextVar("cancelled", default=None)


class TimeoutMiddleware(HttpMiddleware):
    """503 problem when the app has not started answering within ``seconds``, with
    ``Retry-After`` of as many seconds (an immediate retry would only add the same load). A
    worker thread cannot be interrupted: the request's :data:`CANCELLED` event is set, and its
    work stops at its next :func:`check_cancelled`; any answer it still makes is dropped."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        super().__init__(app)
        self.seconds = seconds

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        responded = timed_out = False
        cancelled = scope.setdefault("state", {}).setdefault(CANCELLED, threading.Event())
        _CURRENT.set(cancelled)  # copied into the request's task and its worker threads

        async def guarded_send(message: Message) -> None:
            nonlocal responded
            if timed_out:
                return
            responded = True
            await send(message)

        task = asyncio.ensure_future(self.app(scope, receive, guarded_send))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.seconds)
        except asyncio.CancelledError:  # the server is shutting down
            task.cancel()
            raise
        if done or responded:
            await task
            return
        timed_out = True
        cancelled.set()
        task.cancel()
        task.add_done_callback(_log_failure)
        detail = f"no answer within {self.seconds:g} s; try a smaller request or again later"
        retry_after = str(math.ceil(self.seconds))
        await self.refuse(RequestTimeout(detail, headers={"Retry-After": retry_after}), scope, receive, send)


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a timed-out request failed afterwards", exc_info=task.exception())
