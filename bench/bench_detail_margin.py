"""Detail agreement's reach (``search.detail_margin``, :meth:`app.search.features.FeatureScorer.features`)
at several margins: hybrid Hits@1 per kind on the sets the margin is chosen on (the understanding
set a of both systems and the three everyday ICD-10-CM sets), and on set b (written blind on
2026-11-29, never tuned on), which only checks the choice.

    python bench/bench_detail_margin.py [--margins 1e9,1,0.5,0.25,0] [--per-kind N] [--record]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.loader import open_search_service  # noqa: E402
from app.search.service import SearchService  # noqa: E402
from app.search.values import Mode  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.bench_everyday import SETS as EVERYDAY  # noqa: E402
from bench.bench_understanding import SETS as UNDERSTANDING  # noqa: E402
from bench.bench_understanding import evaluate  # noqa: E402
from bench.common import GoldItem, read_gold, record  # noqa: E402

CHOSEN_ON = [
    *((f"understanding {system}", system, file) for system, file in UNDERSTANDING["a"].items()),
    *((f"everyday {name}", "icd10cm", file) for name, file in EVERYDAY.items()),
]
CHECKED_ON = [(f"understanding {system} (set b)", system, file) for system, file in UNDERSTANDING["b"].items()]


def with_margin(service: SearchService, margin: float) -> None:
    """The served core with another detail margin (its rankings kept so far dropped)."""
    service.scorer.detail_margin = service.settings.detail_margin = margin
    service.forget()


def hits_at_1(service: SearchService, system: str, items: list[GoldItem]) -> dict[str, float]:
    """Per kind (and "all"): the share of items whose first row is an accepted code (served
    hybrid, top 10: bench_understanding's :func:`~bench.bench_understanding.evaluate`)."""
    hits = evaluate(service, system, items, frozenset(), Mode.HYBRID, set())
    return {kind: float(np.mean(found)) for (kind, k), found in hits.items() if k == 1 and kind != "strict"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--margins", default="1e9,1,0.5,0.25,0")
    parser.add_argument("--per-kind", type=int, default=None, help="items per kind of each set (a smoke run)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    margins = [float(m) for m in args.margins.split(",")]
    service = open_search_service(Settings())
    served = service.settings.detail_margin
    sets = [(name, system, read_gold(file, args.per_kind)) for name, system, file in (*CHOSEN_ON, *CHECKED_ON)]
    lines = []
    for name, system, items in sets:
        by_margin = {}
        for margin in margins:
            with_margin(service, margin)
            by_margin[margin] = hits_at_1(service, system, items)
        kinds = sorted(by_margin[margins[0]], key=lambda kind: kind == "all")
        lines += [f"**{name}** ({len(items)} items)", "", "| margin | " + " | ".join(f"{k} @1" for k in kinds) + " |"]
        lines.append("|---" * (1 + len(kinds)) + "|")
        for margin, hits in by_margin.items():
            label = f"{margin:g}{' (served)' if margin == served else ''}{' (every candidate)' if margin >= 1e6 else ''}"
            lines.append(f"| {label} | " + " | ".join(f"{hits[k]:.3f}" for k in kinds) + " |")
        lines.append("")
    with_margin(service, served)
    body = "\n".join([
        f"Bundle {service.bundle.id}; hybrid, top 10. The margin is chosen on the understanding set a and the "
        "everyday sets; set b (never tuned on) only checks it.",
        "",
        *lines,
    ])  # fmt: skip
    if args.record:
        record("Detail margin", body, "python bench/bench_detail_margin.py --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
