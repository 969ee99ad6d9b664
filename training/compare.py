"""Compare encoders (and BM25) on the held-out test concepts of a recipe's split (or its dev
concepts, to choose among candidates: :func:`dev_score`).

Tasks (DESIGN.md §4): text → concept with lay, exact-synonym, misspelled-name and inclusion-term
queries (search space: every concept's display, so a query's own text is never indexed); SCT-L2P-style
leaf → parent (search space: the non-leaf concepts); Schulz & Juric term similarity (ROC AUC,
easy and hard); category separation (overlap error).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.gold import RankingItem, category_terms, leaf_to_parent, misspelled_items, synonym_items
from evaluation.hierarchy import Hierarchy, active_concepts
from evaluation.pairs import term_pairs
from evaluation.runner import evaluate_ranking, evaluate_separation, evaluate_similarity
from indexer.encoders import Encoder
from indexer.lexical import TantivyBuilder, TantivyIndex
from indexer.lexical.base import Label
from indexer.records import Concept
from indexer.store import StoreReader
from training.data import open_text
from training.data.splits import Split, split_of
from training.recipe import Recipe

MAX_ITEMS = 500
K = 10
# HPO branches for category separation: upper vs lower limb (close), metabolism (distant).
CATEGORIES = ("HP:0002817", "HP:0002814", "HP:0001939")
MISSPELLED = "misspelled"
# Text → concept query kinds, tried in every system of the recipe; a kind with no item there is left out.
QUERY_KINDS = ("layperson", "exact", MISSPELLED, "inclusion")


@dataclass
class Space:
    """A searchable set of concepts, one display each."""

    codes: list[str]
    texts: list[str]


class Retriever:
    """Top-k codes of a space, by an encoder (cosine) or by BM25 when ``encoder`` is None."""

    def __init__(self, space: Space, encoder: Encoder | None, workdir: Path) -> None:
        self.space = space
        self.encoder = encoder
        if encoder is None:
            TantivyBuilder().build(workdir, (Label(i, text) for i, text in enumerate(space.texts)))
            self.lexical = TantivyIndex(workdir)
        else:
            self.matrix = encoder.encode(space.texts)

    def __call__(self, query: str) -> list[str]:
        return [self.space.codes[i] for i, _ in self.scored(query, K * 3)]

    def scored(self, query: str, n: int) -> list[tuple[int, float]]:
        """The top ``n`` (position in the space, cosine or BM25), best first."""
        if self.encoder is None:
            return self.lexical.search(query, n)
        scores = self.matrix @ self.encoder.encode([query])[0]
        return [(int(i), float(scores[i])) for i in np.argsort(-scores)[:n]]


def compare(
    recipe: Recipe,
    reader: StoreReader,
    encoders: dict[str, Encoder | None],
    split: Split = Split.TEST,
    max_items: int = MAX_ITEMS,
    ranking_only: bool = False,
) -> dict[str, dict[str, Any]]:
    """``encoders`` maps a column name to an encoder, or to None for BM25. Returns task → column → metrics.
    With ``ranking_only``, the similarity and separation tasks are left out."""
    results: dict[str, dict[str, Any]] = {}
    concepts = {system: list(active_concepts(reader, system)) for system in recipe.systems}
    concepts |= {source: open_text.SOURCES[source].concepts() for source in recipe.open_text if open_text.SOURCES[source].evaluated}
    hierarchies = {system: Hierarchy.from_concepts(items) for system, items in concepts.items()}
    test = {system: concepts_of(recipe, h, system, split) for system, h in hierarchies.items()}
    with tempfile.TemporaryDirectory() as tmp:
        for system, hierarchy in hierarchies.items():
            everything = Space(list(hierarchy.labels), [hierarchy.display(c) for c in hierarchy.labels])
            l2p = leaf_to_parent(hierarchy, system, concepts=test[system], max_items=max_items, seed=1)
            inner = Space(sorted(l2p.candidates), [hierarchy.display(c) for c in sorted(l2p.candidates)])
            queries = {kind: _items(concepts[system], hierarchy, system, kind, test[system], max_items) for kind in QUERY_KINDS}
            for name, encoder in encoders.items():
                full = Retriever(everything, encoder, Path(tmp) / f"{system}-{name}-all")
                for kind, items in queries.items():
                    if not items:
                        continue
                    report = evaluate_ranking(items, full, gain=hierarchy.gains, k=K, labels=hierarchy.labels)
                    results.setdefault(f"{system} {kind} → concept", {})[name] = _ranking(report)
                if not l2p.items:
                    continue
                parents = Retriever(inner, encoder, Path(tmp) / f"{system}-{name}-inner")
                report = evaluate_ranking(l2p.items, parents, k=K, candidates=l2p.candidates)
                results.setdefault(f"{system} leaf → parent", {})[name] = {
                    "acc@1": report.metrics["hits@1"], "mrr": report.metrics["mrr"], "n": report.count
                }
        if ranking_only or "hpo" not in hierarchies:
            return results
        hpo = hierarchies["hpo"]
        pairs = term_pairs(reader, "hpo", concepts=test["hpo"], max_positives=2000, seed=1)
        categories = category_terms(hpo, *CATEGORIES)
        for name, encoder in encoders.items():
            if encoder is None:
                continue
            similarity = _cosine(encoder)
            scores = evaluate_similarity(pairs, similarity).to_dict()["groups"]
            results.setdefault("hpo term similarity (ROC AUC)", {})[name] = {
                group: scores[group]["roc_auc"] for group in ("all", "easy", "hard", "levenshtein/hard")
            }
            results.setdefault("hpo category separation", {})[name] = {
                "overlap_error": evaluate_separation(categories, similarity).overlap_error
            }
    return results


def dev_scores(recipe: Recipe, reader: StoreReader, encoders: dict[str, Encoder], max_items: int) -> dict[str, float]:
    """Each encoder's mean Hits@1 (Acc@1 for leaf → parent) over the ranking tasks, on the dev split."""
    results = compare(recipe, reader, encoders, Split.DEV, max_items, ranking_only=True)
    return {
        name: float(np.mean([columns[name].get("hits@1", columns[name].get("acc@1")) for columns in results.values()]))
        for name in encoders
    }


