"""Search as you type, keystroke by keystroke, against the full phrase's ranking.

For each phrase, every prefix from 3 characters on is ranked by the autocomplete rewrite
(``app.search.autocomplete``, as ``$expand?filter`` does) and compared with what ``/search``
ranks for the whole phrase: is the phrase's first concept in the prefix's top 3, and is it
first. Phrases: the lay wordings of ``bench/data/everyday_icd10cm.tsv`` (ICD-10-CM scope) and
HPO layperson synonyms drawn with a fixed seed (HPO scope). Reported by how much of the phrase
was typed, with the per-keystroke latency.

    python bench/bench_autocomplete.py [--record] [--phrases N]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.autocomplete import Autocomplete  # noqa: E402
from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.bench_everyday import read_items  # noqa: E402
from bench.common import record  # noqa: E402

SEED = 20261124
BANDS = ((0.0, 0.5, "under half typed"), (0.5, 0.8, "half to 80%"), (0.8, 1.0, "80% and more (word unfinished)"))


def phrases(service, count: int) -> list[tuple[str, str]]:  # noqa: ANN001
    lay = [(q, "icd10cm") for q, kind, _ in read_items("a") if kind == "lay"][:count]
    bundle = service.bundle
    start, stop = bundle.systems["hpo"].label_range(False)
    layperson = [i for i in range(start, stop) if bundle.label_kind[i] == "layperson" and len(bundle.label_text[i]) >= 8]
    picked = random.Random(SEED).sample(layperson, min(count, len(layperson)))
    return lay + [(bundle.label_text[i].lower(), "hpo") for i in picked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--phrases", type=int, default=100, help="phrases per scope")
    args = parser.parse_args()
    settings = Settings()
    settings.search.ranking_cache = 0  # every keystroke ranked: the computation, not a kept ranking
    service = open_search_service(settings)
    typing = Autocomplete(service, settings.fhir.prefix_completions)
    found: dict[tuple[str, str], list[float]] = defaultdict(list)
    latency: list[float] = []
    threshold = settings.search.confidence_threshold
    blank: list[str] = []  # prefixes with an empty list though the whole phrase finds a row above the threshold
    prefixes = 0
    for phrase, system in phrases(service, args.phrases):
        scope = Scope((system,))
        full = [r.row for r in service.rank(phrase, scope, 3).rows]
        if not full:
            continue
        if service.rank(phrase, scope, 1, min_confidence=threshold).rows:
            for end in range(3, len(phrase)):
                if not phrase[:end].endswith(" "):
                    prefixes += 1
                    if not typing.rank(phrase[:end], scope, 3, threshold).rows:
                        blank.append(phrase[:end])
        for end in range(3, len(phrase)):
            prefix = phrase[:end]
            if prefix.endswith(" "):
                continue
            started = time.perf_counter()
            typed = [r.row for r in typing.rank(prefix, scope, 3).rows]
            latency.append((time.perf_counter() - started) * 1000)
            band = next(name for lo, hi, name in BANDS if lo <= end / len(phrase) < hi)
            for key in ((system, band), (system, "all prefixes")):
                found[(*key, "top1 in top3")].append(float(full[0] in typed))
                found[(*key, "same top1")].append(float(typed[:1] == full[:1]))
    rows = ["| scope | typed | prefixes | phrase's first in top 3 | same first |", "|---|---|---|---|---|"]
    for system in ("icd10cm", "hpo"):
        for band in (*(name for *_, name in BANDS), "all prefixes"):
            cells = found.get((system, band, "top1 in top3"))
            if cells:
                same = found[(system, band, "same top1")]
                rows.append(f"| {system} | {band} | {len(cells)} | {np.mean(cells):.3f} | {np.mean(same):.3f} |")
    body = "\n".join([
        f"Bundle {service.bundle.id}; {args.phrases} phrases per scope (seed {SEED}).", "", *rows, "",
        f"Per keystroke, in process, ms: p50 {np.percentile(latency, 50):.1f}, p95 {np.percentile(latency, 95):.1f}.",
        "",
        f"Blank lists at the confidence threshold {threshold} (as `$expand?filter` shows): {len(blank)} of {prefixes} prefixes "
        "of 3 or more characters whose whole phrase finds a row above it" + (f" ({', '.join(repr(p) for p in blank[:10])})" if blank else "") + ".",
    ])
    if args.record:
        record("Autocomplete keystroke by keystroke", body, "python bench/bench_autocomplete.py --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
