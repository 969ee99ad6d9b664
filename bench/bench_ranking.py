"""The ranking core, per channel and fused, on items that never equal an indexed label.

Item kinds, built from the served bundle with fixed seeds (``fit`` and ``test`` use disjoint
concepts):

- ``synonym``: a concept's non-display label (layperson, exact synonym, inclusion, includes...)
  as the query, every label with that text left out of the index (leave-one-out);
- ``misspelled``: a concept's display with one or two realistic edits (``evaluation.typos``);
- ``code``: a code typed as people type it (``i219``, ``HP_0001649``, lower case, no dot);
- ``detailed``: the name of a concept that carries a side or an encounter, its clauses reversed
  ("initial encounter for closed fracture, fracture of ... right femur"), whose siblings differ
  only in those details;
- ``nonsense`` and ``off-topic``: queries with no right answer (keyboard mash; everyday
  non-clinical questions), where every row is wrong.

Per kind it reports Hits@1/10 of each channel alone (dense, lexical, char) and of the fused
hybrid ranking, the share of nonsense/off-topic queries with a row at or above the confidence
threshold, and the calibration (expected calibration error and a reliability table of the top
row's confidence). ``--fit`` fits the calibration (``app.search.confidence.fit``) on the ``fit`` items and writes
``calibration.json`` into the model directory without the second Platt step (``bench/bench_recalibration.py
--fit`` fits it anew for the new logits; rebuild to serve both); the report is always on the ``test`` items.

    python bench/bench_ranking.py [--fit] [--record] [--per-kind N]
"""

from __future__ import annotations

import argparse
import random
import re
import string
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.confidence import fit  # noqa: E402
from app.search.loader import open_search_service  # noqa: E402
from app.search.scope import Scope  # noqa: E402
from app.search.service import SearchService  # noqa: E402
from app.search.values import Mode, Ranked  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import record  # noqa: E402
from evaluation.typos import misspell  # noqa: E402
from indexer.encoders import default_model_dir  # noqa: E402
from indexer.encoders.manifest import CALIBRATION_FILE  # noqa: E402
from indexer.lexical.normalise import fold  # noqa: E402

OFF_TOPIC = [
    "how to bake bread", "weather tomorrow in paris", "cheap flights to london", "best pizza near me",
    "how to change a car tyre", "football results today", "learn to play guitar", "what time is it in tokyo",
    "buy a used bicycle", "recipe for chocolate cake", "how to paint a fence", "movie times tonight",
    "train timetable to boston", "install python on windows", "cute cat videos", "stock price of apple",
    "how tall is the eiffel tower", "wedding dress shops", "garden furniture sale", "how to knit a scarf",
    "lyrics of a famous song", "translate hello to spanish", "homework help algebra", "hotel booking in rome",
    "fix a leaking tap", "dog training tips", "best laptop for students", "how to make coffee",
    "concert tickets this weekend", "mortgage interest rates", "how to write a cover letter", "museum opening hours",
    "used cars for sale", "how to grow tomatoes", "birthday party ideas", "shipping a parcel abroad",
    "history of the roman empire", "how to tie a tie", "chess opening strategies", "rent an apartment downtown",
]


_DETAILED = re.compile(r"\b(?:right|left|bilateral)\b|\b(?:initial|subsequent) encounter|sequela$")


@dataclass(frozen=True)
class Item:
    kind: str
    query: str
    system: str
    gold: int | None  # catalog row; None: no right answer
    exclude_labels: frozenset[int] = frozenset()


