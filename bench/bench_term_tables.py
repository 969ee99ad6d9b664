"""The project's term tables (abbreviations, lay terms): what they lent in the served bundle and
how right it is, on the judged sample.

``indexer/knowledge/term_tables_sample.tsv`` holds 300 labels drawn at random (seed 16) from those
the tables lent, each judged by a reviewer who did not write the tables: *right* (the concept is
what the term means), *partly* (narrower, broader, or a less usual meaning of an ambiguous term),
*wrong*. Per table: rows, rows that found no concept, labels lent, and the sample's shares (with
a 95% Wilson interval on "right or partly").

    python bench/bench_term_tables.py [--record]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_alignment import wilson  # noqa: E402
from bench.common import record  # noqa: E402
from indexer.bundle import Bundle, current_bundle  # noqa: E402
from indexer.knowledge.term_tables import TABLES  # noqa: E402
from indexer.settings import Settings  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "indexer" / "knowledge" / "term_tables_sample.tsv"
JUDGEMENTS = ("right", "partly", "wrong")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    bundle = Bundle(current_bundle(Settings().bundles_dir))
    lines = [line for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    judged: dict[str, Counter] = {}
    for row in csv.DictReader(lines, delimiter="\t"):
        judged.setdefault(row["table"], Counter())[row["judgement"]] += 1
    rows = []
    for table in TABLES:
        summary = bundle.manifest.knowledge.get(table.knowledge, {})
        counts = judged.get(table.knowledge, Counter())
        n = sum(counts.values())
        shares = " | ".join(f"{counts[j]} ({counts[j] / n:.2f})" for j in JUDGEMENTS)
        low, high = wilson(counts["right"] + counts["partly"], n)
        rows.append(
            f"| {table.path.name} v{summary.get('version')} | {summary.get('rows')} | {len(summary.get('unresolved', []))} | "
            f"{summary.get('labels')} | {n} | {shares} | {low:.3f}–{high:.3f} |"
        )
    body = "\n".join([
        f"Bundle {bundle.id}; sample `{SAMPLE.name}` (judged once, on the bundle of 2026-11-24; the two wrong rows were corrected after).",
        "",
        "| table | rows | rows finding no concept | labels lent | judged | right | partly | wrong | right or partly, 95% CI |",
        "|---" * 9 + "|",
        *rows,
    ])
    if args.record:
        record("Term tables: what they lend and how right it is", body, "python bench/bench_term_tables.py --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
