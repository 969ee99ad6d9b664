"""Shared benchmark helpers: a uvicorn server on loopback, percentiles, machine facts, RESULTS.md."""

from __future__ import annotations

import csv
import os
import platform
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import httpx
import numpy as np
import psutil

DATA = Path(__file__).with_name("data")  # the query sets
GoldItem = tuple[str, str, tuple[str, ...]]  # query, kind, accepted codes (a code or a prefix of codes)
RESULTS = Path(__file__).with_name("RESULTS.md")  # the current figures, a section per benchmark
HISTORY = Path(__file__).with_name("HISTORY.md")  # every recorded run, oldest first


def read_gold(name: str, per_kind: int | None = None) -> list[GoldItem]:
    """A query set of bench/data: ``#`` comment lines, then a TSV of query, kind and accepted
    codes separated by ``|``; only the first ``per_kind`` items of each kind when given (a smoke run)."""
    lines = [line for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    items = [(r["query"], r["kind"], tuple(r["accepted"].split("|"))) for r in csv.DictReader(lines, delimiter="\t")]
    seen: Counter[str] = Counter()
    kept = []
    for item in items:
        seen[item[1]] += 1
        if per_kind is None or seen[item[1]] <= per_kind:
            kept.append(item)
    return kept


def labels_by_source(label_knowledge: Sequence[str | None]) -> dict[str, frozenset[int]]:
    """The label ids each knowledge source added (``abbreviations``, ``vocabulary``...), to leave
    a source out of a ranking by ``Scope.exclude_labels``."""
    found: dict[str, set[int]] = {}
    for label, source in enumerate(label_knowledge):
        if source is not None:
            found.setdefault(source.split(":")[0], set()).add(label)
    return {source: frozenset(labels) for source, labels in sorted(found.items())}


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    values = np.asarray(samples_ms)
    return {name: round(float(np.percentile(values, q)), 2) for name, q in (("p50", 50), ("p95", 95), ("p99", 99))}


def machine() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line),
        platform.processor(),
    )
    memory_kib = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")))
    return f"{os.cpu_count()} cores ({cpu}), {memory_kib / 2**20:.0f} GiB, Python {platform.python_version()}"


def memory_mib(pid: int, *fields: str) -> tuple[float, ...]:
    """Memory fields of a process's ``/proc/{pid}/status`` (VmRSS, VmHWM, RssAnon...) in MiB."""
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return tuple(int(status[field].split()[0]) / 1024 for field in fields)


def rss_mib(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) in MiB of a process and its descendants together (``python -m app``'s
    uvicorn workers: pages they share, such as the bundle's mapped files, count once per process)."""
    pids = [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]
    now, peak = zip(*(memory_mib(each, "VmRSS", "VmHWM") for each in pids), strict=True)
    return sum(now), sum(peak)


def read_once(path: Path) -> None:
    """Read a file through, so that its pages are in the page cache (as a serving host's are)."""
    with path.open("rb") as file:
        while file.read(1 << 24):
            pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


UVICORN = ("uvicorn", "app.main:app", "--log-level", "warning")


@contextmanager
def uvicorn_server(
    env: dict[str, str] | None = None,
    timeout_s: float = 120,
    command: Sequence[str] = UVICORN,
    stderr: IO[bytes] | int | None = None,
) -> Iterator[tuple[str, int]]:
    """Serve ``python -m {command}`` (default: uvicorn over ``app.main:app``; ``("app",)`` is the
    production launcher) on a free loopback port; yields (base URL, server pid)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", *command, "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, **(env or {})},
        stderr=stderr,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                raise RuntimeError("uvicorn exited before it was ready")
            time.sleep(0.5)
        else:
            raise RuntimeError("uvicorn not ready in time")
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


def record(title: str, body: str, command: str) -> None:
    """Write a run's section into bench/RESULTS.md, in place of that benchmark's section of the
    same title (a new one goes last), append it to bench/HISTORY.md, and echo it."""
    run = f"Run: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {machine()}  \nCommand: `{command}`"  # one paragraph, two lines
    section = f"## {title}\n\n{run}\n\n{body.strip()}\n"
    print(section)
    with HISTORY.open("a", encoding="utf-8") as handle:
        handle.write(f"\n{section}")
    RESULTS.write_text(replace_section(RESULTS.read_text(encoding="utf-8"), title, section), encoding="utf-8")


def replace_section(document: str, title: str, section: str) -> str:
    """``document`` with its ``## title`` section (up to the next ``## ``) replaced by ``section``,
    or with ``section`` added at the end."""
    start = document.find(f"\n## {title}\n")
    if start < 0:
        return f"{document.rstrip()}\n\n{section}"
    end = document.find("\n## ", start + 1)
    return f"{document[: start + 1]}{section}{document[end:] if end >= 0 else ''}"
