"""Feedback events: a user chose a row, flagged one as wrong, or left without choosing.

Stored without who sent them (no address, no key: the route never passes either), purged after
the retention. They may hold clinical text: the queries users typed (docs/OPERATIONS.md)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import Engine, delete, insert
from sqlalchemy.exc import SQLAlchemyError

from app.tables import FeedbackEventRow
from indexer.lexical.normalise import name_key

log = logging.getLogger("termsearch")


class Action(StrEnum):
    CHOSE = "chose"  # the user picked this row
    FLAGGED = "flagged"  # the user says this row is wrong (``wrong`` says what)
    ABANDONED = "abandoned"  # the user left the ranking without choosing (``shown`` 0: nothing was found)


class Surface(StrEnum):
    SEARCH = "search"
    AUTOCOMPLETE = "autocomplete"
    WIDGET = "widget"
    BROWSER = "browser"
    MATCH = "match"
    FHIR = "fhir"


class Wrong(StrEnum):
    NAME = "name"  # the matched name does not belong to the concept (a lent name, a table's row)
    ALIGNMENT = "alignment"  # the alignment that lent the name is wrong: every name it lent


@dataclass(frozen=True)
class Event:
    action: Action
    surface: Surface
    query: str
    system: str | None = None
    scope: dict[str, Any] | None = None
    code: str | None = None
    rank: int | None = None
    shown: int | None = None
    label: str | None = None
    wrong: Wrong | None = None
    reason: str | None = None


class EventStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, event: Event, at: datetime | None = None) -> None:
        values = {name: getattr(event, name) for name in Event.__dataclass_fields__}
        values |= {"at": at or datetime.now(UTC), "query_key": name_key(event.query)[:512]}
        with self.engine.begin() as conn:
            conn.execute(insert(FeedbackEventRow).values(**values))

    def purge(self, retention_days: int, now: datetime | None = None) -> int:
        """Delete the events older than ``retention_days``; how many were deleted."""
        before = (now or datetime.now(UTC)) - timedelta(days=retention_days)
        with self.engine.begin() as conn:
            return conn.execute(delete(FeedbackEventRow).where(FeedbackEventRow.at < before)).rowcount

    def expire(self, retention_days: int) -> None:
        """:meth:`purge`, off the request path (start-up, daily): never raises."""
        try:
            if deleted := self.purge(retention_days):
                log.info("purged %d feedback events older than %d days", deleted, retention_days)
        except SQLAlchemyError as exc:
            log.warning("feedback events not purged: the store did not answer (%s)", type(exc).__name__)
