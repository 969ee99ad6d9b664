"""ONNX Runtime encoder: tokenizers + onnxruntime + numpy pooling. Never imports torch.

An int8 model runs in one of two precisions (recorded in each bundle, so that queries are
encoded as its labels were): ``int8`` runs the file as shipped, on the CPU, a text at a time;
``float`` runs its dequantised graph (:mod:`indexer.encoders.dequantize`) in batches, in float16
on CUDA where onnxruntime-gpu offers it, else in float32 on the CPU. ``auto`` picks ``float``
when CUDA is there: the GPU path for encoding millions of labels. The two float forms agree to a
mean cosine of 0.999999 (measured on an H200), so a bundle built on a GPU is served on a CPU.
``int8`` stays on the CPU even where CUDA is offered: there onnxruntime splits its graph between
the devices (85 copies) and rounds differently (min cosine 0.987 against the CPU), 200 times
slower than the float graph.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import onnx
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from indexer.encoders.base import EncoderError
from indexer.encoders.dequantize import float_graph, half_graph
from indexer.encoders.manifest import MODEL_FILE, TOKENIZER_FILE, read_manifest

Precision = Literal["auto", "int8", "float"]
CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
# Texts per batch when the batch size is left at 0: on the H200 CUDA ran 20k texts/s at 64,
# 38k at 1,024; 64 is the CPU's best (bench/RESULTS.md, "Encoder precisions").
DEFAULT_BATCH = {CUDA: 1024, CPU: 64}

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

log = logging.getLogger(__name__)


def providers() -> list[str]:
    """CUDA first when this onnxruntime build has it (onnxruntime-gpu), then the CPU."""
    available = ort.get_available_providers()
    return [p for p in (CUDA, CPU) if p in available]


def _session(model_path: Path, threads: int, graph: bytes | None, on: list[str]) -> ort.InferenceSession:
    """A session over ``model_path``, or over ``graph`` (a serialised model derived from it), on
    the first of the providers ``on`` that works."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # 0 = onnxruntime's default (all cores)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Spinning threads would fight numpy/FAISS for the cores between requests.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    try:
        session = ort.InferenceSession(graph or str(model_path), options, providers=on)
    except Exception as exc:  # onnxruntime raises its own untyped errors for unreadable models
        raise EncoderError(f"cannot load ONNX model {model_path}: {exc}") from exc
    # Without a usable GPU (no device, no driver) onnxruntime falls back to the CPU by itself.
    log.info("ONNX model %s runs on %s", model_path, session.get_providers()[0])
    return session


def _tokenizer(path: Path, max_length: int) -> tuple[Tokenizer, int]:
    """Load a tokenizer that truncates to ``max_length`` and does not pad; also return its pad id."""
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise EncoderError(f"cannot load tokenizer {path}: {exc}") from exc
    padding = tokenizer.padding
    pad_id = padding["pad_id"] if padding else (tokenizer.token_to_id("[PAD]") or 0)
    tokenizer.no_padding()  # we pad each batch to its own longest text
    tokenizer.enable_truncation(max_length)
    return tokenizer, pad_id


class OnnxModel:
    """A transformer ONNX file plus its tokenizer, producing mean-pooled unit vectors."""

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        threads: int = 0,
        max_length: int = 64,
        graph: bytes | None = None,
        on: list[str] | None = None,
    ) -> None:
        self._session = _session(model_path, threads, graph, on or providers())
        self.provider: str = self._session.get_providers()[0]  # where it runs: CUDA or the CPU
        self._tokenizer, self._pad_id = _tokenizer(tokenizer_path, max_length)
        self._inputs = [i.name for i in self._session.get_inputs()]
        unknown = set(self._inputs) - set(_INPUTS)
        if unknown:
            raise EncoderError(f"ONNX model {model_path}: unsupported inputs {sorted(unknown)}")
        output = self._session.get_outputs()[0]
        if not isinstance(output.shape[-1], int):
            raise EncoderError(f"ONNX model {model_path}: output {output.name} has no fixed last dimension")
        self._output = output.name
        self.dimension: int = output.shape[-1]

    def embed(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """Encode in batches of similar length (fewer pad tokens), returning rows in input order."""
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts, not a single string")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        order = np.argsort([len(e.ids) for e in encodings], kind="stable")
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._embed_batch([encodings[i] for i in rows])
        return out

    def _embed_batch(self, encodings: list[Encoding]) -> np.ndarray:
        length = max(len(e.ids) for e in encodings)
        arrays = {name: np.zeros((len(encodings), length), dtype=np.int64) for name in _INPUTS}
        arrays["input_ids"].fill(self._pad_id)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            arrays["input_ids"][row, :n] = e.ids
            arrays["attention_mask"][row, :n] = e.attention_mask
            arrays["token_type_ids"][row, :n] = e.type_ids
        (hidden,) = self._session.run([self._output], {name: arrays[name] for name in self._inputs})
        return mean_pool_normalize(hidden, arrays["attention_mask"])


def mean_pool_normalize(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Average token vectors over the attention mask, then scale each row to unit length."""
    mask = attention_mask[..., None].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


class OnnxEncoder:
    """The production :class:`~indexer.encoders.base.Encoder` over a validated model directory."""

    def __init__(
        self,
        model_dir: Path | str,
        *,
        threads: int = 0,
        batch_size: int = 0,
        max_length: int = 64,
        precision: Precision = "int8",
    ) -> None:
        if batch_size < 0:
            raise ValueError(f"batch_size must be >= 0 (0 = by device), got {batch_size}")
        model_dir = Path(model_dir)
        manifest = read_manifest(model_dir)
        self.model_dir = model_dir
        self.id = manifest.model_id
        self.sha256 = manifest.sha256
        self.dimension = manifest.dimension
        quantized = manifest.quantization.startswith("int8-dynamic")
        if precision == "auto":
            precision = "float" if CUDA in providers() else "int8"
        self.precision: str = precision if quantized else "float"
        # Dynamic int8 quantisation scales activations over the whole batch, so a text's vector
        # would depend on its batch mates: such a model encodes each text alone, and a label
        # embedded at build time gets exactly the vector the same text gets as a query.
        self.alone = self.precision == "int8"
        self.max_length = min(max_length, manifest.max_length)
        self._model = OnnxModel(
            model_dir / MODEL_FILE,
            model_dir / TOKENIZER_FILE,
            threads=threads,
            max_length=self.max_length,
            graph=_float_bytes(model_dir / MODEL_FILE) if quantized and self.precision == "float" else None,
            on=[CPU] if self.alone else providers(),
        )
        self.provider = self._model.provider
        self.batch_size = batch_size or DEFAULT_BATCH.get(self.provider, DEFAULT_BATCH[CPU])
        if self._model.dimension != self.dimension:
            raise EncoderError(
                f"model directory {model_dir}: ONNX output dimension {self._model.dimension}"
                f" does not match the manifest's {self.dimension}"
            )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One vector per text, the same whatever the other texts (batch_size applies to models
        without dynamic quantisation)."""
        return self._model.embed(texts, 1 if self.alone else self.batch_size)

    def __repr__(self) -> str:
        return (
            f"OnnxEncoder(id={self.id!r}, precision={self.precision!r}, dimension={self.dimension},"
            f" model_dir={str(self.model_dir)!r})"
        )


def _float_bytes(model_path: Path) -> bytes:
    """The int8 model's dequantised graph: float16 for CUDA, float32 for the CPU (onnxruntime's
    CPU kernels are float32; float16 there only adds casts)."""
    model = onnx.load(str(model_path))
    return (half_graph(model) if CUDA in providers() else float_graph(model)).SerializeToString()
