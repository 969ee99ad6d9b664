"""Precision and recall of the HPO → ICD-10-CM alignments, on the hand-checked sample.

``indexer/knowledge/alignment_sample.tsv`` holds alignments drawn at random (fixed seed) from the
label method and from five cosine bands of the dense method, each judged by hand: is the
ICD-10-CM code a right code to record for the HPO concept? This script aligns the store's HPO
and ICD-10-CM as the build does (dense down to 0.80, to count every band), and reports per
method and band: how many alignments there are, how many of them the sample judged, and the
precision there (with a 95% Wilson interval). Recall is estimated against the right alignments
of both methods together (precision × count per band), since no complete gold exists.

    python bench/bench_alignment.py [--record]
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

from rich.progress import Progress

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import record  # noqa: E402
from indexer.catalog import read_catalog  # noqa: E402
from indexer.embeddings import EmbeddingCache  # noqa: E402
from indexer.encoders import default_model_dir, load_encoder  # noqa: E402
from indexer.knowledge.alignment import align  # noqa: E402
from indexer.settings import Settings  # noqa: E402
from indexer.store import StoreReader, make_engine  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "indexer" / "knowledge" / "alignment_sample.tsv"
BANDS = ((0.80, 0.85), (0.85, 0.90), (0.90, 0.93), (0.93, 0.96), (0.96, 1.01))


def wilson(yes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = yes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    settings = Settings()
    reader = StoreReader(make_engine(settings.store.url))
    systems = sorted((s for s in reader.systems() if s.key in ("hpo", "icd10cm")), key=lambda s: s.key != "hpo")
    lines = [line for line in SAMPLE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    judged = {(r["hpo"], r["icd10cm"]): r["judgement"] == "yes" for r in csv.DictReader(lines, delimiter="\t")}
    with Progress(transient=True) as progress:
        catalog = read_catalog(reader, systems, progress)
        encoder = load_encoder(default_model_dir(settings.encoder), settings.encoder)
        cache = EmbeddingCache(settings.data_dir / "cache" / "embeddings", encoder)
        alignments = align(catalog, "hpo", "icd10cm", lambda texts: cache.vectors(texts, progress, "embed names"), 0.80)
    groups: dict[str, list] = {"label": [a for a in alignments if a.method == "label"]}
    for lo, hi in BANDS:
        groups[f"dense {lo:.2f}-{min(hi, 1):.2f}"] = [a for a in alignments if a.method == "dense" and lo <= a.score < hi]
    table = ["| method | alignments | judged | right | precision | 95% interval | est. right |", "|---|---|---|---|---|---|---|"]
    right_estimate: dict[str, float] = {}
    for name, members in groups.items():
        codes = [(catalog.entries[a.source].code, catalog.entries[a.target].code) for a in members]
        verdicts = [judged[c] for c in codes if c in judged]
        yes, n = sum(verdicts), len(verdicts)
        precision = yes / n if n else float("nan")
        right_estimate[name] = precision * len(members) if n else 0.0
        lo, hi = wilson(yes, n)
        table.append(f"| {name} | {len(members)} | {n} | {yes} | {precision:.3f} | {lo:.3f}-{hi:.3f} | {right_estimate[name]:.0f} |")
    every_right = sum(right_estimate.values())
    recall = right_estimate["label"] / every_right if every_right else float("nan")  # nan: the sample judged none of them
    hpo_total = sum(1 for e in catalog.of("hpo") if e.active)
    aligned = len({a.source for a in groups["label"]})
    body = "\n".join([
        f"Sample: {len(judged)} judged alignments ({SAMPLE.name}).", "", *table, "",
        f"Served (label alignments only; dense off): precision {right_estimate['label'] / max(len(groups['label']), 1):.3f}, "
        f"estimated recall {recall:.3f} of the right alignments both methods find "
        f"(dense ≥ 0.80 adds about {every_right - right_estimate['label']:.0f} right ones at far lower precision); "
        f"{aligned} of {hpo_total} active HPO concepts aligned.",
    ])
    if args.record:
        record("HPO → ICD-10-CM alignments: precision on the hand-checked sample", body, "python bench/bench_alignment.py --record")
    else:
        print(body)


if __name__ == "__main__":
    main()
