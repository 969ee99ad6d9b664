"""Learning from use under load (issue 40): ``POST /feedback`` from 50 clients at once loses no
event, and ``/search`` keeps its latency with an overlay of 10,000 learned designations.

On a copy of the store (the decisions written here never reach the real one, nor its next
build), served by uvicorn with the ranking cache off: /search p50/p99 at one client before and
after 10,000 approved phrasings are written (the server's bundle watcher applies them), then
``--clients`` clients post ``--events`` events each and the store is counted.

Needs a built bundle (``make build``). Run: ``.venv/bin/python -m bench.bench_feedback [--record]``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import func, insert, make_url, select

from app.search.loader import open_search_service
from app.settings import Settings
from app.tables import FeedbackEventRow
from bench.bench_search import QUERIES
from bench.common import percentiles, record, rss_mib, uvicorn_server
from indexer.knowledge.learned import APPROVED, DESIGNATION
from indexer.lexical.normalise import name_key
from indexer.store import make_engine, migrate
from indexer.store.models import LearnedRow

LEARNED = 10_000
CLIENTS = 50
EVENTS_PER_CLIENT = 40
SEARCHES = 200
CURATOR_KEY = "bench-curator-key-0123456789"


def searches(base: str, count: int) -> list[float]:
    samples = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for i in range(count):
            query, system = QUERIES[i % len(QUERIES)]
            start = time.perf_counter()
            client.get("/search", params={"q": query, "system": system}).raise_for_status()
            samples.append((time.perf_counter() - start) * 1000)
    return samples


def teach(engine_url: str, settings: Settings, count: int) -> str:
    """Approve ``count`` phrasings of random concepts; one of them, to wait for."""
    bundle = open_search_service(settings).bundle
    rng = random.Random(20261128)
    rows: list[dict[str, object]] = []
    now = datetime.now(UTC)
    for i in range(count):
        system = rng.choice(list(bundle.systems))
        span = bundle.rows(system, include_inactive=False)
        concept = bundle.concepts[rng.randrange(span.start, span.stop)]
        text = f"learned phrasing {i} of {concept.display}"[:500]
        item: dict[str, object] = {"kind": DESIGNATION, "system": system, "code": concept.code, "text": text}
        decided = {"key": name_key(text)[:512], "decision": APPROVED, "count": 3, "reviewer": "bench", "decided_at": now}
        rows.append(item | decided | {"lent_by": None, "note": None})
    engine = make_engine(engine_url)
    with engine.begin() as conn:
        conn.execute(insert(LearnedRow), rows)
    engine.dispose()
    return str(rows[-1]["text"])


def overlay_applied(base: str, phrasing: str, timeout_s: float = 60) -> float:
    """Seconds until the server ranks with the new phrasings."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        top = httpx.get(f"{base}/search", params={"q": phrasing, "k": 1}, timeout=30).json()["results"]
        if top and (top[0]["why"]["origin"] or "").startswith("learned from use"):
            return time.monotonic() - start
        time.sleep(0.5)
    raise RuntimeError("the overlay was not applied in time")


def post_events(base: str, tag: str, clients: int, per_client: int) -> tuple[list[float], int, float]:
    def client_run(number: int) -> tuple[list[float], int]:
        samples, failed = [], 0
        with httpx.Client(base_url=base, timeout=30) as client:
            for i in range(per_client):
                query, system = QUERIES[(number + i) % len(QUERIES)]
                body = {"query": f"{tag} {query}", "action": "abandoned", "surface": "widget", "system": system, "shown": 10}
                start = time.perf_counter()
                response = client.post("/feedback", json=body)
                samples.append((time.perf_counter() - start) * 1000)
                failed += response.status_code != 202
        return samples, failed

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        runs = list(pool.map(client_run, range(clients)))
    return [s for run, _ in runs for s in run], sum(failed for _, failed in runs), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learned", type=int, default=LEARNED, help="approved phrasings in the overlay")
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--events", type=int, default=EVENTS_PER_CLIENT, help="feedback events per client")
    parser.add_argument("--searches", type=int, default=SEARCHES, help="/search requests per measurement")
    parser.add_argument("--record", action="store_true", help="write the figures into bench/RESULTS.md")
    args = parser.parse_args()
    settings = Settings()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "termsearch.db"
        source = make_url(settings.store.url)
        if source.get_backend_name() != "sqlite" or not source.database:
            raise SystemExit("bench_feedback runs on a copy of the embedded store (SQLite); the store here is not one")
        shutil.copyfile(source.database, store)
        url = f"sqlite:///{store}"
        migrate(url)
        env = {"TERMSEARCH_STORE__URL": url, "TERMSEARCH_SEARCH__RANKING_CACHE": "0", "TERMSEARCH_FEEDBACK__ENABLED": "true",
               "TERMSEARCH_API__BUNDLE_CHECK_S": "1", "TERMSEARCH_API__CURATOR_KEYS": f"bench={CURATOR_KEY}"}  # fmt: skip
        with uvicorn_server(env=env) as (base, pid):
            searches(base, 40)  # warm-up
            before = percentiles(searches(base, args.searches))
            phrasing = teach(url, settings, args.learned)
            applied = overlay_applied(base, phrasing)
            after = percentiles(searches(base, args.searches))
            tag = f"bench-{uuid.uuid4().hex[:8]}"
            posted, failed, elapsed = post_events(base, tag, args.clients, args.events)
            rss, peak = rss_mib(pid)
        engine = make_engine(url)
        with engine.connect() as conn:
            stored = conn.execute(select(func.count()).where(FeedbackEventRow.query.like(f"{tag} %"))).scalar()
        engine.dispose()
    sent = args.clients * args.events
    p = percentiles(posted)
    body = "\n".join([
        "| measurement | p50 ms | p99 ms | note |",
        "|---|---|---|---|",
        f"| /search hybrid, 1 client, no learned phrasing | {before['p50']} | {before['p99']} | ranking cache off |",
        f"| /search hybrid, 1 client, {args.learned:,} learned phrasings | {after['p50']} | {after['p99']} "
        f"| applied {applied:.1f} s after they were written |",
        f"| POST /feedback, {args.clients} clients | {p['p50']} | {p['p99']} | {sent / elapsed:.0f} events/s |",
        "",
        f"Events: {sent} sent, {sent - failed} answered 202, {stored} stored ({sent - stored} lost). "
        f"Serving process RSS after the run: {rss:.0f} MiB (peak {peak:.0f} MiB). On a copy of the store (SQLite).",
    ])  # fmt: skip
    if args.record:
        record("Learning from use under load", body, ".venv/bin/python -m bench.bench_feedback --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
