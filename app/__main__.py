"""``python -m app [uvicorn options]``: uvicorn serving ``app.main:app`` with the settings' limits.

From ``TERMSEARCH_API__*``: ``--workers`` (worker processes; by default one per usable core),
``--limit-concurrency`` (connections at once per worker, then 503),
``--timeout-graceful-shutdown`` (in-flight requests drain for that long on SIGTERM),
``--timeout-keep-alive``, ``--backlog``, and the httptools protocol with a header timeout
(:mod:`app.ops.connections`: idle and slowloris connections are closed); JSON logs
(``docker/logging.json``) with the app's own access log line instead of uvicorn's. Options given
on the command line win.

Before uvicorn starts its workers, ``PROMETHEUS_MULTIPROC_DIR`` is set to a fresh directory
(removed on exit), so ``/metrics`` counts every worker's requests (:mod:`app.ops.metrics`). The
store is not migrated here: ``python -m indexer migrate`` (or ``setup``) does that, once.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import uvicorn

from app.settings import get_settings
from indexer.settings import ConfigurationError

LOG_CONFIG = Path(__file__).resolve().parents[1] / "docker" / "logging.json"


def uvicorn_args(argv: list[str], app: str = "app.main:app") -> list[str]:
    api = get_settings().api
    defaults = [
        "--workers", str(api.workers),
        "--limit-concurrency", str(api.limit_concurrency),
        "--timeout-graceful-shutdown", str(api.graceful_shutdown_s),
        "--timeout-keep-alive", str(api.keep_alive_s),
        "--backlog", str(api.backlog),
        "--http", "app.ops.connections:GuardedHttpToolsProtocol",
        "--no-access-log",
        "--ws", "none",  # no WebSocket routes: an upgrade is answered as plain HTTP (never swaps the guarded protocol)
        "--log-config", str(LOG_CONFIG),
    ]  # fmt: skip
    return [app, *defaults, *argv]  # click keeps the last value of a repeated option


def main() -> None:
    try:
        args = uvicorn_args(sys.argv[1:])
    except ConfigurationError as exc:  # named by variable, never by value (a key may be a secret)
        sys.exit(f"error: {exc}")
    # Set before any worker imports prometheus_client (it reads the variable then); not imported
    # from app.ops.metrics, which imports it.
    with tempfile.TemporaryDirectory(prefix="termsearch-metrics-") as metrics_dir:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        uvicorn.main.main(args, prog_name="python -m app")


if __name__ == "__main__":
    main()
