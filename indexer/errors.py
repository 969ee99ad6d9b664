"""The root of every error the indexer reports to its user: the CLI prints any of them as one
line (``error: …``, exit 1), never a traceback."""

from __future__ import annotations


class IndexerError(Exception):
    """A refusal the user can act on; the message says what and where (file and line)."""
