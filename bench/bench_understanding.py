"""What clinicians, patients and parents write, into ICD-10-CM and HPO, per kind of query, with
each knowledge source and the query grammar switched on and off.

The sets (``bench/data/understanding_icd10cm.tsv``, ``understanding_hpo.tsv``) were written on
2026-11-28 by a helper that saw neither the project's knowledge tables, its query grammar, its
other sets nor any search result, before any of the understanding issue's work; gold codes
checked against the releases only. An item counts as found when a returned code starts with one
of its accepted codes (a category accepts its codes). Items whose query equals a label of the
release searched are left out (no self-retrieval); those that equal a label a knowledge source
added (a vocabulary phrasing or table term written independently, from the same common usage)
are kept and counted, and ``strict @1`` is Hits@1 without them too. A knowledge source is switched off by leaving
its labels out of the ranking (``Scope.exclude_labels``), the grammar by the ``search.grammar``
setting: one bundle, so that only the knowledge differs.

Set b (``understanding_icd10cm_b.tsv``, ``understanding_hpo_b.tsv``: 240 and 180 queries of the
same kinds) was written the same way on 2026-11-29, after the grammar, tables and vocabulary
existed, by another helper that saw none of them; no rule or row was written from its misses,
so it measures what the product understands of phrasings nobody here tuned for.

Set c (``understanding_icd10cm_c.tsv``, ``understanding_hpo_c.tsv``: 200 and 180 queries, the same
kinds less ICD-10-CM history) was written the same way on 2026-11-29 as a development set: its
misses are read to find classes of failure, and set b checks what was changed after reading them.

Set d (``understanding_icd10cm_d.tsv``, ``understanding_hpo_d.tsv``: 200 and 150 queries) was
written the same way on 2026-11-29, a second development set with two new kinds: ``other_system``
(a concept as another vocabulary labels it: SNOMED CT names with their semantic tags, MeSH's
inverted headings, MedDRA, Read and ICPC-2 terms, older coding phrasing) and ``hierarchy`` (the
less used corners: ICD-10-CM's external causes, Z factors, neoplasm behaviours, perinatal and
congenital codes; HPO's inheritance, onset, course, frequency and modifiers).

Set e (``understanding_icd10cm_e.tsv``, ``understanding_hpo_e.tsv``: 160 and 150 queries) was
written the same way on 2026-11-29, a third development set of the kinds the hybrid ranking was
weakest on: HPO clinician, lay and parent phrasings (50 each); ICD-10-CM shorthand, lay, coder
keywords and specific diagnoses (40 each). Its first figures were recorded before anything was
changed after reading it.

Set f (``understanding_icd10cm_f.tsv``, ``understanding_hpo_f.tsv``: 200 and 150 queries, 25 of each
kind: ICD-10-CM shorthand, history, lay, coder, specific, misspelled, other_system and hierarchy;
HPO clinician, lay, parent, misspelled, other_system and hierarchy) was written the same way on
2026-11-30, a fourth development set, a day after the others and after the rules and rows they
led to; its first figures were recorded before anything was changed after reading it.

Set g (``understanding_icd10cm_g.tsv``, ``understanding_hpo_g.tsv``: 160 and 120 queries, 20 of each
of the same kinds) was written the same way later on 2026-11-30, after the rules and rows set f led
to, by a helper that saw none of them nor any other set; its first figures (bench/HISTORY.md)
measured how far those changes carry to phrasings nobody here read, and its misses were then read
for classes of failure: a development set since.

The spelling set (``spelling_icd10cm.tsv``, ``spelling_hpo.tsv``: 120 and 80 queries) was written
the same way on 2026-11-30 by a helper that saw nothing of the project: terms misspelled as people
type them, 30 (ICD-10-CM) and 20 (HPO) of each kind: ``phonetic`` (spelled as it sounds), ``typo``
(a slip of the keys), ``split_or_joined`` (words split or run together) and ``british_or_variant``
(a British or variant spelling, sometimes also misspelled). Its first figures were measured on the
code before and after the session's speller changes, and no rule or row was written from its misses.

    python bench/bench_understanding.py [--set a|b|c|d|e|f|g|h|spelling] [--system icd10cm|hpo] [--quick] [--per-kind N]
        [--record]
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
from bench.bench_ranking import reliability  # noqa: E402
from bench.common import GoldItem, labels_by_source, read_gold, record  # noqa: E402
from indexer.lexical.normalise import fold  # noqa: E402

SETS = {
    "a": {"icd10cm": "understanding_icd10cm.tsv", "hpo": "understanding_hpo.tsv"},
    "b": {"icd10cm": "understanding_icd10cm_b.tsv", "hpo": "understanding_hpo_b.tsv"},
    "c": {"icd10cm": "understanding_icd10cm_c.tsv", "hpo": "understanding_hpo_c.tsv"},
    "d": {"icd10cm": "understanding_icd10cm_d.tsv", "hpo": "understanding_hpo_d.tsv"},
    "e": {"icd10cm": "understanding_icd10cm_e.tsv", "hpo": "understanding_hpo_e.tsv"},
    "f": {"icd10cm": "understanding_icd10cm_f.tsv", "hpo": "understanding_hpo_f.tsv"},
    "g": {"icd10cm": "understanding_icd10cm_g.tsv", "hpo": "understanding_hpo_g.tsv"},
    "h": {"icd10cm": "understanding_icd10cm_h.tsv", "hpo": "understanding_hpo_h.tsv"},
    "spelling": {"icd10cm": "spelling_icd10cm.tsv", "hpo": "spelling_hpo.tsv"},
}
DEVELOPMENT = ("a", "c", "d", "e")  # the sets the confidence's second Platt step is fitted on (bench/bench_recalibration.py)
SEEN_BY_CALIBRATION = {
    name: "the confidence's second Platt step was fitted on this set's top rows with others"
    if name in DEVELOPMENT
    else "neither the ranker nor the recalibration ever saw this set"
    for name in SETS
}
TITLES = {
    "a": "Understanding: everyday queries per kind, knowledge on and off",
    "b": "Understanding, set b (never tuned on): everyday queries per kind, knowledge on and off",
    "c": "Understanding, set c (development): everyday queries per kind, knowledge on and off",
    "d": "Understanding, set d (development: other vocabularies' labels, other hierarchies): everyday queries per kind, "
    "knowledge on and off",
    "e": "Understanding, set e (development: clinician, lay, parent and coder phrasings): everyday queries per kind, "
    "knowledge on and off",
    "f": "Understanding, set f (development: every kind of both systems, written 2026-11-30): everyday queries per kind, "
    "knowledge on and off",
    "g": "Understanding, set g (every kind of both systems, written 2026-11-30 after set f's changes): everyday queries "
    "per kind, knowledge on and off",
    "h": "Understanding, set h (every kind of both systems, written 2026-11-30 after set g's changes; a development set "
    "since its first figures, bench/HISTORY.md): everyday queries per kind, knowledge on and off",
    "spelling": "Understanding, spelling set (misspelled everyday terms, written 2026-11-30, never tuned on): per kind, "
    "knowledge on and off",
}
Item = GoldItem


def kept_items(service: SearchService, path: str, system: str, per_kind: int | None) -> tuple[list[Item], set[str]]:
    """The set's items (the first ``per_kind`` of each kind) whose query is no label of the release
    of ``system``, and the queries of those that are a label a knowledge source added."""
    bundle = service.bundle
    start, stop = bundle.systems[system].label_range(True)
    own, added = set(), set()
    for i in range(start, stop):
        (own if bundle.label_knowledge[i] is None else added).add(fold(bundle.label_text[i]).strip())
    kept = [item for item in read_gold(path, per_kind) if fold(item[0]).strip() not in own]
    return kept, {query for query, _, _ in kept if fold(query).strip() in added}


def configurations(service: SearchService, quick: bool) -> dict[str, tuple[frozenset[int], bool]]:
    """name -> (labels left out, grammar on)."""
    by_source = labels_by_source(service.bundle.label_knowledge)
    every = frozenset().union(*by_source.values())
    out = {"all (served)": (frozenset(), True)}
    if quick:
        return out
    out["all but the grammar"] = (frozenset(), False)
    for source, labels in by_source.items():
        out[f"all but {source}"] = (labels, True)
    out["release labels only, no grammar"] = (every, False)
    return out


def evaluate(
    service: SearchService,
    system: str,
    items: list[Item],
    excluded: frozenset[int],
    mode: Mode,
    added: set[str],
    misses: list[str] | None = None,
    top: list[tuple[float, bool]] | None = None,
) -> dict[tuple[str, int], list[float]]:
    """Hits@1 and @10 per kind (and "all", and "strict" @1); each top row's (confidence, right)
    into ``top`` when given."""
    bundle = service.bundle
    hits: dict[tuple[str, int], list[float]] = defaultdict(list)
    for query, kind, accepted in items:
        ranking = service.rank(query, Scope((system,), exclude_labels=excluded), 10, mode)
        codes = [bundle.concepts[r.row].code for r in ranking.rows]
        found = [any(code.startswith(a) for a in accepted) for code in codes]
        if top is not None:
            top.append((ranking.rows[0].confidence, found[0]) if ranking.rows else (0.0, False))
        for group in (kind, "all"):
            for k in (1, 10):
                hits[(group, k)].append(float(any(found[:k])))
        if misses is not None and mode is Mode.HYBRID and not any(found[:1]):
            misses.append(f"{kind}: {query} ({'|'.join(accepted)}): {', '.join(codes[:3])}{' (in 10)' if any(found) else ''}")
        if query not in added:
            hits[("strict", 1)].append(float(any(found[:1])))
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--set",
        choices=sorted(SETS),
        default="a",
        help="a: written 2026-11-28; b: 2026-11-29, never tuned on; c-h: development; "
        "spelling: misspelled terms, never tuned on",
    )
    parser.add_argument("--system", choices=sorted(SETS["a"]), action="append")
    parser.add_argument("--quick", action="store_true", help="the served configuration only")
    parser.add_argument("--misses", action="store_true", help="list the served ranking's misses at 1")
    parser.add_argument("--per-kind", type=int, help="only the first N items of each kind (a smoke run)")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when hybrid Hits@1 is below a single channel's on a kind")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    sections: list[str] = []
    misses: list[str] | None = [] if args.misses else None
    losses: list[str] = []
    sets = SETS[args.set]
    for system in args.system or sorted(sets):
        items, added = kept_items(service, sets[system], system, args.per_kind)
        kinds = list(dict.fromkeys(kind for _, kind, _ in items))
        rows, served = [], {}
        top: list[tuple[float, bool]] = []
        for name, (excluded, grammar) in configurations(service, args.quick).items():
            service.settings.grammar = grammar
            for mode in tuple(Mode) if name == "all (served)" else (Mode.HYBRID,):
                started = time.perf_counter()
                served_hybrid = name == "all (served)" and mode is Mode.HYBRID
                shown = misses if name == "all (served)" else None
                hits = evaluate(service, system, items, excluded, mode, added, shown, top if served_hybrid else None)
                if name == "all (served)":
                    served[mode] = {kind: float(np.mean(hits[(kind, 1)])) for kind in (*kinds, "all")}
                took = (time.perf_counter() - started) * 1000 / len(items)
                cells = [f"{np.mean(hits[(g, k)]):.3f}" for g in (*kinds, "all") for k in (1, 10)] + [
                    f"{np.mean(hits[('strict', 1)]):.3f}"
                ]
                rows.append(f"| {name} | {mode.value} | " + " | ".join(cells) + f" | {took:.1f} |")
        service.settings.grammar = settings.search.grammar
        below = below_a_channel(served)
        ece, _ = reliability(np.asarray([c for c, _ in top]), np.asarray([r for _, r in top], dtype=float))
        losses += [f"{system} {line}" for line in below]
        counts = ", ".join(f"{kind} {sum(1 for _, k, _ in items if k == kind)}" for kind in kinds)
        header = " | ".join(f"{g} @{k}" for g in (*kinds, "all") for k in (1, 10))
        sections += [
            f"**{system}**: {len(read_gold(sets[system], args.per_kind))} items, {len(items)} kept ({counts}); {len(added)} of "
            "them equal a label a knowledge source added (strict @1 leaves those out too).",
            "",
            f"| configuration | mode | {header} | strict @1 | ms/query |",
            "|---" * (4 + 2 * (len(kinds) + 1)) + "|",
            *rows,
            "",
            "Hybrid below a single channel at 1: " + ("; ".join(below) if below else "on no kind") + ".",
            "",
            f"Calibration of the served top row: expected calibration error {ece:.3f} over {len(top)} queries "
            f"(10 bins; {SEEN_BY_CALIBRATION[args.set]}).",
            "",
        ]
    body = "\n".join([f"Bundle {service.bundle.id}.", "", *sections])
    if misses:
        print("Not first (served, hybrid):", *misses, sep="\n  ")
    if losses:
        print("Hybrid below a single channel at 1:", *losses, sep="\n  ")
    if args.record:
        record(TITLES[args.set], body, "python " + " ".join(sys.argv))
    else:
        print(body)
    if args.check and losses:
        sys.exit(1)


def below_a_channel(served: dict[Mode, dict[str, float]]) -> list[str]:
    """Each kind of query on which a single channel finds the right concept first more often than
    the hybrid ranking, as "kind: dense 0.700 > hybrid 0.650"."""
    hybrid = served.get(Mode.HYBRID, {})
    return [
        f"{kind}: {mode.value} {scores[kind]:.3f} > hybrid {hybrid[kind]:.3f}"
        for mode, scores in served.items()
        if mode is not Mode.HYBRID
        for kind in scores
        if scores[kind] > hybrid.get(kind, 1.0)
    ]


if __name__ == "__main__":
    main()
