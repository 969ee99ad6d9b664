"""Build benchmark: load HPO + ICD-10-CM into a fresh SQLite store, then build a bundle,
timing each stage. Builds with the model ``python -m indexer build`` uses (the shipped one
unless ``TERMSEARCH_ENCODER__MODEL_DIR`` names another).

Run: ``.venv/bin/python -m bench.bench_build [--concepts N] [--record]``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.common import record, rss_mib
from indexer.encoders import default_model_dir, load_encoder
from indexer.pipeline import build_bundle
from indexer.records import CodeSystemInfo, Concept
from indexer.settings import Settings
from indexer.sources import open_source
from indexer.store import StoreReader, load_source, make_engine, migrate

SYSTEMS = ("hpo", "icd10cm")


@dataclass
class Release:
    """A release's concepts as a source (the first few only, in a smoke run)."""

    info: CodeSystemInfo
    concepts: Iterable[Concept]

    def __iter__(self) -> Iterator[Concept]:
        return iter(self.concepts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concepts", type=int, help="only the first N concepts of each system (a smoke run)")
    parser.add_argument("--record", action="store_true", help="write the figures into bench/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), _env_file=None)
        migrate(settings.store.url)
        engine = make_engine(settings.store.url)
        rows = []
        for name in SYSTEMS:
            source = open_source(name)
            start = time.perf_counter()
            result = load_source(engine, Release(source.info, itertools.islice(source, args.concepts)))
            seconds = time.perf_counter() - start
            rows.append(f"| load {name} | {seconds:.1f} | {result.concepts / seconds:,.0f} concepts/s |")
        model_dir = default_model_dir(settings.encoder)
        encoder = load_encoder(model_dir, settings.encoder)
        start = time.perf_counter()
        built = build_bundle(settings, StoreReader(engine), encoder, SYSTEMS, model_dir=model_dir)
        total = time.perf_counter() - start
        for stage, seconds in built.seconds.items():
            rate = f"{built.labels / seconds:,.0f} labels/s" if seconds else ""
            rows.append(f"| build: {stage} | {seconds:.1f} | {rate} |")
        rows.append(f"| build total | {total:.1f} | {built.labels:,} labels |")
        _, peak = rss_mib(os.getpid())
    body = "\n".join(["| stage | seconds | rate |", "|---|---|---|", *rows, "", f"Peak RSS of the build: {peak:.0f} MiB."])
    if args.record:
        record(f"Build of HPO + ICD-10-CM ({encoder.id})", body, ".venv/bin/python -m bench.bench_build --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
