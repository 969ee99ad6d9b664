"""Hybrid fusion: reciprocal rank fusion against a convex combination of cosine and BM25.

    python bench/bench_fusion.py [--model models/termsearch-biolord-minilm] [--record]

On a recipe's held-out concepts (the dev split chooses, the test split confirms), each text →
concept task of ``training compare`` (HPO layperson and exact synonyms, ICD-10-CM inclusion terms;
the search space is every concept's display, so a query's own text is never indexed) is run
dense, lexical (BM25), fused by RRF (k = 60) and by ``convex`` at several dense weights, with the
service's own fusion functions over the top ``fusion_depth`` concepts of each retriever.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.search.service import Hit, convex, rrf
from bench.common import record
from evaluation.gold import synonym_items
from evaluation.hierarchy import Hierarchy
from evaluation.runner import evaluate_ranking
from indexer.encoders import OnnxEncoder
from indexer.settings import SearchSettings, get_settings
from indexer.store import StoreReader, make_engine
from training.compare import K, MAX_ITEMS, RANKING_TASKS, Retriever, Space, concepts_of
from training.data.splits import Split
from training.recipe import Recipe

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = (0.5, 0.7, 0.8, 0.9, 0.95)
METRICS = ("hits@1", "hits@10", "mrr")


def _fusions(rrf_k: int) -> dict[str, object]:
    """Method name → function of (dense hits, lexical hits) → ranked hits."""
    methods: dict[str, object] = {"dense": lambda d, _: d, "lexical": lambda _, lx: lx, f"rrf k={rrf_k}": lambda d, lx: rrf([d, lx], rrf_k)}
    methods.update({f"convex w={w}": (lambda d, lx, w=w: convex(d, lx, w)) for w in WEIGHTS})
    return methods


def main(
    model: Annotated[Path, typer.Option(help="Model directory")] = ROOT / "models" / "termsearch-biolord-minilm",
    recipe_path: Annotated[Path, typer.Option("--recipe", help="The split of this recipe")] = ROOT / "training" / "recipes" / "biolord-minilm.yaml",
    write: Annotated[bool, typer.Option("--record", help="Append the tables to bench/RESULTS.md")] = False,
) -> None:
    recipe = Recipe.load(recipe_path)
    reader = StoreReader(make_engine(get_settings().store.url))
    search = SearchSettings()
    encoder = OnnxEncoder(model)
    methods = _fusions(search.rrf_k)
    tables = []
    with tempfile.TemporaryDirectory() as tmp:
        for system in sorted({s for s, _ in RANKING_TASKS}):
            hierarchy = Hierarchy.from_reader(reader, system)
            space = Space(list(hierarchy.labels), [hierarchy.display(c) for c in hierarchy.labels])
            dense = Retriever(space, encoder, Path(tmp) / "dense")
            lexical = Retriever(space, None, Path(tmp) / f"{system}-bm25")
            for split in (Split.DEV, Split.TEST):
                concepts = concepts_of(recipe, hierarchy, system, split)
                for task_system, kind in RANKING_TASKS:
                    if task_system != system:
                        continue
                    items = synonym_items(reader, system, kind, concepts=concepts, max_items=MAX_ITEMS, seed=1)
                    hits = {
                        item.query: (
                            [Hit(i, s, i) for i, s in dense.scored(item.query, search.fusion_depth)],
                            [Hit(i, s, i) for i, s in lexical.scored(item.query, search.fusion_depth)],
                        )
                        for item in items
                    }
                    rows = []
                    for name, fuse in methods.items():
                        ranked = lambda q, fuse=fuse: [space.codes[h.concept] for h in fuse(*hits[q])[: K * 3]]  # noqa: E731
                        report = evaluate_ranking(items, ranked, gain=hierarchy.gains, k=K)
                        rows.append(f"| {name} | " + " | ".join(f"{report.metrics[m]:.3f}" for m in METRICS) + " |")
                    tables.append(
                        f"**{system} {kind} → concept, {split.value} split** (n = {len(items)})\n\n"
                        f"| fusion | {' | '.join(METRICS)} |\n|---|" + "---|" * len(METRICS) + "\n" + "\n".join(rows) + "\n"
                    )
    body = f"Model `{encoder.id}`, fusion depth {search.fusion_depth}.\n\n" + "\n".join(tables)
    if write:
        record("Hybrid fusion: RRF against convex combination", body, "python bench/bench_fusion.py --record")
    else:
        print(body)


if __name__ == "__main__":
    typer.run(main)
