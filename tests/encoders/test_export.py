from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.encoders import EncoderError, ParityError, ensure_default_model, export, export_model, read_manifest
from indexer.encoders.export import FP32_MIN_COSINE, INT8_MEAN_COSINE, check_parity, default_source_dir
from indexer.encoders.manifest import MODEL_FILE, sha256_file


def _leftovers(parent: Path) -> list[str]:
    """Hidden build or swap directories an export may have left next to its output."""
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


# --- parity function -------------------------------------------------------------------------


def _noisy_pair(noise: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    reference = rng.normal(size=(50, 16))
    return reference, reference + noise * rng.normal(size=reference.shape)


def test_check_parity_passes_and_reports() -> None:
    stats = check_parity(*_noisy_pair(0.01), label="test", min_cosine=0.99, mean_cosine=0.99)
    assert 0.99 <= stats.min <= stats.mean <= 1.0


@pytest.mark.parametrize("threshold", ["min_cosine", "mean_cosine"])
def test_check_parity_impossible_threshold(threshold: str) -> None:
    with pytest.raises(ParityError, match=rf"test: {threshold[:-7]} cosine 0\.\d{{6}} < 1\.001 over 50 texts \(mean"):
        check_parity(*_noisy_pair(0.01), label="test", **{threshold: 1.001})


def test_check_parity_shape_mismatch() -> None:
    with pytest.raises(ParityError, match="shapes"):
        check_parity(np.ones((2, 3)), np.ones((3, 3)), label="test")


# --- export orchestration without torch ----------------------------------------------------------


def test_export_requires_parity_texts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="parity_texts"):
        export_model(default_source_dir(), tmp_path / "m", model_id="m", parity_texts=[])


def test_failed_export_leaves_nothing_and_keeps_the_old_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(_: Path) -> None:
        raise RuntimeError("interrupted")

    monkeypatch.setattr(export, "_load_sentence_transformer", fail)
    old = tmp_path / "m"
    old.mkdir()
    (old / "keep").write_text("previous model")
    with pytest.raises(RuntimeError, match="interrupted"):
        export_model(default_source_dir(), old, model_id="m", parity_texts=["Tachycardia"])
    assert (old / "keep").read_text() == "previous model"
    assert _leftovers(tmp_path) == []


def test_replace_dir_swaps_in_the_build(tmp_path: Path) -> None:
    build, out = tmp_path / ".m.building", tmp_path / "m"
    for path, content in ((build, "new"), (out, "old")):
        path.mkdir()
        (path / "file").write_text(content)
    export._replace_dir(build, out)
    assert (out / "file").read_text() == "new"
    assert _leftovers(tmp_path) == []


def test_ensure_default_model_exports_when_invalid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []
    monkeypatch.setattr(export, "export_model", lambda source, out, **kwargs: calls.append(out) or out)
    (tmp_path / export.DEFAULT_MODEL_ID).mkdir()  # present but empty: invalid
    assert ensure_default_model(tmp_path, ["Tachycardia"]) == tmp_path / export.DEFAULT_MODEL_ID
    assert calls == [tmp_path / export.DEFAULT_MODEL_ID]


# --- the real export -------------------------------------------------------------------------------


@pytest.mark.model
def test_default_model_manifest(model_dir: Path, hpo_labels: list[str]) -> None:
    manifest = read_manifest(model_dir)
    assert manifest.model_id == "all-MiniLM-L6-v2-onnx-int8"
    assert manifest.base_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert (manifest.dimension, manifest.max_length) == (384, 256)
    assert (manifest.pooling, manifest.normalize) == ("mean", True)
    assert manifest.quantization == "int8-dynamic-per-channel"
    assert manifest.sha256 == sha256_file(model_dir / MODEL_FILE)
    assert manifest.inputs == ["input_ids", "attention_mask", "token_type_ids"]
    assert manifest.export["opset"] >= 17
    parity = manifest.parity
    assert parity.texts == len(hpo_labels)
    assert parity.fp32_min_cosine >= FP32_MIN_COSINE
    assert parity.int8_mean_cosine is not None and parity.int8_mean_cosine >= INT8_MEAN_COSINE
    assert parity.thresholds == {"fp32_min_cosine": FP32_MIN_COSINE, "int8_mean_cosine": INT8_MEAN_COSINE}


@pytest.mark.model
def test_default_model_dir_contents(model_dir: Path) -> None:
    files = {p.name for p in model_dir.iterdir()}
    assert {"model.onnx", "tokenizer.json", "model_manifest.json"} <= files
    assert not any("fp32" in name for name in files)
    assert _leftovers(model_dir.parent) == []


@pytest.mark.model
def test_ensure_default_model_reuses_a_valid_dir(model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_export(*args: object, **kwargs: object) -> Path:
        raise AssertionError("should not re-export")

    monkeypatch.setattr(export, "export_model", no_export)
    assert ensure_default_model(model_dir.parent, ["Tachycardia"]) == model_dir


@pytest.mark.model
def test_export_fails_parity_with_an_impossible_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hpo_labels: list[str]
) -> None:
    monkeypatch.setattr(export, "FP32_MIN_COSINE", 1.001)
    expected = r"ONNX fp32 vs PyTorch: min cosine [01]\.\d{6} < 1\.001 over 50 texts"
    with pytest.raises(ParityError, match=expected) as info:
        export_model(default_source_dir(), tmp_path / "m", model_id="m", parity_texts=hpo_labels[:50])
    assert isinstance(info.value, EncoderError)
    assert list(tmp_path.iterdir()) == []
