"""The model directory format shared by the exporter, the training package and the runtime.

A model directory holds ``model.onnx`` (transformer only, output ``last_hidden_state``),
``tokenizer.json`` (+ tokenizer config files) and ``model_manifest.json`` (:class:`ModelManifest`).
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from indexer.encoders.base import EncoderError

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
CALIBRATION_FILE = "calibration.json"  # the ranking core's confidence calibration, fitted with this model
MANIFEST_FILE = "model_manifest.json"
FORMAT_VERSION = 1

Quantization = Literal["int8-dynamic-per-channel", "none"]


class ParityMetrics(BaseModel):
    """Cosine agreement measured at export time (per text, between unit vectors)."""

    texts: int
    fp32_min_cosine: float  # ONNX fp32 vs PyTorch
    fp32_mean_cosine: float
    int8_min_cosine: float | None = None  # ONNX int8 vs ONNX fp32; None when not quantised
    int8_mean_cosine: float | None = None
    thresholds: dict[str, float]


class ModelManifest(BaseModel):
    format_version: int = FORMAT_VERSION
    model_id: str
    base_model: str
    dimension: int
    max_length: int  # longest input (in tokens) the model was trained and checked for
    pooling: Literal["mean"] = "mean"
    normalize: Literal[True] = True
    quantization: Quantization
    sha256: str  # of model.onnx
    inputs: list[str]  # ONNX input names, e.g. input_ids, attention_mask, token_type_ids
    export: dict[str, str | int]  # exporter, torch/onnxruntime versions, opset
    parity: ParityMetrics
    created_at: datetime
    # Provenance written by the training package; empty for off-the-shelf models.
    recipe: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    metrics: dict[str, Any] = {}

    def write(self, model_dir: Path) -> None:
        (model_dir / MANIFEST_FILE).write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(model_dir: Path) -> ModelManifest:
    """Validate a model directory (files present, manifest well-formed, hash matching) and return its manifest."""
    for name in (MODEL_FILE, TOKENIZER_FILE, MANIFEST_FILE):
        if not (model_dir / name).is_file():
            raise EncoderError(f"model directory {model_dir}: missing {name}")
    manifest_path = model_dir / MANIFEST_FILE
    try:
        manifest = ModelManifest.model_validate_json(manifest_path.read_bytes())
    except ValidationError as exc:
        raise EncoderError(f"invalid model manifest {manifest_path}: {exc}") from exc
    if manifest.format_version != FORMAT_VERSION:
        raise EncoderError(
            f"model manifest {manifest_path}: format_version {manifest.format_version}, expected {FORMAT_VERSION}"
        )
    actual = sha256_file(model_dir / MODEL_FILE)
    if actual != manifest.sha256:
        raise EncoderError(
            f"model file {model_dir / MODEL_FILE}: sha256 {actual} does not match the manifest's {manifest.sha256}"
        )
    return manifest
