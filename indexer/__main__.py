import sys

from indexer.cli import cli
from indexer.settings import ConfigurationError

try:
    cli()
except ConfigurationError as exc:  # named by variable, never by value
    sys.exit(f"error: {exc}")
