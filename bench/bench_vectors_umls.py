"""The vector index alone at UMLS size (issue 20): N synthetic label vectors (default 16M) built
into the index a bundle of that size gets (``kind=auto``: IVF-PQ), its recall@10 against the
exact scan on a sample, and what a worker needs to serve it.

Each label vector is the normalised mean of the shipped model's vectors of 2 to 4 words drawn
by their frequency in the HPO + ICD-10-CM labels, as ``bench_scale``'s synthetic names are
(every distinct word through the model once). The rest of a 16M bundle (catalog, BM25, n-grams)
is projected in bench/RESULTS.md from the 3M build, which ``bench_scale`` runs whole.

Steps, each measured in a process of its own:
- write: the vectors, a block at a time, into a float32 ``.npy`` file (as the build's embed stage);
- build: ``build_vector_index`` over that file (seconds, peak own memory: RssAnon, sampled),
  then recall@10 of the built index against the exact scan (``recall_at_k``, 200 of its own
  vectors as queries, the file read a block at a time);
- serve: the index opened as a worker opens it, 300 searches of sampled vectors (p50 ms), and
  the process's own memory and its mapped file pages after them. As on a host of 8 GB, which
  holds the index's codes but not its float16 copy: the float16 file is dropped from the page
  cache first (each search then reads its re-scored rows from disk), the 4-bit codes read once.

Needs the default bundle (its labels give the words). Run:
``.venv/bin/python -m bench.bench_vectors_umls --labels 16000000 --dir DIR [--record]``
(DIR gets about 2.5 GB of files per million labels; remove it afterwards).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from bench.bench_scale import _AnonymousPeak, vocabulary
from bench.common import memory_mib, percentiles, read_once, record
from indexer.encoders import default_model_dir, load_encoder
from indexer.settings import Settings
from indexer.vector import build_vector_index, open_vector_index
from indexer.vector.faiss_ivfpq import CODES, MATRIX
from indexer.vector.recall import recall_at_k
from indexer.vector.rows import VectorWriter

VECTORS = "vectors.npy"
BLOCK = 65_536


def write(directory: Path, labels: int, seed: int = 0) -> dict:
    settings = Settings()
    words, cumulative = vocabulary(settings)
    model = load_encoder(default_model_dir(settings.encoder), settings.encoder)
    started = time.perf_counter()
    table = np.concatenate([model.encode(words[i : i + 256]) for i in range(0, len(words), 256)]).astype(np.float32)
    weights = np.asarray(cumulative[: len(words)], dtype=np.float64)
    rng = np.random.default_rng(seed)
    with VectorWriter(directory / VECTORS, labels, table.shape[1]) as out:
        for first in range(0, labels, BLOCK):
            count = min(BLOCK, labels - first)
            lengths = rng.integers(2, 5, size=count)
            chosen = np.searchsorted(weights, rng.random((count, 4)) * weights[-1])
            vectors = np.zeros((count, table.shape[1]), dtype=np.float32)
            for j in range(4):
                vectors += table[chosen[:, j]] * (j < lengths)[:, None]
            out.write(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return {"write_s": round(time.perf_counter() - started, 1), "words": len(words)}


def build(directory: Path) -> dict:
    settings = Settings().vector
    vectors = np.load(directory / VECTORS, mmap_mode="r")
    peak = _AnonymousPeak()
    started = time.perf_counter()
    (directory / "index").mkdir(exist_ok=True)
    index = build_vector_index(vectors, settings, directory=directory / "index")
    entry = index.save(directory / "index")
    seconds = time.perf_counter() - started
    anon_peak = peak.stop()
    started = time.perf_counter()
    recall = recall_at_k(index, vectors, block=settings.build_block)
    files = {p.name: p.stat().st_size for p in (directory / "index").iterdir()}
    (directory / "index" / "entry.json").write_text(json.dumps({"backend": index.backend, **entry}))
    return {"kind": settings.resolved_kind(len(vectors)), **entry, "build_s": round(seconds, 1), "anon_peak_mib": anon_peak,
            "recall_at_10": recall, "recall_s": round(time.perf_counter() - started, 1), "files": files}


def _evict(path: Path) -> None:
    """Drop a file's pages from the page cache (no process maps them)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


def serve(directory: Path) -> dict:
    settings = Settings()
    entry = json.loads((directory / "index" / "entry.json").read_text())
    _evict(directory / "index" / MATRIX)
    read_once(directory / "index" / CODES)
    started = time.perf_counter()
    index = open_vector_index(entry, directory / "index", settings)
    open_s = time.perf_counter() - started
    vectors = np.load(directory / VECTORS, mmap_mode="r")  # 310 rows read, not the file (its pages would push the index's out)
    queries = np.asarray(vectors[np.sort(np.random.default_rng(7).choice(len(vectors), 310, replace=False))], dtype=np.float32)
    samples = []
    for number, query in enumerate(queries):
        started = time.perf_counter()
        index.search(query, 100)
        if number >= 10:  # the first ones fault in the coarse quantiser's pages
            samples.append((time.perf_counter() - started) * 1000)
    anonymous, mapped = memory_mib(os.getpid(), "RssAnon", "RssFile")
    return {"open_s": round(open_s, 2), "search_ms": percentiles(samples), "anon_mib": round(anonymous), "file_mib": round(mapped)}


def _child(step: str, directory: Path, labels: int) -> dict:
    command = [sys.executable, "-m", "bench.bench_vectors_umls", "--step", step, "--dir", str(directory), "--labels", str(labels)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=16_000_000)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--skip-write", action="store_true", help="DIR holds the vectors already")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--step", choices=("write", "build", "serve"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    if args.step:
        steps = {"write": lambda: write(args.dir, args.labels), "build": lambda: build(args.dir), "serve": lambda: serve(args.dir)}
        print(json.dumps(steps[args.step]()))
        return
    written = {} if args.skip_write else _child("write", args.dir, args.labels)
    print(f"written: {written}", file=sys.stderr)
    built = _child("build", args.dir, args.labels)
    print(f"built: {built}", file=sys.stderr)
    served = _child("serve", args.dir, args.labels)
    print(f"served: {served}", file=sys.stderr)
    mib = {name: round(size / 2**20) for name, size in built["files"].items()}
    body = "\n".join(
        [
            f"{args.labels:,} synthetic label vectors (384-d, the normalised mean of the shipped model's vectors of 2 to 4 "
            f"of {written.get('words', 'the')} HPO + ICD-10-CM words, drawn by frequency); written in {written.get('write_s', '(reused)')} s.",
            "",
            f"Build (`build_vector_index`, `kind=auto`): {built['kind']}, {built.get('nlist')} lists, {built.get('code_bytes')} bytes a "
            f"code; {built['build_s']} s; the process's own memory peaked at {built['anon_peak_mib']:,} MiB; files (MiB): {mib}.",
            f"Recall@10 against the exact scan: {built['recall_at_10']} (200 of its own vectors as queries; {built['recall_s']} s).",
            "",
            f"Serve (the index opened as a worker opens it, in {served['open_s']} s; 300 searches of k=100, re-ranked from the "
            f"4-bit codes, read once before, then the best {Settings().vector.ivf_refine} from float16 dropped from the page cache): "
            f"p50 {served['search_ms']['p50']} ms, p99 {served['search_ms']['p99']} ms; the process's own memory "
            f"{served['anon_mib']:,} MiB, mapped file pages {served['file_mib']:,} MiB after them.",
        ]
    )
    if args.record:
        record(f"Vector index alone: {args.labels:,} labels", body, f"python -m bench.bench_vectors_umls --labels {args.labels} --dir DIR --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
