"""Run gold sets against any search or similarity function; reports serialise to plain dicts."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import product
from typing import Any

import numpy as np

from evaluation.gold import Categories, RankingItem
from evaluation.metrics import (
    BinHits,
    Rank,
    best_threshold_accuracy,
    category_overlap_error,
    first_rank,
    hits_at_k,
    hits_by_overlap,
    mrr,
    ndcg_at_k,
    overlap_share,
    roc_auc,
)
from evaluation.pairs import NEGATIVE_KINDS, TermPair
from indexer.lexical.normalise import fold

Search = Callable[[str], Sequence[str]]  # query -> codes, best first
Gain = Callable[[Sequence[str]], Mapping[str, float]]  # gold codes -> every code with a positive gain
Similarity = Callable[[list[str], list[str]], np.ndarray]  # scores[i] = sim(left[i], right[i])

HITS_AT = (1, 5, 10)


class Report:
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


@dataclass(frozen=True)
class ItemResult:
    query: str
    gold: tuple[str, ...]
    rank: Rank  # within the first k results
    results: tuple[str, ...]  # the first k codes returned
    ndcg: float | None = None
    overlap: float | None = None  # share of query words found in the gold concepts' labels


@dataclass(frozen=True)
class RankingReport(Report):
    k: int
    count: int
    metrics: dict[str, float]  # hits@1, hits@5, hits@10 (those <= k, and k), mrr, ndcg@k with a gain
    overlap: dict[str, BinHits] | None  # Hits@k per overlap bin, with labels
    items: list[ItemResult]


@dataclass(frozen=True)
class PairScores:
    count: int
    positives: int
    roc_auc: float | None  # None when the group lacks one class
    accuracy: float
    threshold: float  # score >= threshold predicts similar


@dataclass(frozen=True)
class SimilarityReport(Report):
    groups: dict[str, PairScores]


@dataclass(frozen=True)
class SeparationReport(Report):
    overlap_error: float
    mean_close: float  # mean similarity of anchor-category terms to close-category terms
    mean_distant: float
    sizes: tuple[int, int, int]


def evaluate_ranking(
    items: Iterable[RankingItem],
    search: Search,
    *,
    gain: Gain | None = None,
    k: int = 10,
    labels: Mapping[str, Sequence[str]] | None = None,
    candidates: Collection[str] | None = None,
) -> RankingReport:
    """Rank, Hits@K, MRR (both over the first ``k`` distinct codes) and, with ``gain``, graded
    nDCG@k of every item.

    ``candidates`` restricts the search space: returned codes outside it are dropped before
    the cut at ``k``, and so are their gains (let ``search`` return enough codes). ``labels``
    (code → labels) adds the word-overlap share of each query with its gold concepts' labels,
    leaving out a label equal to the query itself, and Hits@k per overlap bin.
    """
    results = [_evaluate_item(item, search, gain, k, labels, candidates) for item in items]
    ranks = [r.rank for r in results]
    metrics = {f"hits@{n}": hits_at_k(ranks, n) for n in sorted({*(n for n in HITS_AT if n <= k), k})}
    metrics["mrr"] = mrr(ranks)
    if gain is not None:
        metrics[f"ndcg@{k}"] = float(np.mean([r.ndcg for r in results])) if results else 0.0
    overlap = None
    if labels is not None:
        overlap = hits_by_overlap([r.overlap or 0.0 for r in results], ranks, k)
    return RankingReport(k, len(results), metrics, overlap, results)


def _evaluate_item(
    item: RankingItem,
    search: Search,
    gain: Gain | None,
    k: int,
    labels: Mapping[str, Sequence[str]] | None,
    candidates: Collection[str] | None,
) -> ItemResult:
    returned = (c for c in search(item.query) if candidates is None or c in candidates)
    top = tuple(dict.fromkeys(returned))[:k]
    ndcg = overlap = None
    if gain is not None:
        gains = {c: g for c, g in gain(item.gold).items() if candidates is None or c in candidates}
        ndcg = ndcg_at_k(top, gains, k)
    if labels is not None:
        query = fold(item.query)
        texts = [t for code in item.gold for t in labels.get(code, ()) if fold(t) != query]
        overlap = overlap_share(item.query, texts)
    return ItemResult(item.query, item.gold, first_rank(top, item.gold), top, ndcg, overlap)


def evaluate_similarity(pairs: Sequence[TermPair], similarity: Similarity) -> SimilarityReport:
    """ROC AUC and best-threshold accuracy of ``similarity`` on term pairs, for every pair
    (``all``), the ``easy`` and ``hard`` splits, and each negative strategy present (its
    negatives with all positives, the paper's datasets), again whole and per split."""
    scores = np.asarray(similarity([p.a for p in pairs], [p.b for p in pairs]), dtype=np.float64)
    if scores.shape != (len(pairs),):
        raise ValueError(f"similarity returned shape {scores.shape} for {len(pairs)} pairs")
    groups: dict[str, list[int]] = {"all": list(range(len(pairs)))}
    for kind in NEGATIVE_KINDS:
        if any(p.kind == kind for p in pairs):
            groups[kind] = [i for i, p in enumerate(pairs) if p.label == 1 or p.kind == kind]
    for name, members in list(groups.items()):
        for split, hard in (("easy", False), ("hard", True)):
            key = split if name == "all" else f"{name}/{split}"
            groups[key] = [i for i in members if pairs[i].hard is hard]
    return SimilarityReport({name: _pair_scores(scores[m], [pairs[i].label for i in m]) for name, m in groups.items()})


def _pair_scores(scores: np.ndarray, labels: list[int]) -> PairScores:
    accuracy, threshold = best_threshold_accuracy(scores, labels)
    return PairScores(len(labels), sum(labels), roc_auc(scores, labels), accuracy, threshold)


def evaluate_separation(categories: Categories, similarity: Similarity) -> SeparationReport:
    """Category-separation overlap error of ``similarity`` (see
    :func:`evaluation.metrics.category_overlap_error`), scoring every anchor term against every
    close and every distant term in one call."""
    close_pairs = list(product(categories.anchor, categories.close))
    distant_pairs = list(product(categories.anchor, categories.distant))
    both = close_pairs + distant_pairs
    scores = np.asarray(similarity([a for a, _ in both], [b for _, b in both]), dtype=np.float64)
    rows = len(categories.anchor)
    close = scores[: len(close_pairs)].reshape(rows, len(categories.close))
    distant = scores[len(close_pairs) :].reshape(rows, len(categories.distant))
    sizes = (rows, len(categories.close), len(categories.distant))
    return SeparationReport(category_overlap_error(close, distant), float(close.mean()), float(distant.mean()), sizes)
