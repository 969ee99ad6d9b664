"""Is-a subtrees at HPO + ICD-10-CM size: how long the bundle takes to resolve one, and a
subtree-scoped search end to end (``/search?ancestor=``, ``$expand`` of ``isa/``, ``/match``
``target_ancestor`` all resolve subtrees this way: ``Bundle.subtree`` over the catalog's own
child links, in memory, never a recursive store query; timed uncached, as a new ancestor costs).

    python bench/bench_subtree.py [--record]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import record  # noqa: E402

ROOTS = (("hpo", "HP:0000118"), ("hpo", "HP:0001626"), ("icd10cm", "S00-T88"), ("icd10cm", "V00-Y99"), ("icd10cm", "I00-I99"))
REPEATS = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    service = open_search_service(Settings())
    bundle = service.bundle
    rows = ["| system | ancestor | concepts in subtree | resolve p50 ms | resolve max ms | scoped search p50 ms |", "|---|---|---|---|---|---|"]
    for system, code in ROOTS:
        row = bundle.concept_index(system, code)
        if row is None:
            continue
        timings = []
        for _ in range(REPEATS):
            bundle.subtree.cache_clear()
            started = time.perf_counter()
            subtree = bundle.subtree(row)
            timings.append((time.perf_counter() - started) * 1000)
        searches = []
        for query in ("fracture of thigh bone", "fast heart rate", "pedestrian injured"):
            started = time.perf_counter()
            service.rank(query, Scope((system,), subtree=bundle.subtree(row), root=row), 10)
            searches.append((time.perf_counter() - started) * 1000)
        rows.append(
            f"| {system} | {code} | {len(subtree)} | {np.percentile(timings, 50):.1f} | {max(timings):.1f} | "
            f"{np.percentile(searches, 50):.1f} |"
        )
    body = "\n".join([f"Bundle {bundle.id} ({len(bundle.concepts)} concepts); {REPEATS} resolutions each.", "", *rows])
    if args.record:
        record("Is-a subtrees: resolution and scoped search", body, "python bench/bench_subtree.py --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
