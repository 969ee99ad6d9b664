"""The second Platt step of the confidence (``Calibration.recalibration``): fitted on the top rows
of real queries as well as generated ones, checked on queries used by neither.

The ranker's fit (``bench/bench_ranking.py --fit``) sees only generated items, none of which
equals a label (leave-one-out), so an exact match of an everyday phrasing tops out near 0.8 while
it is right about 19 times in 20: on the project's everyday sets the top row's confidence was
0.11-0.21 below its accuracy. This step maps the ranker's logit ``z`` to ``σ(a·z + b)`` (a > 0:
no order changes), fitted by logistic regression of "the top row is right" on ``z`` over:

- **fit**: the generated ``fit`` split of bench_ranking (misspellings, synonyms, codes, detailed
  names, nonsense and off-topic, which keep the threshold meaningful), the understanding sets a, c,
  d and e (development) of both systems and the three everyday ICD-10-CM sets;
- **checked on**: the understanding set b (written blind, never tuned on), set f (read for classes
  of failure, never fitted on: the development sets turn underconfident as rules are written for
  their failures and set b does not, so a step fitted on f too fits set b worse: its top-row ECE
  0.029 served against 0.062 for a step fitted on the real sets a, c, d, e, f alone, 2026-11-30) and
  bench_ranking's ``test`` split (other concepts, the other half of the off-topic questions).

It reports the expected calibration error of the top row (10 bins) before and after, and the
share of no-answer queries above each step's threshold (the image of 0.3 through it). ``--fit`` writes the step into the
model directory's ``calibration.json`` (the next build carries it).

    python bench/bench_recalibration.py [--fit] [--per-kind N] [--record]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.confidence import Calibration  # noqa: E402
from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.search.service import SearchService  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.bench_everyday import SETS as EVERYDAY  # noqa: E402
from bench.bench_ranking import generated_items, reliability  # noqa: E402
from bench.bench_understanding import DEVELOPMENT  # noqa: E402
from bench.bench_understanding import SETS as UNDERSTANDING  # noqa: E402
from bench.common import read_gold, record  # noqa: E402
from indexer.encoders import default_model_dir  # noqa: E402
from indexer.encoders.manifest import CALIBRATION_FILE  # noqa: E402

K = 10
BASE_THRESHOLD = 0.3  # the confidence threshold bench_ranking chose on the ranker's own scale (no step)
BASE_LOGIT = float(np.log(BASE_THRESHOLD / (1 - BASE_THRESHOLD)))  # a step maps it to its own threshold
Tops = list[tuple[float, bool, bool]]  # per query: the top row's logit, whether it is right, whether the query has an answer


def real_tops(service: SearchService, sets: list[tuple[str, str]], per_kind: int | None) -> Tops:
    """The top rows of the hybrid ranking on query sets of bench/data ((system, file) each)."""
    tops: Tops = []
    for system, file in sets:
        items = read_gold(file, per_kind)
        rankings = service.rank_many([query for query, _, _ in items], Scope((system,)), K)
        for (_, _, accepted), ranking in zip(items, rankings, strict=True):
            rows = ranking.rows
            right = bool(rows) and service.bundle.concepts[rows[0].row].code.startswith(tuple(accepted))
            tops.append((_logit(service, rows[0].features) if rows else -20.0, right, True))
    return tops


def generated_tops(service: SearchService, split: str, per_kind: int) -> Tops:
    """The top rows of the hybrid ranking on bench_ranking's generated items of ``split``."""
    tops: Tops = []
    for item in generated_items(service, split, per_kind):
        rows = service.rank(item.query, Scope((item.system,), exclude_labels=item.exclude_labels), K).rows
        right = bool(rows) and item.gold is not None and item.gold in (rows[0].row, rows[0].category)
        tops.append((_logit(service, rows[0].features) if rows else -20.0, right, item.gold is not None))
    return tops


def _logit(service: SearchService, features: tuple[float, ...]) -> float:
    return float(service.calibration.logit(np.asarray([features], dtype=np.float32))[0])


