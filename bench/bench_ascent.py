"""The ascent to the parent (``search.ascent_margin``, :meth:`app.search.descent.Descent._ascend`)
at several margins: Hits@1 and Hits@10 of the hybrid ranking on the built-in HPO benchmarks (lay
and exact synonyms, each query's own label left out), where the margin is chosen, and on the
project's everyday HPO set (bench/data/understanding_hpo.tsv, per kind), which only checks it.

    python bench/bench_ascent.py [--margins 0,0.05,0.1,0.15,0.2] [--limit N] [--record]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluations.runs import evaluate  # noqa: E402
from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.search.service import SearchService  # noqa: E402
from app.search.values import Mode  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.bench_understanding import SETS, kept_items  # noqa: E402
from bench.common import record  # noqa: E402
from evaluation.benchmarks import BENCHMARKS  # noqa: E402
from indexer.store import StoreReader, make_engine  # noqa: E402

TUNED_ON = ("hpo-lay", "hpo-synonyms")
K = 10


def with_margin(service: SearchService, margin: float) -> None:
    """The served core with another ascent margin (its rankings kept so far dropped)."""
    service.descent.ascent_margin = margin
    service.forget()


def everyday(service: SearchService, limit: int | None) -> dict[str, tuple[float, float]]:
    """Per kind of the everyday HPO set (and all): Hits@1, Hits@10."""
    items, _ = kept_items(service, SETS["a"]["hpo"], "hpo", limit)
    rankings = service.rank_many([query for query, _, _ in items], Scope(("hpo",)), K)
    by_kind: dict[str, list[tuple[bool, bool]]] = {}
    for (_, kind, accepted), ranking in zip(items, rankings, strict=True):
        codes = [service.bundle.concepts[row.row].code for row in ranking.rows]
        hit = (bool(codes[:1]) and codes[0] in accepted, any(code in accepted for code in codes))
        by_kind.setdefault(kind, []).append(hit)
        by_kind.setdefault("all", []).append(hit)
    return {kind: (sum(h[0] for h in hits) / len(hits), sum(h[1] for h in hits) / len(hits)) for kind, hits in by_kind.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--margins", default="0,0.05,0.1,0.15,0.2")
    parser.add_argument("--limit", type=int, default=None, help="items per benchmark and per kind (a smoke run)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    margins = [float(m) for m in args.margins.split(",")]
    settings = Settings()
    service = open_search_service(settings)
    reader = StoreReader(make_engine(settings.store.url, settings.store))
    benchmarks = {name: BENCHMARKS[name].build(reader) for name in TUNED_ON}
    kinds: list[str] = []
    rows = []
    for margin in margins:
        with_margin(service, margin)
        cells = []
        for benchmark in benchmarks.values():
            items = benchmark.items[: args.limit] if args.limit else benchmark.items
            report = evaluate(service, benchmark.hierarchy, "hpo", items, Mode.HYBRID, K, benchmark.candidates, leave_out=True)
            cells += [f"{report.metrics['hits@1']:.3f}", f"{report.metrics['hits@10']:.3f}"]
        measured = everyday(service, args.limit)
        kinds = kinds or sorted(measured, key=lambda kind: kind == "all")
        cells += [f"{measured[kind][0]:.3f}" for kind in kinds]
        rows.append(f"| {margin:g}{' (served)' if margin == settings.search.ascent_margin else ''} | " + " | ".join(cells) + " |")
    header = [f"{name} @1 | {name} @10" for name in TUNED_ON] + [f"everyday {kind} @1" for kind in kinds]
    body = "\n".join([
        f"Bundle {service.bundle.id}; hybrid, top {K}; the built-in benchmarks with each query's own label left out "
        f"({', '.join(f'{n} {len(b.items)} items' for n, b in benchmarks.items())}); the margin is chosen on them, "
        "the everyday set only checks it.",
        "",
        "| margin | " + " | ".join(header) + " |",
        "|---" * (1 + 2 * len(TUNED_ON) + len(kinds)) + "|",
        *rows,
    ])  # fmt: skip
    if args.record:
        record("Ascent to the parent", body, "python bench/bench_ascent.py --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
