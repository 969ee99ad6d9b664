"""Connections that send no complete request are closed: uvicorn's h11 protocol with a header
timeout (``python -m app`` serves with it, ``--http app.ops.connections:GuardedH11Protocol``).

uvicorn closes a kept-alive connection only while it stays silent, and never one that has not
finished its first request, so idle and slowloris connections (a header byte now and then) would
hold a connection slot for ever. Here every connection has ``api.header_timeout_s`` to deliver a
request's headers, from when it opens and again after each response.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from app.settings import get_settings


class GuardedH11Protocol(H11Protocol):
    def __init__(
        self, config: Config, server_state: ServerState, app_state: dict[str, Any], _loop: asyncio.AbstractEventLoop | None = None
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.header_timeout_s = get_settings().api.header_timeout_s
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

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
