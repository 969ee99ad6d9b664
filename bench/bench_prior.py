"""The prior's weight (how common a concept is, ``prior`` in :data:`app.search.confidence.FEATURES`,
:mod:`indexer.knowledge.hpoa`): HPO Hits@1 of the hybrid ranking at several weights, on the
development sets it is chosen on (the HPO halves of the understanding sets a, c-h) and on those
that only check the choice (set b, written blind and never tuned on; the spelling set). ICD-10-CM
has no annotations (its prior is 0 everywhere), so its rankings do not change.

``--fit`` writes the weight with the most development hits (the smallest of equals) into the model
directory's ``calibration.json`` (the next build carries it), with how it was chosen; then check
the recalibration step on the new logits (``bench/bench_recalibration.py``; ``--fit`` refits it).

    python bench/bench_prior.py [--weights 0,0.5,1,1.5,2,2.5] [--per-kind N] [--fit] [--record]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.confidence import PRIOR, Calibration  # noqa: E402
from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.search.service import SearchService  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.bench_understanding import SETS, kept_items  # noqa: E402
from bench.common import GoldItem, record  # noqa: E402
from indexer.encoders import default_model_dir  # noqa: E402
from indexer.encoders.manifest import CALIBRATION_FILE  # noqa: E402

SYSTEM = "hpo"
CHOSEN_ON = ("a", "c", "d", "e", "f", "g", "h")
CHECKED_ON = ("b", "spelling")


def with_weight(calibration: Calibration, weight: float, chosen_on: str = "") -> Calibration:
    """``calibration`` with the prior's weight ``weight`` (and, when ``chosen_on`` says how it was
    chosen, that in its record of what it was fitted on)."""
    weights = list(calibration.weights)
    weights[PRIOR] = weight
    fitted_on = calibration.fitted_on.split("; prior:", 1)[0] + (f"; prior: {chosen_on}" if chosen_on else "")
    return replace(calibration, weights=tuple(weights), fitted_on=fitted_on)


def hits(service: SearchService, items: list[GoldItem]) -> int:
    rankings = service.rank_many([query for query, _, _ in items], Scope((SYSTEM,)), 1)
    concepts = service.bundle.concepts
    pairs = zip(items, rankings, strict=True)
    return sum(bool(r.rows) and concepts[r.rows[0].row].code in accepted for (_, _, accepted), r in pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", default="0,0.5,1,1.5,2,2.5", help="prior weights on the ranker's own logit scale")
    parser.add_argument("--per-kind", type=int, help="only the first N items of each kind of each set (a smoke run)")
    parser.add_argument("--fit", action="store_true", help="write the best development weight into calibration.json")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    served = service.calibration
    sets = {name: kept_items(service, SETS[name][SYSTEM], SYSTEM, args.per_kind)[0] for name in (*CHOSEN_ON, *CHECKED_ON)}
    weights = [float(w) for w in args.weights.split(",")]
    table: dict[float, dict[str, int]] = {}
    for weight in weights:
        service.calibration = with_weight(served, weight)  # drops the rankings kept
        table[weight] = {name: hits(service, items) for name, items in sets.items()}
    development = {weight: sum(row[name] for name in CHOSEN_ON) for weight, row in table.items()}
    best = max(weights, key=lambda w: (development[w], -w))
    names = [*CHOSEN_ON, *CHECKED_ON]
    lines = [
        "| weight | " + " | ".join(f"{n} (n={len(sets[n])})" for n in names) + " | development, all |",
        "|---" * (len(names) + 2) + "|",
        *(
            f"| {w:g}{' (chosen)' if w == best else ''}{' (served)' if w == served.prior_weight else ''} | "
            + " | ".join(str(table[w][n]) for n in names)
            + f" | {development[w]} |"
            for w in weights
        ),
    ]
    body = "\n".join(
        [
            f"Bundle {service.bundle.id}, encoder {service.encoder.id}. HPO Hits@1, hybrid; the weight is on the",
            "ranker's own logit scale (before the recalibration step, which changes no order); chosen on the development",
            f"sets {', '.join(CHOSEN_ON)}; sets {' and '.join(CHECKED_ON)} only check it.",
            "",
            *lines,
        ]
    )
    if args.fit:
        items = sum(len(sets[n]) for n in CHOSEN_ON)
        how = f"weight {best:g} by bench_prior.py on development sets {', '.join(CHOSEN_ON)}"
        chosen = with_weight(served, best, f"{how} (HPO Hits@1 {development[best]} of {items}), bundle {service.bundle.id}")
        chosen.save(default_model_dir(settings.encoder) / CALIBRATION_FILE)
        print(f"prior weight {best:g} written; check the recalibration step next: python bench/bench_recalibration.py")
    if args.record:
        record("Prior: how common a concept is", body, "python bench/bench_prior.py " + " ".join(sys.argv[1:]))
    else:
        print(body)


if __name__ == "__main__":
    main()
