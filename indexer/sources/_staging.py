"""A throw-away SQLite database on disk, to sort and join release rows without holding them.

The licensed loaders stream each release file once into a table, index it after the bulk insert,
then read every table ordered by concept key and walk them side by side (:class:`Aligned`): memory
stays at SQLite's page cache plus one concept, whatever the size of the release.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from types import TracebackType
from typing import Any

CACHE_KIB = 64 * 1024  # SQLite page cache (and in-memory sort budget) of the staging database
_PRAGMAS = (
    "journal_mode=OFF",
    "synchronous=OFF",
    "locking_mode=EXCLUSIVE",
    "temp_store=FILE",
    f"cache_size=-{CACHE_KIB}",
)

Row = tuple[Any, ...]


class Staging:
    """A SQLite file in a temporary directory (``TMPDIR``), removed on :meth:`close`."""

    def __init__(self, prefix: str) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix=prefix)
        self.db = sqlite3.connect(Path(self._directory.name) / "staging.db", isolation_level=None)
        for pragma in _PRAGMAS:
            self.db.execute(f"PRAGMA {pragma}")

    def create(self, table: str, columns: str) -> None:
        self.db.execute(f"CREATE TABLE {table} ({columns})")

    def insert(self, table: str, rows: Iterable[Row]) -> None:
        """Bulk-insert ``rows`` in one transaction (rolled back if ``rows`` raises)."""
        width = len(self.db.execute(f"SELECT * FROM {table} LIMIT 0").description)
        self.db.execute("BEGIN")
        try:
            self.db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * width)})", rows)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def index(self, table: str, columns: str) -> None:
        name = f"ix_{table}_{columns.replace(', ', '_')}"
        self.db.execute(f"CREATE INDEX {name} ON {table} ({columns})")

    def rows(self, sql: str, parameters: Iterable[Any] = ()) -> sqlite3.Cursor:
        """The rows of a query, fetched as they are iterated."""
        return self.db.execute(sql, tuple(parameters))

    def close(self) -> None:
        self.db.close()
        self._directory.cleanup()

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def grouped(rows: Iterable[Row]) -> Iterator[tuple[Any, list[Row]]]:
    """``(key, rows)`` for each run of rows sharing their first column."""
    for key, group in groupby(rows, key=itemgetter(0)):
        yield key, list(group)


class Aligned:
    """Rows ordered by their first column (a key), handed out group by group as a driver walks
    ascending keys; groups whose key the driver never asks for are skipped."""

    def __init__(self, rows: Iterable[Row]) -> None:
        self._groups = groupby(rows, key=itemgetter(0))
        self._advance()

    def _advance(self) -> None:
        self._key, self._group = next(self._groups, (None, iter(())))

    def take(self, key: Any) -> list[Row]:
        """The rows whose key is ``key`` (none if it has none)."""
        while self._key is not None and self._key < key:
            self._advance()
        if self._key is None or self._key != key:
            return []
        group = list(self._group)
        self._advance()
        return group
