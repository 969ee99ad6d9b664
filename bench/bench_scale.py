"""Scale: a synthetic UMLS release of N labels, loaded, built, served and measured.

Writes a META release with :func:`bench.bench_loaders.write_meta` (4 atoms a CUI, 3 of them
English; each CUI is-a a random earlier one, so CUI number ``i`` heads about ``N / i`` concepts),
its names drawn from the words of the HPO and ICD-10-CM labels by their frequency (so postings
and n-grams are as skewed as in a real terminology), then measures, each step in a subprocess
of its own:

- load: ``python -m indexer load umls --lang ENG`` into a fresh SQLite store;
- build: seconds per stage and peak RSS (VmHWM) of ``build_bundle``, the index kind it chose and
  its recall@10 against the exact scan (a sample of the bundle's own vectors as queries);
- serve: uvicorn over the bundle (``--workers`` processes): seconds to ``/ready``, memory
  summed over the processes (their own, and the mapped bundle files' pages); ``/search`` dense
  and hybrid, ``$expand?filter`` and subtree-scoped ``/search?ancestor=`` p50/p99 and req/s at
  1 and 10 clients, every request with a query no other request of the run asked (so that no
  cache of query vectors or names answers it), the bundle's files read once before the server
  starts (a long-serving host's page cache holds them; a cold one makes the first requests read
  the vectors from disk).

Label vectors: encoding 3M labels with the shipped model takes hours on 2 cores (its
throughput is bench_encoder's), so the build embeds each label as the normalised mean of the
shipped model's vectors of its words (:class:`WordMeanEncoder`: every distinct word through the
model once). The bundle carries the shipped model, and the server encodes queries with it as in
production, so query latency includes the real encoder.

Needs the default bundle (``make build``) for the vocabulary. Run:
``.venv/bin/python -m bench.bench_scale --labels 1000000 [--data-dir DIR] [--workers 2] [--requests N] [--record]``;
``--skip-load`` rebuilds from DIR's store, ``--skip-build`` serves DIR's last build again.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

from bench.bench_loaders import write_meta
from bench.common import UVICORN, memory_mib, percentiles, read_once, record, rss_mib, uvicorn_server
from indexer import columns
from indexer.bundle import CATALOG, current_bundle, read_manifest
from indexer.encoders import Encoder, default_model_dir, load_encoder
from indexer.settings import Settings

LABELS_PER_CUI = 3  # English atoms a CUI (write_meta's MSH MH, SNOMEDCT_US PT and SY)
UMLS_URI = "http://www.nlm.nih.gov/research/umls"
WORD = re.compile(r"[a-z]+")
REQUESTS_PER_CLIENT = 60
WARM_UP = 20


class WordMeanEncoder:
    """A label's vector: the normalised mean of the wrapped model's vectors of its words (each
    word encoded once). It carries the model's id and weights hash, so that the bundle it builds
    is served with the model itself encoding the queries."""

    def __init__(self, model: Encoder) -> None:
        self.model, self.id, self.sha256, self.dimension = model, model.id, model.sha256, model.dimension
        self.precision = model.precision
        self._words: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        split = [WORD.findall(text.lower()) or [text.lower()] for text in texts]
        new = sorted({word for words in split for word in words} - self._words.keys())
        for start in range(0, len(new), 256):
            self._words.update(zip(new[start : start + 256], self.model.encode(new[start : start + 256]), strict=True))
        vectors = np.stack([np.mean([self._words[w] for w in words], axis=0) for words in split]).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def vocabulary(settings: Settings) -> tuple[list[str], list[float]]:
    """The words of the default bundle's labels and their cumulative frequencies."""
    bundle = current_bundle(settings.bundles_dir)
    if bundle is None:
        raise SystemExit("no default bundle: run `make build` first (its labels give the vocabulary)")
    labels = columns.TextColumn(bundle / CATALOG, "label_text")
    counts = Counter(word for label in labels for word in WORD.findall(label.lower()) if len(word) > 1)
    words = sorted(counts, key=lambda w: -counts[w])
    return words, list(itertools.accumulate(counts[w] for w in words))


