"""Indexes that live in another service (Elasticsearch): the error they raise when it cannot
answer, and the wrapper that answers from the bundle's embedded copy meanwhile.

Nothing here imports a client library, so the app can catch these without the optional extras.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

log = logging.getLogger(__name__)

Q = TypeVar("Q")
R = TypeVar("R")


class BackendUnavailable(RuntimeError):
    """A remote index cannot answer now (unreachable, timed out, index missing, cluster failing)."""


@runtime_checkable
class RemoteIndex(Protocol):
    backend: str

    def ping(self) -> None:
        """Raise :class:`BackendUnavailable` unless the index can answer queries now."""
        ...


class Searchable(Protocol[Q, R]):
    backend: str

    def search(self, query: Q, k: int, id_range: tuple[int, int] | None = None, **options: Any) -> R: ...


class WithFallback(Generic[Q, R]):
    """Searches ``primary``; while it is unavailable, ``fallback`` answers the same query.

    After a failure the primary is left alone for ``recheck_seconds``, so that each request
    does not wait for a connection timeout first. Works for both roles: lexical (text queries)
    and vector (query vectors) share the ``search(query, k, id_range)`` shape; a role's own
    options (the vectors' ``allowed``) pass through to both.
    """

    def __init__(self, primary: Searchable[Q, R], fallback: Searchable[Q, R], recheck_seconds: float = 5.0) -> None:
        self.primary = primary
        self.fallback = fallback
        self.backend = primary.backend
        self._recheck_seconds = recheck_seconds
        self._down_until = 0.0

    def search(self, query: Q, k: int, id_range: tuple[int, int] | None = None, **options: Any) -> R:
        if time.monotonic() >= self._down_until:
            try:
                result = self.primary.search(query, k, id_range, **options)
            except BackendUnavailable as exc:
                if not self._down_until:
                    log.warning("%s; answering from the embedded %s index", exc, self.fallback.backend)
                self._down_until = time.monotonic() + self._recheck_seconds
            else:
                if self._down_until:
                    log.warning("%s answers again", self.primary.backend)
                self._down_until = 0.0
                return result
        return self.fallback.search(query, k, id_range, **options)


def backend_status(index: Any) -> dict[str, Any]:
    """What ``/ready`` shows for one index: remote ones are asked, embedded ones are always up."""
    primary = index.primary if isinstance(index, WithFallback) else index
    status: dict[str, Any] = {"backend": index.backend, "up": True}
    if isinstance(primary, RemoteIndex):
        try:
            primary.ping()
        except BackendUnavailable as exc:
            status.update(up=False, error=str(exc))
    if isinstance(index, WithFallback):
        status["fallback"] = index.fallback.backend
    return status
