"""``python -m app.feedback purge [--days N]``: delete feedback events older than the retention
(``TERMSEARCH_FEEDBACK__RETENTION_DAYS``, or ``--days``); the app also purges at start."""

from __future__ import annotations

from typing import Annotated

import typer

from app.feedback.events import EventStore
from app.settings import get_settings
from indexer.store import make_engine

cli = typer.Typer(add_completion=False, no_args_is_help=True)


@cli.callback()
def main() -> None:
    """Learning from use: the stored feedback events."""


@cli.command()
def purge(days: Annotated[int | None, typer.Option(min=1, help="retention in days (default: the setting)")] = None) -> None:
    """Delete the feedback events older than the retention."""
    settings = get_settings()
    retention = days or settings.feedback.retention_days
    deleted = EventStore(make_engine(settings.store.url, settings.store)).purge(retention)
    typer.echo(f"deleted {deleted} feedback events older than {retention} days")


if __name__ == "__main__":
    cli()