def _environment(data_dir: Path) -> dict[str, str]:
    return {"TERMSEARCH_DATA_DIR": str(data_dir), "TERMSEARCH_API__BUNDLE_CHECK_S": "0"}


def load(data_dir: Path, labels: int, words: list[str], cumulative: list[float]) -> dict[str, float]:
    started = time.perf_counter()
    meta = data_dir / "release" / "META"
    write_meta(meta, 4 * math.ceil(labels / LABELS_PER_CUI), words, cumulative)
    written = time.perf_counter() - started
    started = time.perf_counter()
    command = [sys.executable, "-m", "indexer", "load", "umls", str(meta), "--lang", "ENG"]
    subprocess.run(command, env={**os.environ, **_environment(data_dir)}, check=True, capture_output=True)
    shutil.rmtree(data_dir / "release")
    return {"write_s": round(written, 1), "load_s": round(time.perf_counter() - started, 1)}


def build_in_child(data_dir: Path) -> None:
    """In the subprocess: build, then print the result, stage seconds and peak RSS."""
    from indexer.pipeline import build_bundle
    from indexer.store import StoreReader, make_engine

    settings = Settings(data_dir=data_dir)
    anonymous = _AnonymousPeak()
    model_dir = default_model_dir(settings.encoder)
    encoder = WordMeanEncoder(load_encoder(model_dir, settings.encoder))
    started = time.perf_counter()
    store = StoreReader(make_engine(settings.store.url))
    result = build_bundle(settings, store, encoder, ["umls"], model_dir, show_progress=False, force=True)  # measured, never reused
    seconds = time.perf_counter() - started
    manifest = read_manifest(result.directory)
    out = {"labels": result.labels, "seconds": round(seconds, 1), "stages": result.seconds, "vector": manifest.record()["vector"],
           "peak_mib": round(rss_mib(os.getpid())[1]), "anon_peak_mib": anonymous.stop(),
           "stage_peak_mib": manifest.build_peak_mib, "bytes": sum(f.size for f in manifest.files.values())}
    print(json.dumps(out))


class _AnonymousPeak:
    """The highest RssAnon of this process, sampled every 0.1 s in a thread: its own memory, not
    the pages of the files it maps (which VmHWM counts too)."""

    def __init__(self) -> None:
        self.peak, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, round(memory_mib(os.getpid(), "RssAnon")[0]))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def build(data_dir: Path) -> dict:
    """Build in a subprocess; its measures are kept in ``build.json`` for a later ``--skip-build``."""
    command = [sys.executable, "-m", "bench.bench_scale", "--build-in", str(data_dir)]
    done = subprocess.run(command, env={**os.environ, **_environment(data_dir)}, check=True, capture_output=True, text=True)
    (data_dir / "build.json").write_text(done.stdout.splitlines()[-1])
    return json.loads(done.stdout.splitlines()[-1])


