"""Where a hybrid query's time goes, stage by stage (issue 42): pyinstrument samples the request's
thread while the core ranks queries it has not seen (the ranking cache off, each query once),
and the time under each stage of the core is summed.

The stages are the core's (``app/search/service.py``): query analysis (spelling correction, the
grammar's reading and abbreviations, bridges and other rewrites), starting the index searches,
character n-grams, the code channel, waiting for the dense thread (encoding and vector search:
they run beside the request's thread, which runs BM25 when it starts the searches), features, the ranker and the descent
to codes, and the rows. Time under no stage is the core's own glue.

Needs a built bundle (``make build``). Run: ``.venv/bin/python -m bench.bench_profile [--record]``.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from typing import Any

from pyinstrument import Profiler

from app.search.loader import open_search_service
from app.search.scope import Scope
from app.settings import Settings
from bench.bench_everyday import SETS, read_items
from bench.common import record

# (stage, the functions of the core whose time is that stage's), the first match from the root down.
STAGES = (
    ("query analysis: spelling", ("correct",)),
    ("query analysis: grammar and abbreviations", ("read",)),
    ("query analysis: bridges and rewrites", ("rewrites", "meanings")),
    ("index searches started", ("start", "where")),
    ("character n-grams", ("chars",)),
    ("code channel", ("codes",)),
    ("waiting for the dense thread", ("result",)),
    ("features", ("features", "naming_every_word")),
    ("ranker (order, confidence)", ("order",)),
    ("descent to codes", ("apply",)),
    ("rows", ("results", "result")),
)


def stage_times(frame: Any, into: dict[str, float]) -> None:
    """Add each frame's time to the first stage named on its path from the root (a function of
    ``app/search``, or a future's ``result``: a wait)."""
    ours = "app/search" in (frame.file_path or "") or frame.function == "result"
    for stage, functions in STAGES:
        if ours and frame.function in functions:
            into[stage] += frame.time
            return
    for child in frame.children:
        stage_times(child, into)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=None, help="queries of each kind of each set (all)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    settings.search.ranking_cache = 0
    service = open_search_service(settings)
    queries = list(dict.fromkeys(q for name in SETS for q, _, _ in read_items(name, args.per_kind)))
    service.rank("warm up", Scope(("icd10cm",)))
    profiler = Profiler(interval=0.0002)
    started = time.perf_counter()
    profiler.start()
    for query in queries:
        service.results(service.rank(query, Scope(("icd10cm",))))
    profiler.stop()
    elapsed = time.perf_counter() - started
    times: dict[str, float] = defaultdict(float)
    session = profiler.last_session
    root = session.root_frame() if session is not None else None
    if root is not None:
        stage_times(root, times)
    total = sum(times.values())
    lines = ["| stage | ms per query | share |", "|---|---|---|"]
    for stage, _ in STAGES:
        lines.append(f"| {stage} | {times[stage] * 1000 / len(queries):.2f} | {times[stage] / elapsed:.0%} |")
    lines.append(f"| the core's own glue | {(elapsed - total) * 1000 / len(queries):.2f} | {(elapsed - total) / elapsed:.0%} |")
    body = "\n".join([
        f"Bundle {service.bundle.id}; the everyday ICD-10-CM sets' {len(queries)} queries, each ranked once (ranking "
        f"cache off: each query new to the core), hybrid, top 10 with rows: {elapsed * 1000 / len(queries):.2f} ms "
        "a query in all, pyinstrument sampling every 0.2 ms (which slows it).",
        "", *lines,
    ])  # fmt: skip
    if args.record:
        record("Profile of the hybrid path, stage by stage", body, ".venv/bin/python -m bench.bench_profile --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
