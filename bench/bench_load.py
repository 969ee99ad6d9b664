"""Load and soak: a realistic mix against the production launcher (``python -m app``) on 127.0.0.1.

Mix (weights, ``--mix``): 60% ``/fhir/ValueSet/$expand`` with short autocomplete filters, 30%
``/search``, 10% ``/concepts/{system}/{code}``. Each phase runs ``--clients`` (default 10, then 50)
concurrent clients, each sending its next request as soon as the last one is answered, for
``--duration`` seconds (default 300). Reported per phase: requests, errors (anything but 200, or
no answer), requests/s, p50/p95/p99 per route and overall. The server's RSS is sampled every
``--sample`` seconds (10) across the run; after ``--warmup`` seconds (60) it must not grow more than
10% over its first post-warm-up sample. Any error or RSS growth fails the run (exit 1).

Needs a built bundle (``make build``). The full run (about 11 minutes) records into
bench/RESULTS.md: ``.venv/bin/python -m bench.bench_load --record``. A smoke run:
``.venv/bin/python -m bench.bench_load --duration 5 --clients 2 --warmup 0``.
``--base-url URL --pid PID`` targets a server already running (loopback only).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from bench.bench_expand import requests_for
from bench.bench_search import QUERIES
from bench.common import percentiles, record, rss_mib, uvicorn_server

CLIENT_KEEP_ALIVE_S = 2.0

EXPAND, SEARCH, CONCEPTS = "expand", "search", "concepts"
PATHS = {EXPAND: "/fhir/ValueSet/$expand", SEARCH: "/search", CONCEPTS: "/concepts/{system}/{code}"}
GROWTH_LIMIT = 0.10


@dataclass
class Phase:
    clients: int
    samples: dict[str, list[float]] = field(default_factory=dict)  # route -> ms
    errors: dict[str, int] = field(default_factory=dict)
    kinds: Counter[str] = field(default_factory=Counter)  # "503 /problems/timeout", "ReadTimeout", ...
    seconds: float = 0.0

    def add(self, route: str, ms: float, error: str | None) -> None:
        self.samples.setdefault(route, []).append(ms)
        self.errors[route] = self.errors.get(route, 0) + (error is not None)
        if error is not None:
            self.kinds[error] += 1


@dataclass
class Workload:
    """What each route is asked: $expand parameters, /search parameters, concept paths."""

    expand: list[dict[str, str]]
    search: list[dict[str, str]]
    concepts: list[str]

    def request(self, route: str, rng: random.Random) -> tuple[str, dict[str, str]]:
        if route == EXPAND:
            return PATHS[EXPAND], rng.choice(self.expand)
        if route == SEARCH:
            return PATHS[SEARCH], rng.choice(self.search)
        return rng.choice(self.concepts), {}


def build_workload(base: str) -> tuple[Workload, list[str]]:
    """The requests of each route, and a message for each route the server does not have."""
    skipped, search, concepts = [], [], set()
    with httpx.Client(base_url=base, timeout=30) as client:
        for q, system in QUERIES:  # those of the systems this bundle serves
            response = client.get("/search", params={"q": q, "system": system, "k": "10"})
            if response.status_code == 200:
                search.append({"q": q, "system": system, "k": "10"})
                concepts.update(f"/concepts/{row['system']}/{row['code']}" for row in response.json()["results"])
        try:
            expand = requests_for(base)
        except (httpx.HTTPError, KeyError, ValueError):
            expand = []
    if not search:
        skipped.append(f"{PATHS[SEARCH]}: none of the queries' systems is served: left out of the mix")
    if not expand:
        skipped.append(f"{PATHS[EXPAND]} is not served here (no /fhir/metadata): left out of the mix")
    if not concepts:
        skipped.append("no concept to ask /concepts for: left out of the mix")
    return Workload(expand, search, sorted(concepts)), skipped


async def client_loop(client: httpx.AsyncClient, workload: Workload, mix: dict[str, int], phase: Phase, deadline: float, seed: int) -> None:
    rng = random.Random(seed)
    routes, weights = list(mix), list(mix.values())
    while time.perf_counter() < deadline:
        route = rng.choices(routes, weights)[0]
        path, params = workload.request(route, rng)
        start = time.perf_counter()
        try:
            response = await client.get(path, params=params)
            error = None if response.status_code == 200 else f"{response.status_code} {_problem_type(response)}"
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        phase.add(route, (time.perf_counter() - start) * 1000, error)


def _problem_type(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:80]
    return str(body.get("type") or body.get("issue", [{}])[0].get("code", ""))


async def run_phase(base: str, workload: Workload, mix: dict[str, int], clients: int, seconds: float) -> Phase:
    phase = Phase(clients)
    # A client must drop an idle connection before the server does (api.keep_alive_s, 5 s): one
    # reused just as the server closes it fails with a ReadError (the keep-alive race).
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=CLIENT_KEEP_ALIVE_S)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as client:
        start = time.perf_counter()
        deadline = start + seconds
        await asyncio.gather(*(client_loop(client, workload, mix, phase, deadline, seed) for seed in range(clients)))
        phase.seconds = time.perf_counter() - start
    return phase


async def sample_rss(pid: int, every_s: float, into: list[tuple[float, float]]) -> None:
    start = time.perf_counter()
    while True:
        into.append((round(time.perf_counter() - start), round(rss_mib(pid)[0], 1)))
        await asyncio.sleep(every_s)


def rss_growth(samples: list[tuple[float, float]], warmup_s: float) -> float:
    """Largest RSS after warm-up relative to the first sample after it (0.05 = 5% more)."""
    after = [rss for at, rss in samples if at >= warmup_s]
    return max(after) / after[0] - 1 if len(after) > 1 else 0.0


async def soak(base: str, pid: int, workload: Workload, mix: dict[str, int], args: argparse.Namespace) -> tuple[list[Phase], list[tuple[float, float]]]:
    rss: list[tuple[float, float]] = []
    sampler = asyncio.create_task(sample_rss(pid, args.sample, rss))
    try:
        phases = [await run_phase(base, workload, mix, clients, args.duration) for clients in args.clients]
    finally:
        sampler.cancel()
    rss.append((rss[-1][0] + args.sample if rss else 0, round(rss_mib(pid)[0], 1)))
    return phases, rss


def report(phases: list[Phase], rss: list[tuple[float, float]], growth: float, mix: dict[str, int], skipped: list[str], args: argparse.Namespace) -> str:
    rows = ["| clients | route | requests | errors | req/s | p50 ms | p95 ms | p99 ms |", "|---|---|---|---|---|---|---|---|"]
    for phase in phases:
        everything = [ms for samples in phase.samples.values() for ms in samples]
        for route, samples in [*phase.samples.items(), ("all", everything)]:
            errors = sum(phase.errors.values()) if route == "all" else phase.errors[route]
            p = percentiles(samples)
            rows.append(
                f"| {phase.clients} | {PATHS.get(route, route)} | {len(samples)} | {errors} | "
                f"{len(samples) / phase.seconds:.0f} | {p['p50']} | {p['p95']} | {p['p99']} |"
            )
    mix_text = ", ".join(f"{weight}% {PATHS[route]}" for route, weight in mix.items())
    lines = [
        "\n".join(rows),
        "",
        f"Mix: {mix_text}; {args.duration:.0f} s per phase; each client sends its next request when answered.",
        f"Server RSS (MiB) every {args.sample:.0f} s: {', '.join(f'{rss_mib:.0f}' for _, rss_mib in rss)}.",
        f"Growth after the {args.warmup:.0f} s warm-up: {growth:+.1%} (limit +{GROWTH_LIMIT:.0%}).",
        *(f"Errors at {p.clients} clients: {', '.join(f'{n} × {kind}' for kind, n in p.kinds.most_common())}." for p in phases if p.kinds),
        *skipped,
    ]
    return "\n".join(lines)


@contextmanager
def server(args: argparse.Namespace) -> Iterator[tuple[str, int]]:
    if args.base_url:
        if urlsplit(args.base_url).hostname not in ("127.0.0.1", "localhost", "::1"):
            raise SystemExit("--base-url must be a loopback address")
        if args.pid is None:
            raise SystemExit("--base-url needs --pid (the server process, for its RSS)")
        yield args.base_url.rstrip("/"), args.pid
        return
    # The production launcher, its JSON access log (one line per request) going to a file.
    with tempfile.NamedTemporaryFile(prefix="termsearch-load-", suffix=".log") as log, uvicorn_server(command=("app",), stderr=log) as running:
        yield running


def parse_mix(text: str) -> dict[str, int]:
    mix = {route: int(weight) for route, weight in (part.split("=") for part in text.split(","))}
    unknown = set(mix) - set(PATHS)
    if unknown:
        raise SystemExit(f"--mix: unknown route(s) {', '.join(sorted(unknown))}; known: {', '.join(PATHS)}")
    return mix


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="10,50", type=lambda s: [int(n) for n in s.split(",")], help="clients per phase")
    parser.add_argument("--duration", type=float, default=300.0, help="seconds per phase")
    parser.add_argument("--mix", default="expand=60,search=30,concepts=10", type=parse_mix)
    parser.add_argument("--sample", type=float, default=10.0, help="seconds between RSS samples")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds before the RSS baseline")
    parser.add_argument("--base-url", help="a server already running on loopback (default: start python -m app)")
    parser.add_argument("--pid", type=int, help="with --base-url: the server's process id")
    parser.add_argument("--record", action="store_true", help="write the figures into bench/RESULTS.md")
    args = parser.parse_args()

    with server(args) as (base, pid):
        workload, skipped = build_workload(base)
        mix = {route: weight for route, weight in args.mix.items() if getattr(workload, route)}
        phases, rss = asyncio.run(soak(base, pid, workload, mix, args))
    growth = rss_growth(rss, args.warmup)
    body = report(phases, rss, growth, mix, skipped, args)
    if args.record:
        record("Load and soak: mixed FHIR $expand, /search, /concepts", body, " ".join([".venv/bin/python -m bench.bench_load", *sys.argv[1:]]))
    else:
        print(body)
    errors = sum(sum(phase.errors.values()) for phase in phases)
    if errors or growth > GROWTH_LIMIT:
        raise SystemExit(f"{errors} errors, RSS growth {growth:+.1%} after warm-up")


if __name__ == "__main__":
    main()
