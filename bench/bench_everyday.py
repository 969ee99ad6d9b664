"""Everyday clinical queries into ICD-10-CM (lay wording, abbreviations, misspellings), with each
knowledge source switched on and off.

Three sets, reported together and each on its own: the first (``bench/data/everyday_icd10cm.tsv``,
set a) was written before the knowledge sources were built or tuned; the second
(``everyday_icd10cm_b.tsv``, b) after the first set's results were known and before the MeSH
entry terms were added; the third (``everyday_icd10cm_c.tsv``, c) by a helper that saw neither
the project's term tables nor the other sets nor any result, before the tables' second version
was written (``--fresh`` keeps of each set only its queries that are in no earlier set). An item
counts as found when a returned code starts with one of its accepted codes. Items whose query
equals a label of ICD-10-CM itself are left out (no self-retrieval).

A source is switched off by leaving its labels out of the ranking (``Scope.exclude_labels``)
and, for bridges, by the ``search.bridges`` setting (MeSH entry terms: by hiding the bundle's):
the same bundle, so that only the knowledge differs.

    python bench/bench_everyday.py [--fresh] [--misses] [--per-kind N] [--record]
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
    parser.add_argument("--fresh", action="store_true", help="of each set, only the queries no earlier set has")
    parser.add_argument("--misses", action="store_true", help="list the served ranking's misses at 1")
    parser.add_argument("--per-kind", type=int, help="only the first N items of each kind of each set (a smoke run)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    bundle = service.bundle
    start, stop = bundle.systems[SYSTEM].label_range(True)
    own = {fold(bundle.label_text[i]).strip() for i in range(start, stop) if bundle.label_knowledge[i] is None}
    tabled = {kind: {fold(row.text) for row in table.read()} for kind, table in (("abbreviation", ABBREVIATIONS), ("lay", LAY_TERMS))}
    kept: list[tuple[str, GoldItem]] = []  # (set, item)
    notes = []
    earlier: set[str] = set()
    for name in SETS:
        items = read_items(name, args.per_kind)
        if args.fresh:
            items = [item for item in items if fold(item[0]) not in earlier]
        earlier |= {fold(query) for query, _, _ in read_items(name)}
        own_set = [item for item in items if fold(item[0]).strip() not in own]
        kept += [(name, item) for item in own_set]
        counts = ", ".join(f"{kind} {sum(1 for _, k, _ in own_set if k == kind)}" for kind in KINDS)
        in_table = {kind: sum(1 for q, k, _ in own_set if k == kind and fold(q) in texts) for kind, texts in tabled.items()}
        notes.append(
            f"{name} ({SETS[name]}): {len(items)} items, {len(items) - len(own_set)} left out as labels of ICD-10-CM itself, "
            f"{len(own_set)} kept ({counts}); {in_table['abbreviation']} abbreviations and {in_table['lay']} lay queries "
            "are terms of the project's tables."
        )
    groups = (*KINDS, "all")
    rows = []
    latency: list[float] = []
    misses: list[str] = []
    entry_terms = bundle.entry_terms
    for config, (excluded, bridges, mesh) in configurations(service).items():
        service.settings.bridges = bridges
        bundle.entry_terms = entry_terms if mesh else {}
        service.forget()  # the knowledge changed in place: no ranking kept from another configuration
        served = config == "all (served)"
        for mode in tuple(Mode) if served else (Mode.HYBRID,):
            hits: dict[tuple[str, int], list[float]] = defaultdict(list)
            for name, (query, kind, accepted) in kept:
                started = time.perf_counter()
                ranking = service.rank(query, Scope((SYSTEM,), exclude_labels=excluded), 10, mode)
                if served and mode is Mode.HYBRID:
                    latency.append((time.perf_counter() - started) * 1000)
                codes = [bundle.concepts[r.row].code for r in ranking.rows]
                found = [any(code.startswith(a) for a in accepted) for code in codes]
                if served and mode is Mode.HYBRID and not any(found[:1]):
                    misses.append(f"{query} ({'|'.join(accepted)}): {', '.join(codes[:3])}{' (in 10)' if any(found) else ''}")
                for group in (kind, "all", name):
                    for k in (1, 10):
                        hits[(group, k)].append(float(any(found[:k])))
            cells = [f"{np.mean(hits[(g, k)]):.3f}" for g in groups for k in (1, 10)]
            cells += [f"{np.mean(hits[(n, 1)]):.3f}" for n in SETS]
            rows.append(f"| {config} | {mode.value} | " + " | ".join(cells) + " |")
    service.settings.bridges = settings.search.bridges
    bundle.entry_terms = entry_terms
    header = " | ".join([*(f"{g} @{k}" for g in groups for k in (1, 10)), *(f"set {n} @1" for n in SETS)])
    body = "\n".join([
        f"Bundle {bundle.id}; knowledge: {bundle.manifest.knowledge.get('alignments', {})}.",
        f"Sets{' (of each, only queries in no earlier set)' if args.fresh else ''}, each written before tuning:",
        *(f"- {note}" for note in notes),
        "",
        f"| knowledge | mode | {header} |", "|---" * (2 + 2 * len(groups) + len(SETS)) + "|", *rows, "",
        f"In-process hybrid latency, all knowledge on, ms: p50 {np.percentile(latency, 50):.1f}, "
        f"p95 {np.percentile(latency, 95):.1f}.",
    ])
    if args.misses:
        print("Not first (served, hybrid):", *misses, sep="\n  ")
    if args.record:
        fresh = " --fresh" if args.fresh else ""
        record(f"Everyday queries into ICD-10-CM{fresh}, knowledge sources on and off", body,
               f"python bench/bench_everyday.py{fresh} --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
