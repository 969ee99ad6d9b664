"""Pure metric functions: ranking (Hits@K, MRR, graded nDCG, word overlap) and term similarity
(ROC AUC, best-threshold accuracy, category-separation overlap error).

Plain numpy, no scikit-learn: ROC AUC is the Mann-Whitney statistic in a few lines, and the
serving image should not carry scipy and scikit-learn for it (the tests cross-check it against
``sklearn.metrics.roc_auc_score`` where scikit-learn is installed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from indexer.lexical.normalise import words

Rank = int | None  # 1-based position of the first gold code in a ranking; None: not found

OVERLAP_BINS = ("0", "(0,0.25]", "(0.25,0.5]", "(0.5,0.75]", "(0.75,1]")
_BIN_UPPER_EDGES = (0.0, 0.25, 0.5, 0.75, 1.0)


def first_rank(ranked: Sequence[str], gold: Iterable[str]) -> Rank:
    """1-based position of the first code of ``gold`` in ``ranked``, None when absent."""
    wanted = set(gold)
    return next((position for position, code in enumerate(ranked, 1) if code in wanted), None)


def hits_at_k(ranks: Sequence[Rank], k: int) -> float:
    """Share of items whose gold is within the first ``k`` results (0.0 for no items)."""
    return sum(r is not None and r <= k for r in ranks) / len(ranks) if ranks else 0.0


def mrr(ranks: Sequence[Rank]) -> float:
    """Mean reciprocal rank; an item not found contributes 0 (0.0 for no items)."""
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks) if ranks else 0.0


def ndcg_at_k(ranked: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """Graded nDCG@k with linear gains and a log2(position + 1) discount.

    ``gains`` holds every candidate with a positive gain for this query (a code not in it gains
    0). The ideal DCG takes the ``k`` largest of those gains in decreasing order, so a ranking
    is ideal only when it lists the best available concepts of the whole candidate set, not just
    the best of what it returned. A code repeated in ``ranked`` gains only at its first position.
    """
    seen: set[str] = set()
    dcg = 0.0
    for position, code in enumerate(ranked[:k], 1):
        if code not in seen:
            seen.add(code)
            dcg += gains.get(code, 0.0) / math.log2(position + 1)
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(position + 1) for position, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


def overlap_share(query: str, labels: Iterable[str]) -> float:
    """Share of the query's distinct non-stop words found among the words of ``labels``.

    Triplet-BERT's overlapping degree |T_q ∩ T_c| / |T_q|, with words from
    :func:`indexer.lexical.normalise.words` (folded, unstemmed). A query without any non-stop
    word has share 0.
    """
    query_words = set(words(query))
    if not query_words:
        return 0.0
    label_words = {w for label in labels for w in words(label)}
    return len(query_words & label_words) / len(query_words)


def overlap_bin(share: float) -> str:
    """The :data:`OVERLAP_BINS` label of a share: exactly 0, then quarters closed on the right."""
    return next(name for name, upper in zip(OVERLAP_BINS, _BIN_UPPER_EDGES) if share <= upper)


@dataclass(frozen=True)
class BinHits:
    count: int
    hits: float | None  # Hits@k of the bin's items; None for an empty bin


def hits_by_overlap(shares: Sequence[float], ranks: Sequence[Rank], k: int = 10) -> dict[str, BinHits]:
    """Hits@k per overlap bin, every bin listed in :data:`OVERLAP_BINS` order."""
    grouped: dict[str, list[Rank]] = {name: [] for name in OVERLAP_BINS}
    for share, rank in zip(shares, ranks, strict=True):
        grouped[overlap_bin(share)].append(rank)
    return {name: BinHits(len(rs), hits_at_k(rs, k) if rs else None) for name, rs in grouped.items()}


def _classes(scores: Sequence[float], labels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError("scores and labels must be 1-d and of equal length")
    return s, y


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Area under the ROC curve: the Mann-Whitney probability that a positive outscores a
    negative, a tie counting one half (average ranks). None unless both classes are present."""
    s, y = _classes(scores, labels)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    _, group, counts = np.unique(s, return_inverse=True, return_counts=True)
    average_rank = np.cumsum(counts) - (counts - 1) / 2.0  # 1-based mean rank of each tie group
    rank_sum = average_rank[group][y].sum()
    return float((rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def best_threshold_accuracy(scores: Sequence[float], labels: Sequence[int]) -> tuple[float, float]:
    """The best accuracy of the rule ``score >= threshold`` → similar, and that threshold.

    Every distinct score is tried as a threshold, and so is one just above the largest (all
    dissimilar); among equally accurate thresholds the lowest wins. (0.0, 0.0) for no pairs.
    """
    s, y = _classes(scores, labels)
    if s.size == 0:
        return 0.0, 0.0
    values, group = np.unique(s, return_inverse=True)
    positives = np.bincount(group, weights=y.astype(np.float64), minlength=values.size)
    negatives = np.bincount(group, weights=(~y).astype(np.float64), minlength=values.size)
    # threshold values[i]: positives scoring >= values[i] are right, negatives below it are right
    true_pos = np.cumsum(positives[::-1])[::-1]
    true_neg = np.concatenate(([0.0], np.cumsum(negatives)[:-1]))
    correct = np.append(true_pos + true_neg, negatives.sum())
    thresholds = np.append(values, np.nextafter(values[-1], np.inf))
    best = int(np.argmax(correct))
    return float(correct[best] / s.size), float(thresholds[best])


def category_overlap_error(close: np.ndarray, distant: np.ndarray) -> float:
    """Schulz & Juric's relative category overlap error O = #O / (|A|·|B|·|C|).

    ``close[i, j]`` = sim(a_i, b_j) for terms of category A against the semantically close
    category B; ``distant[i, k]`` = sim(a_i, c_k) against the distant category C. #O counts the
    triples (a_i, b_j, c_k) with sim(a_i, b_j) <= sim(a_i, c_k): a close pair not more similar
    than a distant pair. 0 is perfect separation, 1 the opposite.
    """
    close, distant = np.asarray(close, dtype=np.float64), np.asarray(distant, dtype=np.float64)
    if close.ndim != 2 or distant.ndim != 2 or close.shape[0] != distant.shape[0]:
        raise ValueError("close and distant must be 2-d with one row per term of the first category")
    if 0 in (close.size, distant.size):
        raise ValueError("every category needs at least one term")
    ordered = np.sort(distant, axis=1)
    n_distant = ordered.shape[1]
    # per row: how many distant similarities are >= each close similarity
    errors = sum(
        int((n_distant - np.searchsorted(row, values, side="left")).sum()) for row, values in zip(ordered, close)
    )
    return errors / (close.shape[0] * close.shape[1] * n_distant)
