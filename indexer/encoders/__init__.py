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
    "SHIPPED_MODEL_DIR",
    "Encoder",
    "EncoderError",
    "FakeEncoder",
    "ModelManifest",
    "OnnxEncoder",
    "ParityError",
    "default_model_dir",
    "ensure_default_model",
    "export_model",
    "load_encoder",
    "read_manifest",
]

# The encoder this repository ships: trained by training/recipes/biolord-minilm.yaml, int8 ONNX
# (docs/MODEL_CARD.md). Indexing with it needs neither torch nor an export step.
SHIPPED_MODEL_DIR = Path(__file__).resolve().parents[2] / "models" / "termsearch-biolord-minilm"


def default_model_dir(settings: EncoderSettings) -> Path:
    """``settings.model_dir`` when set, else the shipped model. Opening it (:func:`load_encoder`)
    checks it against its manifest and names what is wrong."""
    return Path(settings.model_dir) if settings.model_dir else SHIPPED_MODEL_DIR


def load_encoder(
    model_dir: Path | str, settings: EncoderSettings | None = None, precision: str | None = None
) -> OnnxEncoder:
    """Open ``model_dir`` with the runtime options (threads, batch size, max length, precision)
    from ``settings``; ``precision`` overrides the settings' (a bundle's, when serving it)."""
    s = settings or EncoderSettings()
    return OnnxEncoder(
        model_dir,
        threads=s.threads,
        batch_size=s.batch_size,
        max_length=s.max_length,
        precision=precision or s.precision,
    )
