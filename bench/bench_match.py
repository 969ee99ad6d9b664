"""Whole-system matching throughput: every code of one ICD-10-CM chapter (default I00-I99,
diseases of the circulatory system) against HPO, per mode, in job-sized chunks as a match job
runs them, in-process (the job runner's path without the store writes).

Needs a built bundle with ICD-10-CM and HPO (``make build``). Run:
``.venv/bin/python -m bench.bench_match [--chapter I00-I99] [--limit N] [--record]``.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

from app.matching.matcher import Matcher
from app.matching.request import MatchMode, MatchRequest, resolve
from app.search.loader import open_search_service
from app.search.service import SearchService
from app.settings import Settings
from bench.common import record, rss_mib

WARM_UP = 32  # sources matched once before timing (model and page cache warm)


@dataclass(frozen=True)
class Throughput:
    mode: MatchMode
    sources: int
    labels: int
    seconds: float
    matched: int  # sources with at least one candidate

    def row(self) -> str:
        return (
            f"| {self.mode} | {self.sources:,} | {self.labels:,} | {self.seconds:.1f} | "
            f"{self.sources / self.seconds:,.0f} | {self.labels / self.seconds:,.0f} | {self.matched:,} |"
        )


def measure(service: SearchService, settings: Settings, request: MatchRequest, limit: int | None = None) -> Throughput:
    """Match the request's sources chunk by chunk (``match.job_chunk``) and time it."""
    resolved = resolve(request, service, settings, settings.match.max_job_sources)
    sources = resolved.sources[:limit] if limit else resolved.sources
    matcher = Matcher(service)
    matcher.match(sources[:WARM_UP], resolved.target, request.k, request.min_score, request.mode)
    chunk = settings.match.job_chunk
    matched = 0
    started = time.perf_counter()
    for start in range(0, len(sources), chunk):
        results = matcher.match(sources[start : start + chunk], resolved.target, request.k, request.min_score, request.mode)
        matched += sum(1 for r in results if r.candidates)
    seconds = time.perf_counter() - started
    return Throughput(request.mode, len(sources), sum(len(s.labels) for s in sources), seconds, matched)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", default="I00-I99", help="ICD-10-CM chapter code (its range)")
    parser.add_argument("--target", default="hpo")
    parser.add_argument("--limit", type=int, help="only the first N sources (a smoke run)")
    parser.add_argument("--record", action="store_true", help="write the figures into bench/RESULTS.md")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    rows = []
    for mode in MatchMode:
        request = MatchRequest(
            target_system=args.target, source_system="icd10cm", source_ancestor=args.chapter, k=10, mode=mode
        )
        result = measure(service, settings, request, args.limit)
        rows.append(result.row())
        print(rows[-1], flush=True)
    rss, peak = rss_mib(os.getpid())
    body = "\n".join(
        [
            "| mode | sources | labels | seconds | sources/s | labels/s | with a candidate |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            (
                f"Every active ICD-10-CM code under {args.chapter} against {args.target}, k=10, in chunks of "
                f"{settings.match.job_chunk} (`TERMSEARCH_MATCH__JOB_CHUNK`). Dense: one batch encode and one "
                "matrix product per block against the target's label vectors; lexical: BM25 per label, "
                f"token-sort rescoring. Process RSS {rss:.0f} MiB (peak {peak:.0f} MiB). "
                f"Bundle `{service.bundle.id}`, encoder `{service.encoder.id}`."
            ),
        ]
    )
    if args.record:
        record("Whole-system matching throughput", body, ".venv/bin/python -m bench.bench_match --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
