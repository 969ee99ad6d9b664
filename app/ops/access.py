"""Who may call, and how often: API keys (constant-time comparison) and a token bucket per client."""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import RateLimited, Unauthorized
from app.ops.middleware import HttpMiddleware

CLIENT_ID = "client_id"  # scope["state"] key: who the rate limiter counts the request against


def presented_key(scope: Scope) -> str | None:
    """The key in ``X-API-Key``, else in ``Authorization: Bearer``."""
    headers = dict(scope["headers"])
    if key := headers.get(b"x-api-key"):
        return key.decode("latin-1")
    scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class ApiKeyMiddleware(HttpMiddleware):
    """401 problem unless the request presents one of ``keys``; ``public_paths`` need none.

    Wrong keys are throttled twice, each time before any comparison (429 with ``Retry-After``):
    - per client and key (``failures``, keyed by address and a digest of the key sent): one wrong
      key repeated from an address runs dry, and the right key from that address still passes;
    - for every client together (``ceiling``, one bucket): guesses spread over many addresses and
      keys are bounded too. While it is empty, only addresses that presented a right key in the
      last ``trust_s`` seconds have their keys compared; others wait.
    """

    def __init__(  # noqa: PLR0913
        self,
        app: ASGIApp,
        keys: Iterable[str],
        public_paths: Iterable[str],
        failures: TokenBuckets,
        ceiling: TokenBuckets,
        trust_s: float = 3600.0,
        max_trusted: int = 10_000,
    ) -> None:
        super().__init__(app)
        self.keys = [key.encode() for key in keys]
        self.public_paths = frozenset(public_paths)
        self.failures, self.ceiling = failures, ceiling
        self.trust_s, self.max_trusted = trust_s, max_trusted
        self._trusted: OrderedDict[str, float] = OrderedDict()  # address -> when a right key last came from it

    def _match(self, presented: str) -> bytes | None:
        """The matching key; every key is compared in full, whatever matches, so the time taken
        says nothing about how close a guess was."""
        candidate, found = presented.encode(), None
        for key in self.keys:
            if hmac.compare_digest(candidate, key):
                found = key
        return found

    def _wait(self, address: str, client: str) -> float:
        """Seconds this guess must wait (0: compare it now)."""
        if wait := self.failures.wait(client):
            return wait
        trusted = self._trusted.get(address)
        if trusted is not None and self.ceiling.clock() - trusted < self.trust_s:
            return 0.0
        return self.ceiling.wait(GLOBAL)

    def _trust(self, address: str) -> None:
        self._trusted.pop(address, None)
        self._trusted[address] = self.ceiling.clock()
        if len(self._trusted) > self.max_trusted:
            self._trusted.popitem(last=False)

    def skip(self, scope: Scope) -> bool:
        return scope["path"] in self.public_paths

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        presented = presented_key(scope)
        address = (scope.get("client") or ("-",))[0]
        client = f"addr:{address}|key:{_digest(presented.encode())}" if presented is not None else ""
        if presented is not None and (wait := self._wait(address, client)):
            retry_after = str(math.ceil(wait))
            detail = f"too many wrong API keys; retry after {retry_after} s"
            await self.refuse(RateLimited(detail, headers={"Retry-After": retry_after}), scope, receive, send)
            return
        key = self._match(presented) if presented is not None else None
        if key is None:
            if presented is not None:
                self.failures.take(client)
                self.ceiling.take(GLOBAL)
            detail = "invalid API key" if presented else "an API key is required: send X-API-Key or Authorization: Bearer"
            challenge = {"WWW-Authenticate": 'Bearer realm="termsearch"'}
            await self.refuse(Unauthorized(detail, headers=challenge), scope, receive, send)
            return
        self._trust(address)
        # The rate limiter counts per key; a digest keeps the key itself out of the state.
        scope.setdefault("state", {})[CLIENT_ID] = "key:" + _digest(key)
        await self.app(scope, receive, send)


GLOBAL = "*"  # the ceiling's one bucket


def _digest(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()[:16]


class TokenBuckets:
    """``rate`` tokens per second up to ``burst`` per client; the least recently seen clients are
    forgotten beyond ``max_clients`` (a forgotten client starts again with a full bucket)."""

    def __init__(self, rate: float, burst: int, max_clients: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.max_clients, self.clock = rate, burst, max_clients, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tokens, at)

    def _tokens(self, client: str, now: float) -> float:
        tokens, at = self._buckets.get(client, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - at) * self.rate)

    def wait(self, client: str) -> float:
        """Seconds until ``client`` has a token (0: it has one now), taking none."""
        tokens = self._tokens(client, self.clock())
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def take(self, client: str) -> float:
        """Take one token: 0 when there was one, else the seconds until there will be."""
        now = self.clock()
        tokens = self._tokens(client, now)
        self._buckets.pop(client, None)
        wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
        self._buckets[client] = (tokens - 1 if wait == 0 else tokens, now)
        if len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)
        return wait


class RateLimitMiddleware(HttpMiddleware):
    """429 problem with ``Retry-After`` when a client's bucket is empty; ``exempt_paths`` (probes,
    metrics) are never limited. A client is its API key when it presented one, else its address."""

    def __init__(self, app: ASGIApp, buckets: TokenBuckets, exempt_paths: Iterable[str]) -> None:
        super().__init__(app)
        self.buckets = buckets
        self.exempt_paths = frozenset(exempt_paths)

    def skip(self, scope: Scope) -> bool:
        return scope["path"] in self.exempt_paths

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("state", {}).get(CLIENT_ID) or "addr:" + (scope.get("client") or ("-",))[0]
        wait = self.buckets.take(client)
        if wait:
            retry_after = str(max(1, math.ceil(wait)))
            detail = f"rate limit of {self.buckets.rate:g} requests/s (burst {self.buckets.burst}) exceeded; retry after {retry_after} s"
            await self.refuse(RateLimited(detail, headers={"Retry-After": retry_after}), scope, receive, send)
            return
        await self.app(scope, receive, send)
