"""Connections that send no complete request are closed, and no client holds more than its share:
uvicorn's h11 protocol with a header timeout and a per-client connection cap (``python -m app``
serves with it, ``--http app.ops.connections:GuardedH11Protocol``).

uvicorn closes a kept-alive connection only while it stays silent, and never one that has not
finished its first request, so idle and slowloris connections (a header byte now and then) would
hold a connection slot for ever. Here every connection has ``api.header_timeout_s`` to deliver a
request's headers, from when it opens and again after each response. And one address may hold
``api.max_connections_per_client`` connections open at once in a process: a connection past
that is answered 429 (problem JSON, ``Retry-After``) and closed before any request is read, so
one client re-opening connections cannot take every slot (uvicorn's ``limit_concurrency``) from
the others.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from app.api.errors import render
from app.errors import RateLimited
from app.settings import get_settings

_OPEN: Counter[str] = Counter()  # this process's open connections, per client address


class GuardedH11Protocol(H11Protocol):
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

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:  # a request's headers are in
            self._disarm()

    def on_response_complete(self) -> None:
        self._arm()  # the next request's headers are due (a pipelined one disarms it at once)
        super().on_response_complete()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _header_timeout(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        try:
            self.conn.send(h11.ConnectionClosed())
        except h11.LocalProtocolError:  # half a request: nothing to say, just close
            pass
        self.transport.close()
