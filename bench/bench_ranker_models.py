"""Which model should order the candidates (issue 38: "LightGBM lambdarank or another well-kept
library; measure and choose"): the shipped linear ranker against LightGBM's lambdarank, fitted
on the same features of the same candidates.

Both are fitted on the fit split of ``bench_ranking`` (queries made from the labels of even
catalog rows: synonyms left out of their concept, misspellings, codes, detailed ICD-10-CM names,
nonsense) and compared on what neither saw: that bench's test split (odd rows), and the query
sets written for the project (everyday ICD-10-CM sets a-c, the understanding sets of ICD-10-CM
and HPO). For each query the core's hybrid ranking gives its top ``fusion_depth`` candidates
and their features (``Ranked.features``); each model re-orders them, and Hits@1 is whether its
first candidate is right (``bench_ranking``: the gold concept; the query sets: a code starting
with an accepted one). The linear ranker's order is the core's own.

Needs a built bundle (``make build``) and ``lightgbm`` (the training extra).
Run: ``.venv/bin/python -m bench.bench_ranker_models [--per-kind N] [--record]``.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.search.confidence import fit
from app.search.loader import open_search_service
from app.search.scope import Scope
from app.search.service import SearchService
from app.search.values import Mode
from app.settings import Settings
from bench import bench_everyday, bench_understanding
from bench.bench_ranking import Item, generated_items
from bench.common import read_gold, record


@dataclass(frozen=True)
class Group:
    """One query's candidates: their features, which are right, and what kind of query it is."""

    source: str  # the set
    kind: str
    features: np.ndarray  # (candidates, features)
    right: np.ndarray  # bool per candidate


def candidates(service: SearchService, query: str, scope: Scope) -> list:
    rows = service.rank(query, scope, service.settings.fusion_depth, Mode.HYBRID).rows
    return [row for row in rows if row.category is None]  # a code listed for its category is ranked by the category


def labelled(service: SearchService, items: list[Item], source: str) -> list[Group]:
    groups = []
    for item in items:
        rows = candidates(service, item.query, Scope((item.system,), exclude_labels=item.exclude_labels))
        if rows:
            right = np.asarray([row.row == item.gold for row in rows])
            groups.append(Group(source, f"{item.system} {item.kind}", np.asarray([r.features for r in rows], np.float32), right))
    return groups


def gold_sets(service: SearchService, per_kind: int | None) -> list[Group]:
    """The project's query sets: (set name, system, items)."""
    bundle = service.bundle
    sets = [(f"everyday {name}", "icd10cm", file) for name, file in bench_everyday.SETS.items()]
    sets += [(f"understanding {system}", system, file) for system, file in bench_understanding.SETS["a"].items()]
    groups = []
    for name, system, file in sets:
        for query, kind, accepted in read_gold(file, per_kind):
            rows = candidates(service, query, Scope((system,)))
            if rows:
                codes = [bundle.concepts[row.row].code for row in rows]
                right = np.asarray([any(code.startswith(a) for a in accepted) for code in codes])
                groups.append(Group(name, kind, np.asarray([r.features for r in rows], np.float32), right))
    return groups


def lightgbm_ranker(groups: list[Group], seed: int = 20261128) -> Callable[[np.ndarray], np.ndarray]:
    from lightgbm import LGBMRanker

    useful = [g for g in groups if g.right.any() and len(g.right) > 1]
    model = LGBMRanker(
        objective="lambdarank", n_estimators=300, learning_rate=0.05, num_leaves=15, min_child_samples=20,
        subsample=0.8, subsample_freq=1, colsample_bytree=0.9, random_state=seed, verbose=-1,
    )  # fmt: skip
    model.fit(
        np.concatenate([g.features for g in useful]),
        np.concatenate([g.right.astype(int) for g in useful]),
        group=[len(g.right) for g in useful],
        eval_at=[1],
    )
    return lambda features: np.asarray(model.predict(features))


def hits_at_1(groups: list[Group], score: Callable[[np.ndarray], np.ndarray]) -> dict[tuple[str, str], list[float]]:
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for g in groups:
        hit = float(g.right[int(np.argmax(score(g.features)))])
        out[(g.source, g.kind)].append(hit)
        out[(g.source, "all")].append(hit)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=200, help="bench_ranking items of each kind per system")
    parser.add_argument("--set-per-kind", type=int, default=None, help="items of each kind of the query sets (all)")
    parser.add_argument("--kinds", action="store_true", help="a row per kind of query too (printed, never recorded)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    settings.search.ranking_cache = 0
    service = open_search_service(settings)
    started = time.perf_counter()
    fitting = labelled(service, generated_items(service, "fit", args.per_kind), "fit")
    tests = labelled(service, generated_items(service, "test", args.per_kind), "bench_ranking test") + gold_sets(
        service, args.set_per_kind
    )
    collected = time.perf_counter() - started
    shipped = service.calibration
    groups = [(g.features, int(np.argmax(g.right)) if g.right.any() else None) for g in fitting]
    refit = fit(groups, "refit", prior_weight=shipped.prior_weight)
    models: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "linear (shipped)": shipped.logit,
        "linear (refit here)": refit.logit,
        "LightGBM lambdarank": lightgbm_ranker(fitting),
    }
    results = {name: hits_at_1(tests, score) for name, score in models.items()}
    timing = {}
    for name, score in models.items():
        start = time.perf_counter()
        for g in tests:
            score(g.features)
        timing[name] = (time.perf_counter() - start) * 1000 / len(tests)
    keys = sorted(results["linear (shipped)"], key=lambda key: (key[0], key[1] != "all", key[1]))
    keys = [key for key in keys if key[1] == "all" or (args.kinds and not args.record)]
    lines = ["| set | kind | n | " + " | ".join(models) + " |", "|---|---|---|" + "---|" * len(models)]
    for key in keys:
        n = len(results["linear (shipped)"][key])
        cells = [f"{np.mean(results[name][key]):.3f}" for name in models]
        lines.append(f"| {key[0]} | {key[1]} | {n} | " + " | ".join(cells) + " |")
    body = "\n".join([
        f"Bundle {service.bundle.id}; fitted on {len(fitting)} queries of the fit split "
        f"({sum(g.right.any() for g in fitting)} with the right concept among the candidates); candidates: the hybrid top "
        f"{settings.search.fusion_depth}; Hits@1 of each model's order (collecting the features: {collected:.0f} s).",
        "", *lines, "",
        "Scoring one query's candidates, ms: " + ", ".join(f"{name} {ms:.3f}" for name, ms in timing.items()) + ".",
    ])  # fmt: skip
    if args.record:
        record(
            "Ranker models: linear against LightGBM lambdarank", body, ".venv/bin/python -m bench.bench_ranker_models --record"
        )
    else:
        print(body)


if __name__ == "__main__":
    main()
