"""Build benchmark: load HPO + ICD-10-CM into a fresh SQLite store, then build a bundle,
timing each stage. Uses the already exported default model (``make build`` exports it).

Run: ``.venv/bin/python -m bench.bench_build``.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.common import record, rss_mib
from indexer.encoders import OnnxEncoder
from indexer.pipeline import build_bundle
from indexer.settings import Settings, get_settings
from indexer.sources import open_source
from indexer.store import StoreReader, load_source, make_engine, migrate

SYSTEMS = ("hpo", "icd10cm")


def main() -> None:
    model_dir = next(get_settings().models_dir.glob("*/model_manifest.json")).parent
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), _env_file=None)
        migrate(settings.store.url)
        engine = make_engine(settings.store.url)
        rows = []
        for name in SYSTEMS:
            start = time.perf_counter()
            result = load_source(engine, open_source(name))
            seconds = time.perf_counter() - start
            rows.append(f"| load {name} | {seconds:.1f} | {result.concepts / seconds:,.0f} concepts/s |")
        encoder = OnnxEncoder(model_dir, threads=settings.encoder.threads)
        start = time.perf_counter()
        built = build_bundle(settings, StoreReader(engine), encoder, SYSTEMS, model_dir=model_dir)
        total = time.perf_counter() - start
        for stage, seconds in built.seconds.items():
            rate = f"{built.labels / seconds:,.0f} labels/s" if seconds else ""
            rows.append(f"| build: {stage} | {seconds:.1f} | {rate} |")
        rows.append(f"| build total | {total:.1f} | {built.labels:,} labels |")
        _, peak = rss_mib(os.getpid())
    body = "\n".join(["| stage | seconds | rate |", "|---|---|---|", *rows, "", f"Peak RSS of the build: {peak:.0f} MiB."])
    record(f"Build of HPO + ICD-10-CM ({encoder.id})", body, ".venv/bin/python -m bench.bench_build")


if __name__ == "__main__":
    main()
