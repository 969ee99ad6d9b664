"""Engines and migrations for the concept store (SQLite by default, PostgreSQL in production)."""

from __future__ import annotations

import math
import socket
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import psycopg
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import ExceptionContext, make_url

from alembic import command
from indexer.settings import StoreSettings

ALEMBIC_DIR = Path(__file__).resolve().parents[2] / "alembic"


def make_engine(url: str, limits: StoreSettings | None = None) -> Engine:
    """An engine over ``url`` that never waits longer than ``connect_timeout_s`` to connect.

    With ``limits`` (the API's store) statements and pool check-outs are bounded too, so a store
    that hangs costs a request a few seconds and at most a pool's worth of threads, never the
    server: PostgreSQL cancels a statement after ``statement_timeout_s``, SQLite waits that long
    for another writer's lock, and a request waits ``pool_timeout_s`` for a connection. A
    PostgreSQL that stops answering altogether cannot cancel anything: :class:`Watchdog` cuts
    such a statement's connection on the client side.
    """
    parsed = make_url(url)
    bounded: dict[str, Any] = {}
    if limits is not None:
        bounded = {"pool_size": limits.pool_size, "max_overflow": limits.max_overflow, "pool_timeout": limits.pool_timeout_s}
    if parsed.get_backend_name() == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            return _with_pragmas(create_engine(url))
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        if limits is not None:
            bounded["connect_args"] = {"timeout": limits.statement_timeout_s}  # the busy timeout
        return _with_pragmas(create_engine(url, **bounded))
    # libpq's connect_timeout is whole seconds, 2 at least; it bounds the whole handshake.
    connect_args: dict[str, Any] = {"connect_timeout": max(2, math.ceil((limits or StoreSettings()).connect_timeout_s))}
    if limits is None:
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    connect_args["options"] = f"-c statement_timeout={round(limits.statement_timeout_s * 1000)}"
    engine = create_engine(url, pool_pre_ping=True, connect_args=connect_args, **bounded)
    Watchdog(limits.statement_timeout_s + WATCHDOG_GRACE_S).watch(engine)
    return engine


WATCHDOG_GRACE_S = 2.0  # past the server's own statement_timeout
WATCHED = "watchdog"  # Connection.info key: the DBAPI connection whose statement is watched


class Watchdog:
    """Shuts down the socket of a PostgreSQL connection whose statement or pre-ping outlasts
    ``seconds``: the server's ``statement_timeout`` needs a server that answers, and one that
    holds the connection without a byte back would otherwise keep the calling thread for good.
    The call then fails as a lost connection, which the pool discards. One daemon thread, shared
    by every watched engine, sweeps the running calls' deadlines (a statement only records its
    deadline: no thread per call, none per engine)."""

    SWEEP_S = 0.25
    _running: ClassVar[dict[int, tuple[float, Any]]] = {}  # id(DBAPI connection) -> (deadline, connection)
    _lock = threading.Lock()
    _sweeper: threading.Thread | None = None

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        with Watchdog._lock:
            if Watchdog._sweeper is None:
                Watchdog._sweeper = threading.Thread(target=Watchdog._sweep, name="store-watchdog", daemon=True)
                Watchdog._sweeper.start()

    def watch(self, engine: Engine) -> None:
        event.listen(engine, "before_cursor_execute", lambda conn, *_: self._arm(conn.connection.dbapi_connection, conn.info))
        event.listen(engine, "after_cursor_execute", lambda conn, *_: self._disarm(conn.info.pop(WATCHED, None)))
        event.listen(engine, "handle_error", self._on_error)
        ping = engine.dialect.do_ping

        def guarded_ping(dbapi_connection: Any) -> bool:
            self._arm(dbapi_connection)
            try:
                return ping(dbapi_connection)
            finally:
                self._disarm(id(dbapi_connection))

        engine.dialect.do_ping = guarded_ping  # type: ignore[method-assign]

    def _arm(self, dbapi_connection: Any, info: dict | None = None) -> None:
        key = id(dbapi_connection)
        if info is not None:
            info[WATCHED] = key  # for the error handler, which cannot reach the DBAPI connection safely
        with self._lock:
            self._running[key] = (time.monotonic() + self.seconds, dbapi_connection)

    def _disarm(self, key: int | None) -> None:
        with self._lock:
            self._running.pop(key, None)

    def _on_error(self, context: ExceptionContext) -> None:
        if context.connection is not None:
            self._disarm(context.connection.info.pop(WATCHED, None))

    @classmethod
    def _sweep(cls) -> None:
        while True:
            time.sleep(cls.SWEEP_S)
            now = time.monotonic()
            with cls._lock:
                due = [key for key, (deadline, _) in cls._running.items() if deadline <= now]
                overdue = [cls._running.pop(key)[1] for key in due]
            for dbapi_connection in overdue:
                _cut(dbapi_connection)


def _cut(dbapi_connection: Any) -> None:
    """Shut the connection's socket down (a shutdown reaches every descriptor of the socket, so
    the thread blocked on it wakes with an error)."""
    try:
        with socket.fromfd(dbapi_connection.fileno(), socket.AF_INET, socket.SOCK_STREAM) as sock:  # a dup
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError, psycopg.Error):  # already closed
        pass


def _with_pragmas(engine: Engine) -> Engine:
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # noqa: ANN001 - DBAPI types
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def migrate(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)
