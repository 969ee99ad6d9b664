"""Schemathesis over the FHIR routes of the production launcher, as an outside prober runs it: every
phase (examples, coverage, fuzzing, stateful) from the served ``/openapi.json``; per documented
route, how many generated requests got a 2xx, a 4xx and a 5xx. No 5xx, and a 2xx on every route,
is the hardening issue's bar.

Needs a built bundle (``make build``); about two minutes. Records into bench/RESULTS.md:
``.venv/bin/python -m bench.bench_fuzz --record``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import httpx

from bench.common import record, uvicorn_server

# A request's path as the schema names it: ids of stored and loaded resources as {id}.
_IDS = (
    (re.compile(r"/ValueSet/(?!\$)[^/]+"), "/ValueSet/{id}"),
    (re.compile(r"/CodeSystem/(?!\$)[^/]+"), "/CodeSystem/{id}"),
    (re.compile(r"/OperationDefinition/[^/]+"), "/OperationDefinition/{id}"),
)


def _route(method: str, url: str, base: str) -> str:
    path = url.split("?", 1)[0].removeprefix(base)
    for pattern, named in _IDS:
        path = pattern.sub(named, path)
    return f"{method} {path}"


def fuzz(base: str, examples: int, phases: str, workdir: Path) -> tuple[dict[str, Counter[int]], str]:
    """Per route, the count of answers by class (2, 4, 5); and schemathesis's summary line."""
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{base}/openapi.json",
        "--include-path-regex", "^/fhir/", "-n", str(examples), "--checks", "not_a_server_error",
        "--phases", phases, "--report", "har", "--report-dir", str(workdir), "--no-color",
    ]  # fmt: skip
    finished = subprocess.run(command, capture_output=True, text=True, check=False, cwd=workdir)  # its .schemathesis/ there
    summary = next((line.strip() for line in finished.stdout.splitlines() if " generated, " in line), finished.stdout[-300:])
    answers: dict[str, Counter[int]] = defaultdict(Counter)
    for har in workdir.glob("har-*.json"):
        for entry in json.loads(har.read_text())["log"]["entries"]:
            answers[_route(entry["request"]["method"], entry["request"]["url"], base)][entry["response"]["status"] // 100] += 1
    return answers, summary


def stored(base: str) -> set[str]:
    """The ids of the ValueSets stored on the server."""
    bundle = httpx.get(f"{base}/fhir/ValueSet", timeout=30).raise_for_status().json()
    return {entry["resource"]["id"] for entry in bundle.get("entry", [])}


def documented(base: str) -> set[str]:
    """The routes the schema documents under /fhir."""
    paths = httpx.get(f"{base}/openapi.json", timeout=30).json()["paths"]
    routes = set()
    for path, methods in paths.items():
        if path.startswith("/fhir/"):
            shape = re.sub(r"\{[^}]+\}", "{id}", path)
            routes |= {f"{verb.upper()} {shape}" for verb in methods}
    return routes


def report(answers: dict[str, Counter[int]], routes: set[str], summary: str) -> str:
    lines = ["| route | 2xx | 4xx | 5xx |", "|---|---|---|---|"]
    lines += [f"| `{route}` | {answers[route][2]} | {answers[route][4]} | {answers[route][5]} |" for route in sorted(routes)]
    without = sorted(route for route in routes if not answers[route][2])
    fives = sum(counts[5] for counts in answers.values())
    lines += [
        "",
        f"schemathesis: {summary}. Documented FHIR routes: {len(routes)}; without a 2xx: {', '.join(without) or 'none'}; "
        f"5xx answers: {fives} (undocumented methods, answered 405, are left out of the table).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=10, help="schemathesis's --max-examples per route")
    parser.add_argument("--phases", default="examples,coverage,fuzzing,stateful", help="schemathesis's --phases")
    parser.add_argument("--record", action="store_true", help="write the section into bench/RESULTS.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="termsearch-fuzz-") as workdir, uvicorn_server(command=("app",)) as (base, _):
        before = stored(base)
        answers, summary = fuzz(base, args.examples, args.phases, Path(workdir))
        body = report(answers, documented(base), summary)
        for value_set_id in stored(base) - before:  # the store as the run found it
            httpx.delete(f"{base}/fhir/ValueSet/{value_set_id}", timeout=30).raise_for_status()
    if args.record:
        record("Schemathesis over the FHIR routes", body, " ".join([".venv/bin/python -m bench.bench_fuzz", *sys.argv[1:]]))
    else:
        print(body)


if __name__ == "__main__":
    main()
