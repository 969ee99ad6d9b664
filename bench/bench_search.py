"""Latency of ``/search`` per mode: in-process (service call) and over HTTP as ``make serve``
serves (``python -m app``), at 1 and 10 concurrent clients, plus the serving process's RSS.

Needs a built bundle (``make build``). Run: ``.venv/bin/python -m bench.bench_search [--requests N] [--record]``.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from app.search.loader import open_search_service
from app.search.scope import Scope
from app.search.service import SearchService
from app.search.values import Mode
from app.settings import Settings
from bench.common import percentiles, record, rss_mib, uvicorn_server

QUERIES = [
    ("fast heart rate", "hpo"), ("hearing loss", "hpo"), ("can't hear well", "hpo"), ("heart beats too fast", "hpo"),
    ("short stature", "hpo"), ("seizures", "hpo"), ("big head", "hpo"), ("low muscle tone", "hpo"),
    ("intellectual disability", "hpo"), ("cleft lip", "hpo"), ("kidney stones", "hpo"), ("hair loss", "hpo"),
    ("fracture of thigh bone", "icd10cm"), ("heart attack", "icd10cm"), ("high blood pressure", "icd10cm"),
    ("type 2 diabetes with kidney problems", "icd10cm"), ("broken wrist", "icd10cm"), ("asthma attack", "icd10cm"),
    ("urinary tract infection", "icd10cm"), ("migraine without aura", "icd10cm"),
]
REQUESTS_PER_CLIENT = 100
UNCACHED = {"TERMSEARCH_SEARCH__RANKING_CACHE": "0"}


def in_process(service: SearchService) -> list[str]:
    rows = []
    for mode in Mode:
        for query, system in QUERIES:  # warm-up
            service.rank(query, Scope((system,)), 10, mode)
        samples = []
        for _ in range(5):
            for query, system in QUERIES:
                start = time.perf_counter()
                service.rank(query, Scope((system,)), 10, mode)
                samples.append((time.perf_counter() - start) * 1000)
        p = percentiles(samples)
        rows.append(f"| in-process | {mode} | 1 | {p['p50']} | {p['p99']} | {len(samples) / (sum(samples) / 1000):.0f} |")
    return rows


def _client_run(base: str, mode: str, count: int) -> list[float]:
    samples = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for i in range(count):
            query, system = QUERIES[i % len(QUERIES)]
            start = time.perf_counter()
            response = client.get("/search", params={"q": query, "system": system, "mode": mode})
            samples.append((time.perf_counter() - start) * 1000)
            response.raise_for_status()
    return samples


def over_http(requests: int) -> tuple[list[str], str]:
    rows = []
    with uvicorn_server(env=UNCACHED, command=("app",), stderr=subprocess.DEVNULL) as (base, pid):
        for mode in Mode:
            _client_run(base, mode, 40)  # warm-up
            for clients in (1, 10):
                start = time.perf_counter()
                with ThreadPoolExecutor(clients) as pool:
                    runs = list(pool.map(lambda _: _client_run(base, mode, requests), range(clients)))
                elapsed = time.perf_counter() - start
                samples = [s for run in runs for s in run]
                p = percentiles(samples)
                rows.append(f"| HTTP | {mode} | {clients} | {p['p50']} | {p['p99']} | {len(samples) / elapsed:.0f} |")
        rss, peak = rss_mib(pid)
    return rows, f"Serving processes' RSS after the run (the launcher and its workers): {rss:.0f} MiB (peak {peak:.0f} MiB)."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=REQUESTS_PER_CLIENT, help="HTTP requests per client and mode")
    parser.add_argument("--record", action="store_true", help="write the figures into bench/RESULTS.md")
    args = parser.parse_args()
    header = "| path | mode | clients | p50 ms | p99 ms | req/s |\n|---|---|---|---|---|---|"
    settings = Settings()
    settings.search.ranking_cache = 0  # each request ranked, here and in the server (UNCACHED): the computation
    service = open_search_service(settings)
    local = in_process(service)
    http_rows, memory = over_http(args.requests)
    manifest_note = f"Bundle: `{service.bundle.id}`, encoder `{service.encoder.id}`; each request ranked (the ranking cache off)."
    body = "\n".join([header, *local, *http_rows, "", memory, manifest_note])
    if args.record:
        record("/search latency", body, ".venv/bin/python -m bench.bench_search --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
