"""Everyday clinical queries into ICD-10-CM (lay wording, abbreviations, misspellings), with each
knowledge source switched on and off.

The first set (``bench/data/everyday_icd10cm.tsv``) was written before the knowledge sources
were built or tuned; the second (``everyday_icd10cm_b.tsv``, ``--data b``) after the first
set's results were known and before the MeSH entry terms were added; the third
(``everyday_icd10cm_c.tsv``, ``--data c``) by a helper that saw neither the project's term
tables nor the other sets nor any result, before the tables' second version was written
(``--fresh`` keeps only its queries that are in no earlier set). An item counts as found when a returned code starts with one of its accepted
codes. Items whose query equals a label of ICD-10-CM itself are left out (no self-retrieval).

A source is switched off by leaving its labels out of the ranking (``Scope.exclude_labels``)
and, for bridges, by the ``search.bridges`` setting (MeSH entry terms: by hiding the bundle's):
the same bundle, so that only the knowledge differs.

    python bench/bench_everyday.py [--data a|b|c] [--fresh] [--misses] [--per-kind N] [--record]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.search.service import SearchService  # noqa: E402
from app.search.values import Mode  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import GoldItem, labels_by_source, read_gold, record  # noqa: E402
from indexer.knowledge.term_tables import ABBREVIATIONS, LAY_TERMS  # noqa: E402
from indexer.lexical.normalise import fold  # noqa: E402

SETS = {"a": "everyday_icd10cm.tsv", "b": "everyday_icd10cm_b.tsv", "c": "everyday_icd10cm_c.tsv"}
SYSTEM = "icd10cm"
KINDS = ("lay", "abbreviation", "misspelled")


def read_items(name: str, per_kind: int | None = None) -> list[GoldItem]:
    return read_gold(SETS[name], per_kind)


def configurations(service: SearchService) -> dict[str, tuple[frozenset[int], bool, bool]]:
    """name -> (labels left out, bridges on, MeSH entry-term bridges on)."""
    by_source = labels_by_source(service.bundle.label_knowledge)
    every = frozenset().union(*by_source.values())
    out = {"release labels only": (every, False, False)}
    for source, labels in by_source.items():
        out[f"+ {source} only"] = (every - labels, False, False)
    out["+ bridges only"] = (every, True, True)
    for source, labels in by_source.items():
        out[f"all but {source}"] = (labels, True, True)
    out["all but MeSH entry terms"] = (frozenset(), True, False)
    out["all but bridges"] = (frozenset(), False, False)
    out["all (served)"] = (frozenset(), True, True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", choices=sorted(SETS), default="a", help="which query set")
    parser.add_argument("--fresh", action="store_true", help="only the queries no earlier set has")
    parser.add_argument("--misses", action="store_true", help="list the served ranking's misses at 10")
    parser.add_argument("--per-kind", type=int, help="only the first N items of each kind (a smoke run)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    bundle = service.bundle
    start, stop = bundle.systems[SYSTEM].label_range(True)
    own = {fold(bundle.label_text[i]).strip() for i in range(start, stop) if bundle.label_knowledge[i] is None}
    items = read_items(args.data, args.per_kind)
    if args.fresh:
        earlier = {fold(q) for name in sorted(SETS)[: sorted(SETS).index(args.data)] for q, _, _ in read_items(name)}
        items = [item for item in items if fold(item[0]) not in earlier]
    kept = [item for item in items if fold(item[0]).strip() not in own]
    tabled = {kind: {fold(row.text) for row in table.read()} for kind, table in (("abbreviation", ABBREVIATIONS), ("lay", LAY_TERMS))}
    in_table = {kind: sum(1 for q, k, _ in kept if k == kind and fold(q) in texts) for kind, texts in tabled.items()}
    rows = []
    latency: list[float] = []
    misses: list[str] = []
    entry_terms = bundle.entry_terms
    for name, (excluded, bridges, mesh) in configurations(service).items():
        service.settings.bridges = bridges
        bundle.entry_terms = entry_terms if mesh else {}
        for mode in (Mode.HYBRID,) if name != "all (served)" else tuple(Mode):
            hits: dict[tuple[str, int], list[float]] = defaultdict(list)
            for query, kind, accepted in kept:
                started = time.perf_counter()
                ranking = service.rank(query, Scope((SYSTEM,), exclude_labels=excluded), 10, mode)
                if name == "all (served)" and mode is Mode.HYBRID:
                    latency.append((time.perf_counter() - started) * 1000)
                codes = [bundle.concepts[r.concept].code for r in ranking.rows]
                found = [any(code.startswith(a) for a in accepted) for code in codes]
                if name == "all (served)" and mode is Mode.HYBRID and not any(found[:1]):
                    misses.append(f"{query} ({'|'.join(accepted)}): {', '.join(codes[:3])}{' (in 10)' if any(found) else ''}")
                for group in (kind, "all"):
                    for k in (1, 3, 10):
                        hits[(group, k)].append(float(any(found[:k])))
            cells = [f"{np.mean(hits[(g, k)]):.3f}" for g in (*KINDS, "all") for k in (1, 3, 10)]
            rows.append(f"| {name} | {mode.value} | " + " | ".join(cells) + " |")
    service.settings.bridges = settings.search.bridges
    bundle.entry_terms = entry_terms
    counts = {kind: sum(1 for _, k, _ in kept if k == kind) for kind in KINDS}
    header = " | ".join(f"{g} @{k}" for g in (*KINDS, "all") for k in (1, 3, 10))
    body = "\n".join([
        f"Bundle {bundle.id}; knowledge: {bundle.manifest.knowledge.get('alignments', {})}.",
        f"Set {SETS[args.data]}{' (only queries in no earlier set)' if args.fresh else ''}: {len(items)} items written before tuning; "
        f"{len(items) - len(kept)} left out because the query is a label of ICD-10-CM itself; {len(kept)} kept "
        f"({', '.join(f'{k} {n}' for k, n in counts.items())}). {in_table['abbreviation']} of the abbreviations and "
        f"{in_table['lay']} of the lay queries are terms of the project's tables (written independently, same common "
        "usage): read those columns with that in mind.",
        "", f"| knowledge | mode | {header} |", "|---" * 14 + "|", *rows, "",
        f"In-process hybrid latency, all knowledge on, ms: p50 {np.percentile(latency, 50):.1f}, "
        f"p95 {np.percentile(latency, 95):.1f}.",
    ])
    if args.misses:
        print("Not first (served, hybrid):", *misses, sep="\n  ")
    if args.record:
        fresh = " --fresh" if args.fresh else ""
        title = f"Everyday queries into ICD-10-CM ({SETS[args.data]}{fresh}), knowledge sources on and off"
        record(title, body, f"python bench/bench_everyday.py --data {args.data}{fresh} --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
