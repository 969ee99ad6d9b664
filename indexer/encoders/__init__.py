"""Encoders: text → unit vectors. Importing this package never imports torch (see ``export``)."""

from __future__ import annotations

from pathlib import Path

from indexer.encoders.base import Encoder, EncoderError
from indexer.encoders.export import ParityError, ensure_default_model, export_model
from indexer.encoders.fake import FakeEncoder
from indexer.encoders.manifest import ModelManifest, read_manifest
from indexer.encoders.onnx import OnnxEncoder
from indexer.settings import EncoderSettings

__all__ = [
    "Encoder",
    "EncoderError",
    "FakeEncoder",
    "ModelManifest",
    "OnnxEncoder",
    "ParityError",
    "ensure_default_model",
    "export_model",
    "load_encoder",
    "read_manifest",
]


def load_encoder(model_dir: Path | str, settings: EncoderSettings | None = None) -> OnnxEncoder:
    """Open ``model_dir`` with the runtime options (threads, batch size, max length) from ``settings``."""
    s = settings or EncoderSettings()
    return OnnxEncoder(model_dir, threads=s.threads, batch_size=s.batch_size, max_length=s.max_length)
