"""Hot swap of the served bundle: every ``api.bundle_check_s`` the app looks at
``{data_dir}/bundles/current``; a new target is opened and verified (every file hash, the encoder)
in a worker thread and served only once that succeeded. A bundle that fails keeps the old one
serving; ``/ready`` names it and why (``checks.reload``), and it is not tried again until
``current`` points elsewhere or its manifest changes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from fastapi import FastAPI
from starlette.datastructures import State

from app.search.loader import open_search_service
from indexer.bundle import MANIFEST, current_bundle
from indexer.encoders import Encoder
from indexer.settings import Settings

log = logging.getLogger("termsearch")

Stamp = tuple[Path, int]  # bundle directory, manifest mtime (ns)


def public_message(text: str, settings: Settings) -> str:
    """``text`` with the data directory written as ``{data_dir}``: no host paths in API bodies."""
    for prefix in {str(settings.data_dir.resolve()), str(settings.data_dir)}:
        text = text.replace(prefix, "{data_dir}")
    return text


def _stamp(directory: Path) -> Stamp:
    manifest = directory / MANIFEST
    return directory, manifest.stat().st_mtime_ns if manifest.exists() else 0


class BundleWatcher:
    def __init__(self, state: State, settings: Settings, encoder: Encoder | None = None) -> None:
        self.state = state
        self.settings = settings
        self.encoder = encoder
        state.reload_error = None
        current = current_bundle(settings.bundles_dir)
        # A bundle that failed at start-up is not verified again until it changes.
        self._failed: Stamp | None = _stamp(current) if current and state.service is None else None

    def check(self) -> None:
        """Switch to ``current`` if it is new and opens; never raises (the old bundle keeps serving)."""
        target = current_bundle(self.settings.bundles_dir)
        service = self.state.service
        if target is None or (service is not None and service.bundle.directory == target):
            self.state.reload_error = None
            return
        stamp = _stamp(target)
        if stamp == self._failed:
            return
        try:
            opened = open_search_service(self.settings, self.encoder)
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with the new bundle, keep serving
            self._failed = stamp
            message = public_message(f"bundle {target.name} refused: {exc}", self.settings)
            log.error("%s; still serving %s", message, service.bundle.id if service else "nothing")
            if service is None:
                self.state.bundle_error = message
            else:
                self.state.reload_error = message
            return
        self.state.service, self.state.bundle_error, self.state.reload_error = opened, None, None
        self._failed = None
        log.info("switched to bundle %s (encoder %s)", opened.bundle.id, opened.encoder.id)

    async def run(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            await asyncio.to_thread(self.check)


@asynccontextmanager
async def watch_bundle(app: FastAPI, settings: Settings, encoder: Encoder | None = None) -> AsyncIterator[BundleWatcher]:
    """For the lifespan, once the first bundle is open: the watcher, checking in the background."""
    watcher = BundleWatcher(app.state, settings, encoder)
    app.state.bundle_watcher = watcher
    interval = settings.api.bundle_check_s
    task = asyncio.create_task(watcher.run(interval)) if interval > 0 else None
    try:
        yield watcher
    finally:
        if task is not None:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
