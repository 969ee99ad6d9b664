"""The encoder the repository ships, and how `indexer build` picks its model directory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.encoders import (
    SHIPPED_MODEL_DIR,
    EncoderError,
    default_model_dir,
    load_encoder,
    read_manifest,
)
from indexer.settings import EncoderSettings


def test_the_shipped_model_is_the_default_and_matches_its_manifest() -> None:
    assert default_model_dir(EncoderSettings()) == SHIPPED_MODEL_DIR
    manifest = read_manifest(SHIPPED_MODEL_DIR)  # checks the sha256 of model.onnx
    assert (manifest.model_id, manifest.base_model, manifest.dimension) == (
        "termsearch-biolord-minilm-v2", "all-MiniLM-L6-v2", 384
    )
    assert manifest.quantization.startswith("int8")
    assert (SHIPPED_MODEL_DIR / "model.onnx").stat().st_size < 40 * 2**20


def test_the_shipped_model_puts_a_lay_phrase_nearest_its_concept() -> None:
    encoder = load_encoder(SHIPPED_MODEL_DIR)
    query, names = encoder.encode(["can't hear well"]), encoder.encode(
        ["Hearing impairment", "Auditory hallucination", "Abnormality of the outer ear"]
    )
    assert int(np.argmax(names @ query[0])) == 0


def test_a_configured_model_directory_wins_and_a_broken_one_is_named(tmp_path: Path) -> None:
    assert default_model_dir(EncoderSettings(model_dir=str(SHIPPED_MODEL_DIR))) == SHIPPED_MODEL_DIR
    with pytest.raises(EncoderError, match=f"model directory {tmp_path}: missing"):
        load_encoder(default_model_dir(EncoderSettings(model_dir=str(tmp_path))))
