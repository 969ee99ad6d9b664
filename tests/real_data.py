"""The README's path on the real data, shared by the tests that need it: `python -m indexer setup`
loads HPO and ICD-10-CM into ``DATA_DIR`` and builds a bundle with the shipped model."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
# Kept between local runs (the build is skipped when its inputs are unchanged); CI starts empty.
DATA_DIR = ROOT / "var" / "test-cache" / "end-to-end"


def indexer(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m indexer *args`` on ``DATA_DIR`` with the embedded store."""
    env = {**os.environ, "TERMSEARCH_DATA_DIR": str(DATA_DIR), "TERMSEARCH_STORE__URL": ""}
    return subprocess.run(
        [sys.executable, "-m", "indexer", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1500
    )


def real_client() -> Iterator[TestClient]:
    """A client of the app on the real data, set up first (a module-scoped fixture's body)."""
    setup = indexer("setup")
    assert setup.returncode == 0, setup.stderr[-3000:]
    with TestClient(create_app(Settings(data_dir=DATA_DIR, _env_file=None))) as test_client:
        yield test_client
