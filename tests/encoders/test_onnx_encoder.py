from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from indexer.encoders import EncoderError, OnnxEncoder, load_encoder, read_manifest
from indexer.encoders.manifest import (
    MANIFEST_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    ModelManifest,
    ParityMetrics,
    sha256_file,
)
from indexer.settings import EncoderSettings

# --- model directory validation (no real model needed) -------------------------------------


def _fake_model_dir(tmp_path: Path, model_bytes: bytes, sha256: str | None = None) -> Path:
    (tmp_path / MODEL_FILE).write_bytes(model_bytes)
    (tmp_path / TOKENIZER_FILE).write_text("{}")
    ModelManifest(
        model_id="broken",
        base_model="none",
        dimension=4,
        max_length=16,
        quantization="none",
        sha256=sha256 or sha256_file(tmp_path / MODEL_FILE),
        inputs=["input_ids", "attention_mask"],
        export={},
        parity=ParityMetrics(texts=1, fp32_min_cosine=1.0, fp32_mean_cosine=1.0, thresholds={}),
        created_at=datetime.now(UTC),
    ).write(tmp_path)
    return tmp_path


@pytest.mark.parametrize("missing", [MODEL_FILE, TOKENIZER_FILE, MANIFEST_FILE])
def test_missing_file_names_the_directory(tmp_path: Path, missing: str) -> None:
    (_fake_model_dir(tmp_path, b"not onnx") / missing).unlink()
    with pytest.raises(EncoderError, match=f"{tmp_path}.*missing {missing}"):
        OnnxEncoder(tmp_path)


def test_hash_mismatch_is_refused(tmp_path: Path) -> None:
    _fake_model_dir(tmp_path, b"not onnx", sha256="0" * 64)
    with pytest.raises(EncoderError, match=f"{tmp_path / MODEL_FILE}: sha256 .* does not match"):
        OnnxEncoder(tmp_path)


def test_unreadable_model_is_an_encoder_error(tmp_path: Path) -> None:
    _fake_model_dir(tmp_path, b"not onnx")
    with pytest.raises(EncoderError, match="cannot load ONNX model"):
        OnnxEncoder(tmp_path)


def test_invalid_manifest_is_refused(tmp_path: Path) -> None:
    _fake_model_dir(tmp_path, b"not onnx")
    (tmp_path / MANIFEST_FILE).write_text('{"model_id": "x"}')
    with pytest.raises(EncoderError, match="invalid model manifest"):
        OnnxEncoder(tmp_path)


# --- the real model ----------------------------------------------------------------------------


@pytest.mark.model
def test_identity_comes_from_the_manifest(onnx_encoder: OnnxEncoder, model_dir: Path) -> None:
    manifest = read_manifest(model_dir)
    assert onnx_encoder.id == "all-MiniLM-L6-v2-onnx-int8"
    assert onnx_encoder.sha256 == manifest.sha256 == sha256_file(model_dir / MODEL_FILE)
    assert onnx_encoder.dimension == 384


@pytest.mark.model
def test_shapes_and_unit_norms(onnx_encoder: OnnxEncoder, hpo_labels: list[str]) -> None:
    vectors = onnx_encoder.encode(hpo_labels[:100])
    assert vectors.shape == (100, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert onnx_encoder.encode([]).shape == (0, 384)


@pytest.mark.model
def test_meaning_beats_unrelated(onnx_encoder: OnnxEncoder) -> None:
    query, tachycardia, hearing = onnx_encoder.encode(["fast heart rate", "Tachycardia", "Hearing impairment"])
    assert query @ tachycardia > query @ hearing + 0.2


@pytest.mark.model
def test_length_sorting_preserves_order(model_dir: Path, hpo_labels: list[str]) -> None:
    texts = hpo_labels[:40]
    encoder = OnnxEncoder(model_dir, batch_size=8)
    forward = encoder.encode(texts)
    backward = encoder.encode(texts[::-1])[::-1]
    np.testing.assert_array_equal(forward, backward)


@pytest.mark.model
def test_batch_size_invariance(model_dir: Path, hpo_labels: list[str]) -> None:
    texts = hpo_labels[:64]
    one_by_one = OnnxEncoder(model_dir, batch_size=1).encode(texts)
    batched = OnnxEncoder(model_dir, batch_size=64).encode(texts)
    # The int8 model encodes each text alone (its activation scales would otherwise depend on
    # the batch): the same vector whatever the batch, as the query path and the build need.
    np.testing.assert_array_equal(one_by_one, batched)
    np.testing.assert_array_equal(batched[:5], OnnxEncoder(model_dir).encode(texts[:5]))


@pytest.mark.model
def test_long_text_is_truncated(model_dir: Path) -> None:
    encoder = OnnxEncoder(model_dir, max_length=16)
    long, prefix = encoder.encode(["abnormality of the heart " * 200, "abnormality of the heart " * 4])
    assert encoder.max_length == 16
    assert long @ prefix > 0.99


@pytest.mark.model
def test_max_length_is_capped_by_the_manifest(model_dir: Path) -> None:
    assert OnnxEncoder(model_dir, max_length=512).max_length == read_manifest(model_dir).max_length


@pytest.mark.model
def test_load_encoder_applies_settings(model_dir: Path) -> None:
    encoder = load_encoder(model_dir, EncoderSettings(threads=1, batch_size=8, max_length=32))
    assert (encoder.batch_size, encoder.max_length) == (8, 32)


@pytest.mark.model
def test_corrupt_real_model_is_refused(model_dir: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(model_dir, tmp_path / "copy"))
    with (copy / MODEL_FILE).open("r+b") as f:
        f.seek(1000)
        f.write(b"\x00" * 16)
    with pytest.raises(EncoderError, match="does not match"):
        OnnxEncoder(copy)


@pytest.mark.model
def test_rejects_a_single_string(onnx_encoder: OnnxEncoder) -> None:
    with pytest.raises(TypeError):
        onnx_encoder.encode("fast heart rate")