def fit_step(tops: Tops) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    z = np.asarray([logit for logit, _, _ in tops]).reshape(-1, 1)
    right = np.asarray([int(r) for _, r, _ in tops])
    model = LogisticRegression(C=100.0, max_iter=2000).fit(z, right)
    return float(model.coef_[0][0]), float(model.intercept_[0])


def summary(tops: Tops, calibration: Calibration) -> tuple[float, float]:
    """(ECE of the top rows that have an answer under ``calibration``'s step, share of no-answer
    queries at or above the step's threshold: the image of BASE_THRESHOLD, the same for every step)."""
    z = np.asarray([logit for logit, _, _ in tops])
    answered = np.asarray([has for _, _, has in tops])
    right = np.asarray([float(r) for _, r, _ in tops])
    ece, _ = reliability(calibration.stepped(z)[answered], right[answered])
    passing = z[~answered] >= BASE_LOGIT
    return ece, float(passing.mean()) if passing.size else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fit", action="store_true", help="write the fitted step into the model directory's calibration.json")
    parser.add_argument("--per-kind", type=int, default=None, help="items per kind of each set (a smoke run; generated: 200)")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    unstepped = replace(service.calibration, recalibration=(1.0, 0.0), recalibrated_on="")
    served_step = service.calibration.recalibration
    service.calibration = unstepped  # logits and rankings as the ranker's own fit gives them (the step changes no order)
    generated = args.per_kind or 200
    development = [item for name in DEVELOPMENT for item in UNDERSTANDING[name].items()]
    fit_sets = [*development, *(("icd10cm", file) for file in EVERYDAY.values())]
    parts = {
        "fit: generated (bench_ranking fit split)": generated_tops(service, "fit", generated),
        f"fit: understanding {', '.join(DEVELOPMENT)}, everyday a, b, c": real_tops(service, fit_sets, args.per_kind),
        "check: understanding b (never tuned on)": real_tops(service, list(UNDERSTANDING["b"].items()), args.per_kind),
        "check: understanding f (read for failures, not fitted on)": real_tops(
            service, list(UNDERSTANDING["f"].items()), args.per_kind
        ),
        "check: generated (bench_ranking test split)": generated_tops(service, "test", generated),
    }
    fitted = fit_step([top for name, tops in parts.items() if name.startswith("fit") for top in tops])
    steps = {
        name: replace(unstepped, recalibration=step)
        for name, step in (("none", (1.0, 0.0)), ("served", served_step), ("fitted now", fitted))
    }
    header = " | ".join(
        f"ECE, {name} | no-answer ≥ {float(step.stepped(np.asarray(BASE_LOGIT))):.3f}, {name}" for name, step in steps.items()
    )
    lines = [f"| queries | n | {header} |", "|---" * (2 + 2 * len(steps)) + "|"]
    for name, tops in parts.items():
        cells = [f"{value:.3f}" for step in steps.values() for value in summary(tops, step)]
        lines.append(f"| {name} | {len(tops)} | " + " | ".join(cells).replace("nan", "") + " |")
    described = f"fit on {sum(len(t) for n, t in parts.items() if n.startswith('fit'))} top rows, bundle {service.bundle.id}"
    if args.fit:
        path = default_model_dir(settings.encoder) / CALIBRATION_FILE
        replace(Calibration.load(path), recalibration=fitted, recalibrated_on=described).save(path)
        print(f"wrote recalibration {fitted} into {path} (rebuild to serve it)")
    body = "\n".join([
        f"Bundle {service.bundle.id}; hybrid top row; the step σ(a·z + b) over the ranker's logit z. "
        f"Served: a = {served_step[0]:.3f}, b = {served_step[1]:.3f}; fitted now: a = {fitted[0]:.3f}, b = {fitted[1]:.3f} "
        f"({described}). ECE over the queries with an answer (10 bins); the no-answer column: nonsense and off-topic "
        f"queries whose top row reaches the step's threshold: the image of {BASE_THRESHOLD} (chosen by bench_ranking on the "
        f"ranker's own scale) through it; the served default is {settings.search.confidence_threshold}.",
        "",
        *lines,
    ])  # fmt: skip
    if args.record:
        record("Recalibration of the confidence on real queries", body, "python " + " ".join(sys.argv))
    else:
        print(body)


if __name__ == "__main__":
    main()
