"""What every worker process does to the store as it starts, done by two at once: the feedback
purge (at start and daily) deletes each expired event once and fails neither, on SQLite and
PostgreSQL. (The app does not migrate the store at start: ``python -m indexer migrate`` does.)"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from app.feedback.events import Action, Event, EventStore, Surface
from app.tables import FeedbackEventRow
from indexer.store import make_engine, migrate


def test_two_workers_purging_at_once_delete_each_old_event_once(store_url: str) -> None:
    migrate(store_url)
    first, second = EventStore(make_engine(store_url)), EventStore(make_engine(store_url))
    today = datetime.now(UTC)
    for days in [100] * 30 + [1] * 5:
        first.record(Event(Action.CHOSE, Surface.SEARCH, "fast heart rate"), at=today - timedelta(days=days))
    barrier, deleted = threading.Barrier(2), []

    def purge(store: EventStore) -> None:
        barrier.wait(10)
        deleted.append(store.purge(90))

    threads = [threading.Thread(target=purge, args=(store,)) for store in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(deleted) == 2 and sum(deleted) == 30  # neither failed; together, each old event once
    with first.engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(FeedbackEventRow)) == 5
    for store in (first, second):
        store.engine.dispose()
