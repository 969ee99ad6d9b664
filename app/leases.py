"""Jobs shared by the worker processes through the store: claimed atomically, held under a lease.

Every process runs its own job threads over the same tables (``match_job``, ``benchmark_job``:
columns of :class:`app.tables.LeasedJob`). A process takes a queued job with one conditional
``UPDATE ... WHERE id = ? AND status = 'queued'``: whichever process's update changes the row
owns it, the others see a row count of 0 and look for another. While it works on a job the
process renews the job's ``heartbeat_at`` every ``lease_s / 3`` (a thread of its own, so a long
step never lets the lease lapse), and every write of progress or of the end is conditional on
it still holding the job. A running job whose heartbeat is older than ``lease_s`` was held by a
process that died: the next claim in any process hands it back (the job kind decides how:
queued again, or failed). Times are the processes' clocks (UTC): hosts sharing a store keep
them within seconds of each other.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, or_, select, update
from sqlalchemy.exc import SQLAlchemyError

from app.tables import LeasedJob

log = logging.getLogger("termsearch.jobs")

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"  # a job's states (benchmark runs: also cancelled)
LEASE_S = 30.0  # a running job not renewed for this long is handed back
POLL_S = 1.0  # an idle worker looks this often for jobs other processes accepted


def now() -> datetime:
    return datetime.now(UTC)


def holder_name() -> str:
    """This process, unique across hosts and restarts (a pid is reused): ``host:pid:random``."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Leases:
    """The jobs of one table this process holds. ``expired()`` gives the values a job whose
    holder died gets (``{"status": "queued"}`` to run it again)."""

    def __init__(
        self, engine: Engine, table: type[LeasedJob], expired: Callable[[], dict[str, Any]], lease_s: float = LEASE_S
    ) -> None:
        self.engine = engine
        self.table = table
        self.expired = expired
        self.lease_s = lease_s
        self.holder = holder_name()
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._swept = -float("inf")  # monotonic time of the last look for lapsed leases
        self._stopped = threading.Event()
        self._beat = threading.Thread(target=self._renew_until_stopped, name=f"{table.__tablename__}-lease", daemon=True)

    def start(self) -> None:
        """Renew the held jobs' leases in the background until :meth:`stop`."""
        self._beat.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._beat.is_alive():
            self._beat.join(10.0)

    def claim(self) -> str | None:
        """Take the oldest queued job; None when none is. Lapsed leases are handed back first (at
        most every ``lease_s / 3``); a job another process took meanwhile is passed over."""
        if time.monotonic() - self._swept >= self.lease_s / 3:
            self.expire()
        t = self.table
        while True:
            with self.engine.begin() as conn:
                job_id = conn.scalar(select(t.id).where(t.status == QUEUED).order_by(t.created_at, t.id).limit(1))
                if job_id is None:
                    return None
                at = now()
                taken = conn.execute(
                    update(t)
                    .where(t.id == job_id, t.status == QUEUED)
                    .values(status=RUNNING, holder=self.holder, heartbeat_at=at, updated_at=at)
                ).rowcount
            if taken == 1:
                with self._lock:
                    self._held.add(job_id)
                return job_id

    def held(self, conn: Connection, job_id: str, **values: Any) -> bool:
        """Write ``values`` to ``job_id`` (in ``conn``'s transaction) if this process still holds
        it, renewing its lease; False when it does not (its lease lapsed: leave the job alone)."""
        at = now()
        t = self.table
        return (
            conn.execute(
                update(t)
                .where(t.id == job_id, t.status == RUNNING, t.holder == self.holder)
                .values(**values, heartbeat_at=at, updated_at=at)
            ).rowcount
            == 1
        )

    def write(self, job_id: str, **values: Any) -> bool:
        """:meth:`held` in a transaction of its own."""
        with self.engine.begin() as conn:
            return self.held(conn, job_id, **values)

    def end(self, job_id: str, **values: Any) -> bool:
        """The job is no longer this process's: ``values`` (how it ended) written if it still
        held it. Its lease is not renewed again, even if the store failed: it then lapses."""
        try:
            return self.write(job_id, holder=None, **values)
        finally:
            with self._lock:
                self._held.discard(job_id)

    def release(self) -> None:
        """Every job this process holds back to the queue (it stops, or lost the store mid-job);
        one the store failed to take back is still held (renewed, and released by the next call)."""
        with self._lock:
            held = sorted(self._held)
        for job_id in held:
            self.write(job_id, holder=None, status=QUEUED)
            with self._lock:
                self._held.discard(job_id)

    def renew(self) -> None:
        with self._lock:
            held = list(self._held)
        if held:
            t = self.table
            with self.engine.begin() as conn:
                conn.execute(
                    update(t).where(t.id.in_(held), t.status == RUNNING, t.holder == self.holder).values(heartbeat_at=now())
                )

    def expire(self) -> int:
        """Running jobs whose lease lapsed (their process died), or that never had one (left running
        by a version before leases), get ``expired()``; how many."""
        self._swept = time.monotonic()
        t = self.table
        lapsed = now() - timedelta(seconds=self.lease_s)
        with self.engine.begin() as conn:
            count = conn.execute(
                update(t)
                .where(t.status == RUNNING, or_(t.heartbeat_at < lapsed, t.heartbeat_at.is_(None)))
                .values(**self.expired(), holder=None, updated_at=now())
            ).rowcount
        if count:
            log.warning("%d %s row(s) held by a process that stopped renewing them were handed back", count, t.__tablename__)
        return count

    def _renew_until_stopped(self) -> None:
        while not self._stopped.wait(self.lease_s / 3):
            try:
                self.renew()
            except SQLAlchemyError as exc:  # the job's own writes fail too; the lease lapses if this lasts
                log.warning("%s leases not renewed: the store failed (%s)", self.table.__tablename__, type(exc).__name__)