def generated_items(service: SearchService, split: str, per_kind: int) -> list[Item]:
    bundle = service.bundle
    rng = random.Random(f"bench-ranking-{split}")
    by_text: dict[str, list[int]] = defaultdict(list)
    for label, text in enumerate(bundle.label_text):
        by_text[fold(text)].append(label)
    items: list[Item] = []
    for key, system in bundle.systems.items():
        rows = [r for r in range(len(bundle.concepts)) if bundle.concepts[r].system == key and bundle.concepts[r].active
                and not bundle.concepts[r].grouping and (r % 2 == 0) == (split == "fit")]
        rng.shuffle(rows)
        synonyms = misspelled = codes = detailed = 0
        for row in rows:
            display = bundle.concepts[row].display
            if detailed < per_kind and "," in display and _DETAILED.search(display):
                head, _, tail = display.rpartition(",")
                items.append(Item("detailed", f"{tail.strip()}, {head}", key, row))
                detailed += 1
            labels = list(bundle.concept_labels(row))
            if synonyms < per_kind and len(labels) > 1:
                label = rng.choice(labels[1:])
                text = bundle.label_text[label]
                others = set(by_text[fold(text)])
                if set(labels) - others:
                    items.append(Item("synonym", text, key, row, frozenset(others)))
                    synonyms += 1
            if misspelled < per_kind:
                typo = misspell(bundle.concepts[row].display, rng, edits=rng.choice((1, 1, 2)))
                if typo and fold(typo) not in by_text:
                    items.append(Item("misspelled", typo, key, row))
                    misspelled += 1
            if codes < per_kind // 4:
                code = bundle.concepts[row].code
                typed = rng.choice((code.lower(), code.replace(".", ""), code.replace(":", "_"), code.lower().replace(".", "")))
                items.append(Item("code", typed, key, row))
                codes += 1
            if min(synonyms, misspelled) >= per_kind and codes >= per_kind // 4 and (detailed >= per_kind or key != "icd10cm"):
                break
        for _ in range(per_kind // 4):
            mash = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))
            mash += " " + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8)))
            items.append(Item("nonsense", mash, key, None))
        half = OFF_TOPIC[: len(OFF_TOPIC) // 2] if split == "fit" else OFF_TOPIC[len(OFF_TOPIC) // 2 :]
        items += [Item("off-topic", text, key, None) for text in half]
    return items


def _rank(service: SearchService, item: Item, mode: Mode, k: int = 10):  # noqa: ANN202
    scope = Scope((item.system,), exclude_labels=item.exclude_labels)
    return service.rank(item.query, scope, k, mode).rows


def _answered(ranked: Ranked, item: Item) -> int:
    """The concept a ranked row answers: a code listed for its category answers the category too."""
    return item.gold if item.gold is not None and item.gold in (ranked.row, ranked.category) else ranked.row


def _char_only(service: SearchService, item: Item, k: int = 10) -> list[int]:
    bundle = service.bundle
    start, stop = bundle.systems[item.system].label_range(False)
    scores, ids = bundle.chargrams.search(item.query, k * 20, (start, stop))
    seen: dict[int, None] = {}
    for label in ids.tolist():
        if label in item.exclude_labels or bundle.grouping[bundle.label_concept[label]]:
            continue
        seen.setdefault(int(bundle.label_concept[label]), None)
    return list(seen)[:k]


def _fit_groups(service: SearchService, items: list[Item]) -> list[tuple[np.ndarray, int | None]]:
    """Per item, every candidate's features and the index of the right one (None if absent)."""
    groups = []
    for item in items:
        rows = [row for row in _rank(service, item, Mode.HYBRID, k=service.settings.fusion_depth) if row.category is None]
        if rows:
            right = next((i for i, ranked in enumerate(rows) if ranked.row == item.gold), None)
            groups.append((np.asarray([row.features for row in rows], dtype=np.float32), right))
    return groups


def reliability(confidence: np.ndarray, correct: np.ndarray, bins: int = 10) -> tuple[float, list[str]]:
    """Expected calibration error of ``confidence`` against ``correct`` over equal-width bins, and a
    table row per bin (range, rows, mean confidence, share right)."""
    edges = np.linspace(0, 1, bins + 1)
    lines, ece = [], 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        inside = (confidence >= lo) & ((confidence < hi) if hi < 1 else (confidence <= hi))
        if inside.any():
            gap = abs(confidence[inside].mean() - correct[inside].mean())
            ece += inside.mean() * gap
            lines.append(f"| {lo:.1f}–{hi:.1f} | {inside.sum()} | {confidence[inside].mean():.3f} | {correct[inside].mean():.3f} |")
    return float(ece), lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", action="store_true", help="fit the calibration on the fit items first")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--per-kind", type=int, default=200, help="items of each kind per system")
    args = parser.parse_args()
    settings = Settings()
    service = open_search_service(settings)
    if args.fit:
        fit_items = generated_items(service, "fit", args.per_kind)
        groups = _fit_groups(service, fit_items)
        described = f"bench_ranking fit split: {len(fit_items)} items, bundle {service.bundle.id}"
        calibration = fit(groups, described, prior_weight=service.calibration.prior_weight)
        calibration.save(default_model_dir(settings.encoder) / CALIBRATION_FILE)  # the next build carries it
        service.calibration = calibration
        print(f"fitted on {len(fit_items)} items: {calibration}")
        print("the recalibration step on real queries is fitted for the old logits: run bench/bench_recalibration.py --fit next")
    items = generated_items(service, "test", args.per_kind)
    threshold = settings.search.confidence_threshold
    hits: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    top_conf, top_correct, latency = [], [], defaultdict(list)
    for item in items:
        rankings = {}
        for mode in Mode:
            started = time.perf_counter()
            rankings[mode.value] = [_answered(r, item) for r in _rank(service, item, mode)]
            latency[mode.value].append((time.perf_counter() - started) * 1000)
        rankings["char"] = _char_only(service, item)
        hybrid = _rank(service, item, Mode.HYBRID)
        if item.gold is None:
            hits[(item.system, item.kind, "above threshold")].append(float(bool(hybrid) and hybrid[0].confidence >= threshold))
        else:
            for name, ranked in rankings.items():
                hits[(item.system, item.kind, f"{name} @1")].append(float(ranked[:1] == [item.gold]))
                hits[(item.system, item.kind, f"{name} @10")].append(float(item.gold in ranked[:10]))
        if hybrid:
            top_conf.append(hybrid[0].confidence)
            top_correct.append(float(_answered(hybrid[0], item) == item.gold))
    columns = ["dense @1", "lexical @1", "char @1", "hybrid @1", "dense @10", "lexical @10", "char @10", "hybrid @10"]
    lines = ["| system | kind | n | " + " | ".join(columns) + " | above threshold |", "|---" * (len(columns) + 4) + "|"]
    for (system, kind) in dict.fromkeys((s, k) for s, k, _ in hits):
        n = sum(1 for i in items if i.system == system and i.kind == kind)
        cells = [f"{np.mean(hits[(system, kind, c)]):.3f}" if (system, kind, c) in hits else "" for c in columns]
        above = hits.get((system, kind, "above threshold"))
        lines.append(f"| {system} | {kind} | {n} | " + " | ".join(cells) + f" | {np.mean(above):.3f} |" if above else
                     f"| {system} | {kind} | {n} | " + " | ".join(cells) + " | |")
    ece, bins = reliability(np.asarray(top_conf), np.asarray(top_correct))
    body = "\n".join([
        f"Bundle {service.bundle.id}, encoder {service.encoder.id}; calibration: {service.calibration.fitted_on}.",
        f"Test split: {len(items)} items ({args.per_kind} per kind and system; codes and negatives a quarter of that).",
        f"Confidence threshold {threshold}: the last column is the share of queries with no right answer whose top row reaches it.",
        "", *lines, "",
        f"Calibration of the top row (hybrid), expected calibration error {ece:.3f}:", "",
        "| confidence | rows | mean confidence | share right |", "|---|---|---|---|", *bins, "",
        "In-process latency per query, ms (p50 / p95): "
        + ", ".join(f"{m} {np.percentile(v, 50):.1f} / {np.percentile(v, 95):.1f}" for m, v in latency.items()),
    ])
    if args.record:
        record("Ranking core: channels, fusion and calibration", body, "python bench/bench_ranking.py " + " ".join(sys.argv[1:]))
    else:
        print(body)


if __name__ == "__main__":
    main()
