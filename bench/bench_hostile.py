"""Hostile requests against the production launcher: what each is answered, how long it took, and
what it cost the server (its CPU seconds and RSS after the answer, and the peak RSS so far).

The cases of the hardening probe that once exhausted memory or a core: an inline ValueSet whose
compose imports ICD-10-CM's implicit value set thousands of times (a 45 KB and a 900 KB body), a
backtracking-catastrophic ``regex`` filter over every ICD-10-CM code, the same filter in a stored
ValueSet expanded by ``url`` again and again, and a JSON integer of 5,000 digits. While the regex
request runs, nine ``/search`` requests measure what it costs everyone else.

Needs a built bundle (``make build``); about a minute. Records into bench/RESULTS.md:
``.venv/bin/python -m bench.bench_hostile --record``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.common import percentiles, record, rss_mib, uvicorn_server

CATASTROPHIC = "(.*.*)*!"
EXPAND = "/fhir/ValueSet/$expand"
FHIR_JSON = {"content-type": "application/fhir+json"}


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _value_set(include: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceType": "ValueSet", "status": "active", "compose": {"include": include}}


def _imports(uri: str, body_bytes: int) -> bytes:
    """An inline ValueSet whose compose imports ICD-10-CM's implicit value set until the body is ``body_bytes``."""
    one = {"valueSet": [f"{uri}?fhir_vs"]}
    count = body_bytes // len(json.dumps(one))
    return json.dumps(
        {"resourceType": "Parameters", "parameter": [{"name": "valueSet", "resource": _value_set([one] * count)}]}
    ).encode()


def _regex_value_set(uri: str, value_set_id: str | None = None) -> dict[str, Any]:
    include = [{"system": uri, "filter": [{"property": "code", "op": "regex", "value": CATASTROPHIC}]}]
    resource = _value_set(include) | {"url": "urn:termsearch:bench:regex"}
    return resource | ({"id": value_set_id} if value_set_id else {})


@dataclass
class Outcome:
    case: str
    status: str
    ms: float
    cpu_s: float
    rss_mib: float
    peak_mib: float


def _measure(client: httpx.Client, pid: int, case: str, send: Callable[[httpx.Client], httpx.Response]) -> Outcome:
    cpu, started = _cpu_s(pid), time.perf_counter()
    try:
        response = send(client)
        status = str(response.status_code)
    except httpx.TransportError as error:
        status = type(error).__name__
    ms = (time.perf_counter() - started) * 1000
    time.sleep(0.5)  # work a handler left behind shows in the CPU and RSS after the answer
    rss, peak = rss_mib(pid)
    return Outcome(case, status, ms, _cpu_s(pid) - cpu, rss, peak)


def run(base: str, pid: int) -> tuple[list[Outcome], list[float], list[float]]:
    client, bystander = httpx.Client(base_url=base, timeout=120), httpx.Client(base_url=base, timeout=120)
    uri = client.get("/fhir/CodeSystem/icd10cm").raise_for_status().json()["url"]
    searches = [
        f"/search?q={q}&k=10"
        for q in ("heart attack", "asthma", "fever", "otitis media", "gout", "anemia", "migraine", "sepsis", "eczema")
    ]
    for path in searches:  # warm: the first requests after start pay for loading
        _timed(client, path)
    quiet = [_timed(client, path) for path in searches]
    outcomes: list[Outcome] = []
    regex_body = json.dumps(
        {"resourceType": "Parameters", "parameter": [{"name": "valueSet", "resource": _regex_value_set(uri)}]}
    )
    with ThreadPoolExecutor(max_workers=1) as pool:
        hostile = pool.submit(
            _measure,
            client,
            pid,
            f"regex filter `{CATASTROPHIC}` over ICD-10-CM (POST $expand)",
            lambda c: c.post(EXPAND, content=regex_body, headers=FHIR_JSON),
        )
        time.sleep(0.2)
        during = [_timed(bystander, path) for path in searches]  # another connection: the first is busy
        outcomes.append(hostile.result())
    cases: list[tuple[str, Callable[[httpx.Client], httpx.Response]]] = [
        (
            "compose importing ICD-10-CM 45 KB of times (POST $expand)",
            lambda c: c.post(EXPAND, content=_imports(uri, 45_000), headers=FHIR_JSON),
        ),
        (
            "compose importing ICD-10-CM 900 KB of times (POST $expand)",
            lambda c: c.post(EXPAND, content=_imports(uri, 900_000), headers=FHIR_JSON),
        ),
        (
            "PUT a ValueSet with that regex filter",
            lambda c: c.put("/fhir/ValueSet/bench-regex", json=_regex_value_set(uri, "bench-regex")),
        ),
        *(
            (
                f"`$expand?url=` of the stored regex ValueSet, #{n}",
                lambda c: c.get(EXPAND, params={"url": "urn:termsearch:bench:regex", "count": 10}),
            )
            for n in (1, 2, 3)
        ),
        (
            "JSON integer of 5,000 digits (POST $expand count)",
            lambda c: c.post(
                EXPAND,
                content='{"resourceType":"Parameters","parameter":[{"name":"count","valueInteger":' + "9" * 5000 + "}]}",
                headers=FHIR_JSON,
            ),
        ),
    ]
    outcomes += [_measure(client, pid, name, send) for name, send in cases]
    client.delete("/fhir/ValueSet/bench-regex")  # the store as the run found it
    client.close()
    bystander.close()
    return outcomes, quiet, during


def _timed(client: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    client.get(path).raise_for_status()
    return (time.perf_counter() - started) * 1000


def report(outcomes: list[Outcome], quiet: list[float], during: list[float], start_rss: float) -> str:
    lines = [
        f"Server RSS before the first case: {start_rss:.0f} MiB. CPU-s: the server's CPU seconds from the request "
        "to 0.5 s after its answer.",
        "",
        "| case | status | ms | server CPU-s | RSS after MiB | peak RSS MiB |",
        "|---|---|---|---|---|---|",
    ]
    lines += [f"| {o.case} | {o.status} | {o.ms:.0f} | {o.cpu_s:.2f} | {o.rss_mib:.0f} | {o.peak_mib:.0f} |" for o in outcomes]
    lines += [
        "",
        f"Nine `/search` in turn, before: p50 {percentiles(quiet)['p50']:.1f} ms, max {max(quiet):.1f} ms; "
        f"while the regex request runs: p50 {percentiles(during)['p50']:.1f} ms, max {max(during):.1f} ms.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help="write the section into bench/RESULTS.md")
    args = parser.parse_args()
    with (
        tempfile.NamedTemporaryFile(prefix="termsearch-hostile-", suffix=".log") as log,
        uvicorn_server(command=("app",), stderr=log) as (base, pid),
    ):
        start_rss = rss_mib(pid)[0]
        outcomes, quiet, during = run(base, pid)
    body = report(outcomes, quiet, during, start_rss)
    if args.record:
        record(
            "Hostile requests: answer, time, CPU and memory",
            body,
            " ".join([".venv/bin/python -m bench.bench_hostile", *sys.argv[1:]]),
        )
    else:
        print(body)


if __name__ == "__main__":
    main()
