"""HTTP hygiene shared by every route: request bodies and query strings read one way, HEAD wherever
GET is served, and security headers on every answer.

- :class:`Route` (the ``route_class`` of every router): a repeated query parameter is refused
  (outside ``/fhir``, whose operations read repeats themselves), a JSON body is read by
  :func:`read_json` before FastAPI validates it, and a plain function's answer is checked and
  written on the event loop (:func:`on_the_thread_pool`).
- :func:`read_json`: the body must be declared JSON (else 415) and be JSON nested at most
  ``MAX_DEPTH`` deep, holding only valid Unicode text (a lone surrogate such as ``"\\ud800"``, or
  a NUL character, is refused naming its field).
"""

from __future__ import annotations

import functools
import inspect
import json
from collections import Counter
from collections.abc import Callable, Coroutine
from decimal import Decimal
from email.message import Message as MimeMessage
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.types import Message, Receive, Scope, Send

from app.api.errors import is_fhir
from app.errors import InvalidParameter, MalformedBody, UnsupportedMediaType
from app.ops.middleware import HttpMiddleware

MAX_DEPTH = 32  # nesting of a JSON body: a FHIR Parameters resource needs 6, /match 3
MAX_INT_DIGITS = 100  # digits of a JSON integer: every integer the API takes has a handful

SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
# Data answers (JSON, TSV, problem JSON) load nothing; pages (the widget demo, the browser,
# /docs, /redoc, the results page) keep their own inline scripts and styles and load nothing
# from another origin (ReDoc's footer logo from its CDN included), and are never framed.
DATA_CSP = b"default-src 'none'; frame-ancestors 'none'"
PAGE_CSP = b"default-src 'self' 'unsafe-inline' data: blob:; frame-ancestors 'none'"


def is_json_media(content_type: str) -> bool:
    """``application/json``, or any ``application/*+json`` (``application/fhir+json``)."""
    message = MimeMessage()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


def decode_json(raw: bytes, exact: bool = False) -> Any:
    """The JSON value of ``raw``; 400 when it is not JSON or nests too deep, 422 naming the field
    of a string that is not valid Unicode (a lone surrogate). With ``exact`` (FHIR), a decimal is
    a :class:`~decimal.Decimal` as written ("1.10" stays 1.10, :func:`encode_json` writes it so)."""
    try:
        value = json.loads(raw, parse_int=_integer, parse_float=Decimal if exact else float)
    except json.JSONDecodeError as exc:
        raise MalformedBody(f"body: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", "body") from None
    except UnicodeDecodeError:
        raise MalformedBody("body: not UTF-8 text", "body") from None
    except RecursionError:
        raise MalformedBody(f"body: nested deeper than {MAX_DEPTH} levels", "body") from None
    _check_tree(value)
    return value


def _integer(text: str) -> int:
    """A JSON integer, refused past :data:`MAX_INT_DIGITS` digits (converting a long one costs
    quadratic time, and Python refuses those over 4,300 digits)."""
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise MalformedBody(f"body: an integer of {len(text.lstrip('-'))} digits, more than {MAX_INT_DIGITS}", "body")
    return int(text)


def _check_tree(value: Any) -> None:
    """Depth and Unicode of every string (keys included), without recursion."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise MalformedBody(f"body: nested deeper than {MAX_DEPTH} levels", "body")
        if isinstance(item, str):
            _check_text(item, path)
        elif isinstance(item, dict):
            for key, child in item.items():
                _check_text(key, path)
                stack.append((child, (*path, key)))
        elif isinstance(item, list):
            stack.extend((child, (*path, str(number))) for number, child in enumerate(item))


def _check_text(text: str, path: tuple[str, ...]) -> None:
    """Valid Unicode, without NUL (U+0000), which no text here means and PostgreSQL cannot store."""
    param = ".".join(path) or "body"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidParameter(
            f"{param}: not valid Unicode text (a lone surrogate at character {exc.start})", param
        ) from None
    if "\x00" in text:
        raise InvalidParameter(f"{param}: holds a NUL character (U+0000) at character {text.index(chr(0))}", param)


async def read_json(request: Request, exact: bool = False) -> Any:
    """The request's JSON body (``None`` when there is none), checked by :func:`decode_json`."""
    raw = await request.body()
    if not raw:
        return None
    content_type = request.headers.get("content-type")
    if content_type is not None and not is_json_media(content_type):
        raise UnsupportedMediaType(
            f"content-type: expected application/json or application/fhir+json (got {content_type!r})", "content-type"
        )
    return decode_json(raw, exact)


async def read_text(request: Request, media: str) -> str:
    """The request's body as text of the one media type a route takes (else 415), UTF-8."""
    content_type = request.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != media:
        raise UnsupportedMediaType(f"content-type: expected {media} (got {content_type!r})", "content-type")
    raw = await request.body()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidParameter(f"body: not UTF-8 text (byte {exc.start})", "body") from None


def check_single_values(request: Request) -> None:
    """A query parameter given more than once is refused, never silently reduced to one."""
    counts = Counter(name for name, _ in request.query_params.multi_items())
    repeated = next((name for name, count in counts.items() if count > 1), None)
    if repeated is not None:
        raise InvalidParameter(f"{repeated}: given {counts[repeated]} times, allowed once", repeated)


def on_the_thread_pool(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """A plain function endpoint as a coroutine that runs it on the thread pool, as FastAPI would.
    FastAPI sends a plain function's answer to the thread pool a second time, to check it against
    the response model (a microsecond's work, for 0.3 to 0.5 ms of hops a request); a coroutine's
    it checks and writes where it is. The signature, name and annotations stay the function's."""
    if inspect.iscoroutinefunction(endpoint):
        return endpoint

    @functools.wraps(endpoint)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(endpoint, *args, **kwargs)

    return run


class Route(APIRoute):
    """Checks the query string and reads a JSON body (:func:`read_json`) before FastAPI does; a
    plain function endpoint runs :func:`on_the_thread_pool`."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, on_the_thread_pool(endpoint), **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        has_body = self.body_field is not None

        async def checked(request: Request) -> Response:
            if not is_fhir(request.url.path):
                check_single_values(request)
            if has_body:
                body = await read_json(request)
                if body is not None:
                    request._json = body  # Starlette's cache of Request.json(), which FastAPI reads
            return await handler(request)

        return checked


class HeadAsGet(HttpMiddleware):
    """HEAD is answered wherever GET is: the request is served as GET, without the body."""

    def skip(self, scope: Scope) -> bool:
        return scope["method"] != "HEAD"

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


class SecurityHeaders(HttpMiddleware):
    """``nosniff``, no referrer, no framing, and a Content-Security-Policy on every answer."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(raw=list(message.get("headers", [])))
                csp = PAGE_CSP if headers.get("content-type", "").startswith("text/html") else DATA_CSP
                for name, value in [*SECURITY_HEADERS, (b"content-security-policy", csp)]:
                    headers.raw.append((name, value))
                message = {**message, "headers": headers.raw}
            await send(message)

        await self.app(scope, receive, with_headers)


def install(app: FastAPI) -> None:
    """Add after the other middleware: HEAD and the security headers cover their answers too."""
    app.add_middleware(HeadAsGet)
    app.add_middleware(SecurityHeaders)