def _items(
    concepts: list[Concept], hierarchy: Hierarchy, system: str, kind: str, held: set[str], max_items: int
) -> list[RankingItem]:
    if kind == MISSPELLED:
        return misspelled_items(hierarchy, system, concepts=held, max_items=max_items, seed=1)
    return synonym_items(concepts, system, kind, concepts=held, max_items=max_items, seed=1)


def concepts_of(recipe: Recipe, hierarchy: Hierarchy, system: str, split: Split) -> set[str]:
    """The codes of ``hierarchy`` in ``split`` of the recipe's concept-disjoint split."""
    config = recipe.split
    return {c for c in hierarchy.labels if split_of((system, c), config.seed, config.dev, config.test) is split}


def _ranking(report) -> dict[str, Any]:  # noqa: ANN001
    row = {key: report.metrics[key] for key in ("hits@1", "hits@5", "hits@10", "mrr", f"ndcg@{K}")}
    row["n"] = report.count
    row["hits@10 by overlap"] = {b: asdict(v) for b, v in (report.overlap or {}).items()}
    return row


def _cosine(encoder: Encoder) -> Callable[[Sequence[str], Sequence[str]], np.ndarray]:
    def similarity(left: Sequence[str], right: Sequence[str]) -> np.ndarray:
        return np.sum(encoder.encode(list(left)) * encoder.encode(list(right)), axis=1)

    return similarity


def markdown(results: dict[str, dict[str, Any]]) -> str:
    """One table per task: rows are models, columns are metrics."""
    out = []
    for task, columns in results.items():
        metrics = [m for m in next(iter(columns.values())) if m not in ("n", "hits@10 by overlap")]
        out.append(f"**{task}**\n\n| model | " + " | ".join(metrics) + " |\n|---|" + "---|" * len(metrics))
        for name, row in columns.items():
            out.append(f"| {name} | " + " | ".join(_fmt(row[m]) for m in metrics) + " |")
        out.append("")
    return "\n".join(out)


def _fmt(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
