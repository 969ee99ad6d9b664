"""The built-in benchmarks (``GET /benchmarks``) as ``POST /benchmarks/{name}/run`` runs them:
each query's own label left out of the search (no self-retrieval), in every mode, on the served
bundle. Dense search should score clearly above BM25 here, as the model card's held-out figures
say: a query can no longer find itself by its own words.

    python bench/bench_builtin.py [--record]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluations.runs import evaluate  # noqa: E402
from app.search.loader import open_search_service  # noqa: E402
from app.search.values import Mode  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import record  # noqa: E402
from evaluation.benchmarks import BENCHMARKS  # noqa: E402
from indexer.store import StoreReader, make_engine  # noqa: E402

K = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    reader = StoreReader(make_engine(settings.store.url, settings.store))
    rows = []
    for spec in BENCHMARKS.values():
        if spec.system not in service.bundle.systems:
            continue
        benchmark = spec.build(reader)
        for mode in Mode:
            report = evaluate(service, benchmark.hierarchy, spec.system, benchmark.items, mode, K, benchmark.candidates, leave_out=True)
            m = report.metrics
            rows.append(
                f"| {spec.name} | {report.count} | {mode.value} | {m['hits@1']:.3f} | {m['hits@10']:.3f} | {m['mrr']:.3f} | {m.get(f'ndcg@{K}', float('nan')):.3f} |"
            )
    body = "\n".join([
        f"Bundle {service.bundle.id}; each query's own label (and any copy a knowledge source lent) left out.",
        "",
        f"| benchmark | items | mode | Hits@1 | Hits@10 | MRR | nDCG@{K} |",
        "|---" * 7 + "|",
        *rows,
    ])
    if args.record:
        record("Built-in benchmarks, leave-one-out, per mode", body, "python bench/bench_builtin.py --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