def _queries(words: list[str], cumulative: list[float], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < count:  # distinct: no request is answered from a cache another one filled
        out[" ".join(rng.choices(words[:3000], cum_weights=cumulative[:3000], k=rng.randint(2, 3)))] = None
    return list(out)


def _run(base: str, path: str, params: list[dict[str, str]]) -> list[float]:
    samples = []
    with httpx.Client(base_url=base, timeout=60) as client:
        for one in params:
            started = time.perf_counter()
            response = client.get(path, params=one)
            samples.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
    return samples


class Load:
    """Requests of one kind at 1 and 10 clients, each with a query no other request of the run
    asked (the query vector and name caches are not what is measured)."""

    def __init__(self, base: str, words: list[str], cumulative: list[float], requests: int) -> None:
        self.base, self.words, self.cumulative, self.requests, self.seed = base, words, cumulative, requests, 0

    def measure(self, name: str, path: str, params: Callable[[str], dict[str, str]]) -> list[str]:
        self.seed += 1
        n = self.requests
        asked = [params(q) for q in _queries(self.words, self.cumulative, WARM_UP + n + 10 * n, self.seed)]
        _run(self.base, path, asked[:WARM_UP])
        rows = []
        for clients, first in ((1, WARM_UP), (10, WARM_UP + n)):
            started = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                runs = list(pool.map(lambda c, f=first: _run(self.base, path, asked[f + c * n : f + (c + 1) * n]), range(clients)))
            elapsed = time.perf_counter() - started
            samples = [s for run in runs for s in run]
            p = percentiles(samples)
            rows.append(f"| {name} | {clients} | {p['p50']} | {p['p99']} | {len(samples) / elapsed:.0f} |")
        return rows


def _warm_page_cache(bundle: Path) -> float:
    """Read every file of the bundle once, so that the mapped ones are in the page cache as on a
    host that has been serving (a cold cache makes the first requests read vectors from disk:
    bench/RESULTS.md); seconds it took."""
    started = time.perf_counter()
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        read_once(path)
    return time.perf_counter() - started


def serve(
    data_dir: Path, words: list[str], cumulative: list[float], concepts: int, workers: int, requests: int
) -> tuple[list[str], dict[str, float]]:
    rows = ["| request | clients | p50 ms | p99 ms | req/s |", "|---|---|---|---|---|"]
    warm_s = _warm_page_cache(current_bundle(Settings(data_dir=data_dir).bundles_dir))
    started = time.perf_counter()
    with uvicorn_server(_environment(data_dir), timeout_s=600, command=(*UVICORN, "--workers", str(workers))) as (base, pid):
        ready_s = time.perf_counter() - started
        rss_ready = _tree_mib(pid, "VmRSS")
        load = Load(base, words, cumulative, requests)
        for mode in ("dense", "hybrid"):
            rows += load.measure(f"/search {mode}", "/search", lambda q, m=mode: {"q": q, "system": "umls", "mode": m})
        rows += load.measure("$expand?filter", "/fhir/ValueSet/$expand", lambda q: {"url": f"{UMLS_URI}?fhir_vs", "filter": q, "count": "10"})
        for number in (3, 10, 30, 100, 1000, 100_000):  # CUI i heads about N / i concepts, scattered over the catalog
            if number > concepts:
                continue
            cui = f"C{number:07d}"
            size = _subtree_size(base, cui)
            name = f"/search?ancestor={cui} ({size:,} concepts)"
            rows += load.measure(name, "/search", lambda q, c=cui: {"q": q, "system": "umls", "ancestor": c})
        before = _tree_mib(pid, "VmHWM")
        sources = [{"id": f"s{i}", "labels": [q]} for i, q in enumerate(_queries(words, cumulative, 100, 0))]
        started = time.perf_counter()
        httpx.post(f"{base}/match", json={"target_system": "umls", "concepts": sources, "k": 5}, timeout=600).raise_for_status()
        match_s = time.perf_counter() - started
        rss, peak = _tree_mib(pid, "VmRSS"), _tree_mib(pid, "VmHWM")
        anonymous, mapped = _tree_mib(pid, "RssAnon"), _tree_mib(pid, "RssFile")
    return rows, {"warm_s": round(warm_s, 1), "ready_s": round(ready_s, 1), "rss_ready_mib": round(rss_ready), "rss_mib": round(rss), "peak_mib": round(peak),
                  "anon_mib": round(anonymous), "file_mib": round(mapped), "match_s": round(match_s, 1), "match_peak_delta_mib": round(peak - before)}


def _subtree_size(base: str, cui: str) -> int:
    """How many concepts are ``cui`` and below it (the total of its is-a value set)."""
    params = {"url": f"{UMLS_URI}?fhir_vs=isa/{cui}", "count": "0"}
    response = httpx.get(f"{base}/fhir/ValueSet/$expand", params=params, timeout=60)
    response.raise_for_status()
    return response.json()["expansion"]["total"]


def _tree_mib(pid: int, field: str) -> float:
    """A memory field summed over the server and its worker processes (``RssAnon``: their own
    memory; ``RssFile``: pages of mapped bundle files, which workers share, counted once a worker)."""
    return sum(memory_mib(p, field)[0] for p in _tree(pid))


def _tree(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *(p for child in children for p in _tree(int(child)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=1_000_000)
    parser.add_argument("--data-dir", type=Path, help="keep the store and bundle here (default: a temporary directory)")
    parser.add_argument("--skip-load", action="store_true", help="the data dir holds the store already")
    parser.add_argument("--skip-build", action="store_true", help="serve the data dir's last build (implies --skip-load)")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--requests", type=int, default=REQUESTS_PER_CLIENT, help="requests per client of each kind")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--build-in", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_in:
        build_in_child(args.build_in)
        return
    words, cumulative = vocabulary(Settings())
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    loaded = {} if args.skip_load or args.skip_build else load(data_dir, args.labels, words, cumulative)
    print(f"loaded: {loaded}", file=sys.stderr)
    built = json.loads((data_dir / "build.json").read_text()) if args.skip_build else build(data_dir)
    print(f"built: {built}", file=sys.stderr)
    rows, served = serve(data_dir, words, cumulative, built["labels"] // LABELS_PER_CUI, args.workers, args.requests)
    vector = built["vector"]
    body = "\n".join(
        [
            f"Synthetic UMLS (`write_meta`, names from {len(words):,} HPO + ICD-10-CM words by frequency): "
            f"{built['labels']:,} labels. Load: {loaded or 'reused'}.",
            "",
            f"Build: {built['seconds']} s (stages {built['stages']}), peak RSS {built['peak_mib']:,} MiB (at the end of "
            f"each stage: {built['stage_peak_mib']}), of which the process's own memory (RssAnon) peaked at "
            f"{built['anon_peak_mib']:,} MiB, the rest being pages of the files it maps; "
            f"bundle {built['bytes'] / 2**30:.2f} GiB. Vector index: {vector['backend']} (kind {vector['kind']}, "
            f"auto above {vector['compress_above']:,} labels), recall@10 against exact {vector['recall_at_10']} "
            "(200 of its own vectors as queries).",
            "",
            f"Serve ({args.workers} uvicorn worker{'s' if args.workers > 1 else ''}; every request a query no other "
            f"asked; the bundle's files read once before, {served['warm_s']} s, so that they are in the page cache as on a "
            f"host that has been serving): ready in {served['ready_s']} s (uvicorn start to `/ready`), RSS {served['rss_ready_mib']:,} MiB "
            f"when ready, {served['rss_mib']:,} MiB after the run (peak {served['peak_mib']:,} MiB; of it "
            f"{served['anon_mib']:,} MiB the processes' own, {served['file_mib']:,} MiB mapped bundle files, counted "
            "once a process).",
            "",
            *rows,
            "",
            f"`/match` of 100 listed sources into umls (k=5, dense): {served['match_s']} s; it raised the server's peak "
            f"RSS by {served['match_peak_delta_mib']:,} MiB (each source goes through the ranking core alone).",
            "",
            "Label vectors: the normalised mean of the shipped model's word vectors (see the module "
            "docstring); queries are encoded by the shipped model itself.",
        ]
    )
    if args.record:
        record(f"Scale: {built['labels']:,} labels, build and serve", body, " ".join([".venv/bin/python -m bench.bench_scale", *sys.argv[1:]]))
    else:
        print(body)
    if args.data_dir is None:
        shutil.rmtree(data_dir)


if __name__ == "__main__":
    main()
