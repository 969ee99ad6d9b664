"""A recipe's training data and weights in files small enough to carry to a GPU machine and back.

The data (``data.npz``) is every distinct text once, as token ids (``uint16``, with offsets), and
each dataset as rows of text numbers, so a row of three texts costs 12 bytes: the uncapped HPO +
ICD-10-CM data is a few MiB. Weights travel as fp16 safetensors shards of at most
:data:`SHARD_BYTES` each. Tokenising happens here, on the CPU; the GPU loop
(:mod:`training.loop`) needs torch and transformers only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

DATA = "data.npz"
SHARD_BYTES = 16 * 2**20
SHARDS = "weights-*.safetensors"
TRIPLETS = "triplets"  # the dataset trained with the triplet loss, as in the CPU recipe


@dataclass
class Packed:
    """Token ids of ``len(offsets) - 1`` texts; ``datasets`` maps a name to an ``(n, columns)``
    array of text numbers (anchor, positive, negatives...). ``concepts`` holds, for distillation,
    each concept's name and meaning (definition or description) as text numbers, and ``labels``
    an ``(n, 2)`` array of (text, concept row)."""

    tokens: np.ndarray
    offsets: np.ndarray
    datasets: dict[str, np.ndarray]
    concepts: np.ndarray
    labels: np.ndarray

    def text(self, i: int) -> np.ndarray:
        return self.tokens[self.offsets[i] : self.offsets[i + 1]]

    def batch(self, texts: Sequence[int], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``input_ids`` and ``attention_mask`` of ``texts``, padded to the longest."""
        width = max(self.offsets[i + 1] - self.offsets[i] for i in texts)
        ids = np.full((len(texts), width), pad, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for row, i in enumerate(texts):
            tokens = self.text(i)
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        return torch.from_numpy(ids), torch.from_numpy(mask)

    def save(self, out: Path) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        arrays = {f"dataset.{name}": rows for name, rows in self.datasets.items()}
        np.savez_compressed(
            out / DATA, tokens=self.tokens, offsets=self.offsets, concepts=self.concepts, labels=self.labels, **arrays
        )
        return out / DATA

    @classmethod
    def load(cls, directory: Path) -> Packed:
        with np.load(directory / DATA) as files:
            datasets = {key.removeprefix("dataset."): files[key] for key in files.files if key.startswith("dataset.")}
            return cls(files["tokens"], files["offsets"], datasets, files["concepts"], files["labels"])


class TextTable:
    """Numbers distinct texts in order of first use and tokenises them once."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.numbers.setdefault(text, len(self.numbers))

    def rows(self, rows: Iterable[Sequence[str]]) -> np.ndarray:
        out = [[self(text) for text in row] for row in rows]
        return np.asarray(out, dtype=np.int32) if out else np.zeros((0, 0), dtype=np.int32)

    def tokens(self, tokenizer, max_length: int) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
        """Concatenated token ids (special tokens included, truncated to ``max_length``) and offsets."""
        if len(tokenizer) > np.iinfo(np.uint16).max:
            raise ValueError(f"a vocabulary of {len(tokenizer)} tokens does not fit uint16")
        ids = tokenizer(list(self.numbers), truncation=True, max_length=max_length)["input_ids"]
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(row) for row in ids])
        return np.fromiter((t for row in ids for t in row), dtype=np.uint16, count=int(offsets[-1])), offsets


def save_shards(state: Mapping[str, torch.Tensor], out: Path, names: Iterable[str] | None = None) -> list[Path]:
    """The floating tensors of ``state`` (only ``names`` when given) as fp16 shards of at most
    :data:`SHARD_BYTES`; a tensor larger than that gets a shard of its own."""
    out.mkdir(parents=True, exist_ok=True)
    keep = set(state) if names is None else set(names)
    shards: list[dict[str, torch.Tensor]] = [{}]
    size = 0
    for name in sorted(keep):
        tensor = state[name].detach().to("cpu", torch.float16).contiguous()
        nbytes = tensor.numel() * 2
        if shards[-1] and size + nbytes > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][name] = tensor
        size += nbytes
    paths = [out / SHARDS.replace("*", f"{i:02d}") for i in range(len(shards))]
    for shard, path in zip(shards, paths, strict=True):
        save_file(shard, str(path))
    return paths


def load_shards(directory: Path) -> dict[str, torch.Tensor]:
    """Every tensor of the shards in ``directory``, as float32."""
    paths = sorted(directory.glob(SHARDS))
    if not paths:
        raise FileNotFoundError(f"{directory}: no {SHARDS} files")
    return {name: tensor.float() for path in paths for name, tensor in load_file(str(path)).items()}


def write_meta(out: Path, meta: dict) -> None:
    (out / "pack.json").write_text(json.dumps(meta, indent=2))


def read_meta(directory: Path) -> dict:
    return json.loads((directory / "pack.json").read_text())
