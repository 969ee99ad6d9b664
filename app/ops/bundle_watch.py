"""The served bundle: opened at start-up, watched, and hot-swapped.

At start-up the app serves ``{data_dir}/bundles/current``, or, if that does not open, the newest
older bundle that does (``/ready`` degraded, ``checks.reload`` names the refused one). Every
``api.bundle_check_s`` it looks at ``current``; a new target is opened and verified (every file
hash, the encoder) in a worker thread and served only once that succeeded. A bundle that fails
keeps the old one serving; ``/ready`` names it and why (``checks.reload``), and it is not tried
again until ``current`` points elsewhere or its manifest changes. The served bundle's files are
in memory (or a private copy), so changing them on disk changes nothing served; the watcher
notices it (size and mtime against those verified) and ``/ready`` says so (``checks.files``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from fastapi import FastAPI
from starlette.datastructures import State

from app.feedback.events import EventStore
from app.search.loader import open_search_service
from app.settings import Settings
from indexer.bundle import MANIFEST, current_bundle
from indexer.encoders import Encoder

log = logging.getLogger("termsearch")

DAY_S = 86_400.0
Stamp = tuple[Path, int]  # bundle directory, manifest mtime (ns)
FileStamps = dict[str, tuple[int, int]]  # a bundle's files: relative path -> (size, mtime ns)


def public_message(text: str, settings: Settings) -> str:
    """``text`` with the data directory written as ``{data_dir}``: no host paths in API bodies."""
    for prefix in {str(settings.data_dir.resolve()), str(settings.data_dir)}:
        text = text.replace(prefix, "{data_dir}")
    return text


def open_at_start(state: State, settings: Settings, encoder: Encoder | None = None) -> None:
    """Serve ``current``, else the newest older bundle that opens (``reload_error`` says why
    ``current`` was refused); with none, ``bundle_error`` says why and nothing is served."""
    state.service = state.bundle_error = state.reload_error = state.files_error = None
    current = current_bundle(settings.bundles_dir)
    older = sorted((p for p in _bundles(settings) if p != current), key=lambda p: p.name, reverse=True)
    refused: str | None = None
    for directory in [current, *older]:
        try:
            state.service = open_search_service(settings, encoder, directory)
        except Exception as exc:  # noqa: BLE001 - whatever is wrong with one bundle, try the next
            message = public_message(f"bundle {directory.name if directory else '(none)'} refused: {exc}", settings)
            log.error(message)
            refused = refused or message
            if directory is None:  # no bundle at all
                state.bundle_error = public_message(str(exc), settings)
                return
            continue
        log.info("serving bundle %s", state.service.bundle.id)
        state.reload_error = refused
        return
    state.bundle_error = refused


def _bundles(settings: Settings) -> list[Path]:
    """Published bundle directories (each with a manifest)."""
    root = settings.bundles_dir
    return [p.resolve() for p in root.iterdir() if not p.is_symlink() and (p / MANIFEST).is_file()] if root.is_dir() else []


def _file_stamps(directory: Path, names: Iterable[str]) -> FileStamps:
    stamps = {}
    for name in names:
        try:
            stat = (directory / name).stat()
            stamps[name] = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            stamps[name] = (-1, -1)
    return stamps


def _stamp(directory: Path) -> Stamp:
    manifest = directory / MANIFEST
    return directory, manifest.stat().st_mtime_ns if manifest.exists() else 0


class BundleWatcher:
    def __init__(self, state: State, settings: Settings, encoder: Encoder | None = None) -> None:
        self.state = state
        self.settings = settings
        self.encoder = encoder
        current = current_bundle(settings.bundles_dir)
        served = state.service.bundle.directory if state.service else None
        # A bundle that failed at start-up is not verified again until it changes.
        self._failed: Stamp | None = _stamp(current) if current and current != served else None
        self._files = self._verified_files()

    def _verified_files(self) -> FileStamps:
        service = self.state.service
        return _file_stamps(service.bundle.directory, service.bundle.manifest.files) if service else {}

    def check(self) -> None:
        """Switch to ``current`` if it is new and opens; never raises (the old bundle keeps serving)."""
        target = current_bundle(self.settings.bundles_dir)
        service = self.state.service
        if service is not None:
            now = _file_stamps(service.bundle.directory, self._files)
            changed = [name for name, stamp in now.items() if stamp != self._files[name]]
            self.state.files_error = (
                f"files of bundle {service.bundle.id} changed on disk since they were verified: {', '.join(changed[:5])}"
                if changed
                else None
            )
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
        self.state.files_error, self._failed, self._files = None, None, self._verified_files()
        log.info("switched to bundle %s (encoder %s)", opened.bundle.id, opened.encoder.id)

    async def run(self, interval_s: float) -> None:
        """Every ``interval_s``: :meth:`check`; what curators decided since (in any worker); once a
        day, the feedback events past their retention purged (the app purged at start)."""
        purged = time.monotonic()
        while True:
            await asyncio.sleep(interval_s)
            await asyncio.to_thread(self.check)
            if (learning := getattr(self.state, "learning", None)) is not None:
                await asyncio.to_thread(learning.refresh, self.state.service)
            if self.settings.feedback.enabled and time.monotonic() - purged >= DAY_S:
                purged = time.monotonic()
                await asyncio.to_thread(EventStore(self.state.reader.engine).expire, self.settings.feedback.retention_days)


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
