"""The serving path (import + encode) must never pull in torch or transformers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

_CHECK = """
import sys
{encode}
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules)
assert not heavy, heavy
"""


def _run(encode: str) -> None:
    code = _CHECK.format(encode=encode)
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_importing_encoders_does_not_import_torch() -> None:
    _run("from indexer.encoders import FakeEncoder\nFakeEncoder().encode(['x'])")


@pytest.mark.model
def test_onnx_encoding_does_not_import_torch(model_dir: Path) -> None:
    _run(f"from indexer.encoders import OnnxEncoder\nOnnxEncoder({str(model_dir)!r}).encode(['fast heart rate'])")
