"""Connections that send no complete request are closed, and no client holds more than its share:
uvicorn's httptools protocol with a header timeout and a per-client connection cap (``python -m
app`` serves with it, ``--http app.ops.connections:GuardedHttpToolsProtocol``).

uvicorn closes a kept-alive connection only while it stays silent, and never one that has not
finished its first request, so idle and slowloris connections (a header byte now and then) would
hold a connection slot for ever. Here every connection has ``api.header_timeout_s`` to deliver a
request's headers, from when it opens and again after each response. And one address may hold
``api.max_connections_per_client`` connections open at once in a process: a connection past
that is answered 429 (problem JSON, ``Retry-After``) and closed before any request is read, so
one client re-opening connections cannot take every slot (uvicorn's ``limit_concurrency``) from
the others. httptools (C) parses requests rather than h11 (pure Python), as plain uvicorn does.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from app.api.errors import render
from app.errors import RateLimited
from app.settings import get_settings

_OPEN: Counter[str] = Counter()  # this process's open connections, per client address


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(
        self, config: Config, server_state: ServerState, app_state: dict[str, Any], _loop: asyncio.AbstractEventLoop | None = None
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        api = get_settings().api
        self.header_timeout_s = api.header_timeout_s
        self.max_per_client = api.max_connections_per_client
        self._header_timer: asyncio.TimerHandle | None = None
        self._counted: str | None = None  # the client address this connection is counted for

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "unknown"
        if self.max_per_client and _OPEN[address] >= self.max_per_client:
            self._refuse(transport)
            return
        _OPEN[address] += 1
        self._counted = address
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._counted is not None:
            _OPEN[self._counted] -= 1
            if _OPEN[self._counted] <= 0:
                del _OPEN[self._counted]
            self._counted = None
        super().connection_lost(exc)

    def _refuse(self, transport: asyncio.Transport) -> None:
        """429 and close: the client holds as many connections as one may."""
        detail = (
            f"connections: this address holds {self.max_per_client} open connections, the most one client may; "
            "reuse or close them"
        )
        response = render(RateLimited(detail, headers={"Retry-After": "1"}), "/")
        head = [b"HTTP/1.1 429 Too Many Requests", *(b"%s: %s" % pair for pair in response.raw_headers), b"connection: close"]
        transport.write(b"\r\n".join(head) + b"\r\n\r\n" + bytes(response.body))
        transport.close()

    def on_headers_complete(self) -> None:
        self._disarm()  # a request's headers are in
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # starts a pipelined request whose headers are in, if one waits
        if not self.transport.is_closing() and self.cycle.response_complete:
            self._arm()  # none waits: the next request's headers are due

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()
