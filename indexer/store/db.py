"""Engines and migrations for the concept store (SQLite by default, PostgreSQL in production)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from indexer.settings import StoreSettings

ALEMBIC_DIR = Path(__file__).resolve().parents[2] / "alembic"


def make_engine(url: str, limits: StoreSettings | None = None) -> Engine:
    """An engine over ``url`` that never waits longer than ``connect_timeout_s`` to connect.

    With ``limits`` (the API's store) statements and pool check-outs are bounded too, so a store
    that hangs costs a request a few seconds and at most a pool's worth of threads, never the
    server: PostgreSQL cancels a statement after ``statement_timeout_s``, SQLite waits that long
    for another writer's lock, and a request waits ``pool_timeout_s`` for a connection.
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
    if limits is not None:
        connect_args["options"] = f"-c statement_timeout={round(limits.statement_timeout_s * 1000)}"
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args, **bounded)


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
