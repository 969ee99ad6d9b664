from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.metrics import (
    BinHits,
    best_threshold_accuracy,
    category_overlap_error,
    first_rank,
    hits_at_k,
    hits_by_overlap,
    mrr,
    ndcg_at_k,
    overlap_bin,
    overlap_share,
    roc_auc,
)

RANKS = [1, 3, None, 12, 5]


def test_first_rank_is_the_first_gold_position() -> None:
    assert first_rank(["a", "b", "c"], ["c", "b"]) == 2
    assert first_rank(["a", "b"], ["z"]) is None


def test_hits_at_k() -> None:
    # found within 1: {1}; within 5 and 10: {1, 3, 5}; 12 and None never
    assert hits_at_k(RANKS, 1) == pytest.approx(1 / 5)
    assert hits_at_k(RANKS, 5) == pytest.approx(3 / 5)
    assert hits_at_k(RANKS, 10) == pytest.approx(3 / 5)
    assert hits_at_k(RANKS, 12) == pytest.approx(4 / 5)
    assert hits_at_k([], 10) == 0.0


def test_mrr_counts_missing_items_as_zero() -> None:
    # (1/1 + 1/3 + 0 + 1/12 + 1/5) / 5 = 1.616666.../5
    assert mrr(RANKS) == pytest.approx((1 + 1 / 3 + 1 / 12 + 1 / 5) / 5)
    assert mrr([None, None]) == 0.0
    assert mrr([]) == 0.0


def test_ndcg_reproduces_the_triplet_bert_example() -> None:
    # The paper's "delayed closure of fontanels": exact, sibling, parent, uncle, grandparent in
    # the top five gains 3, 1, 2, 1, 1; ideal order 3, 2, 1, 1, 1; nDCG@5 = 0.976.
    gains = {"exact": 3, "parent": 2, "sibling": 1, "uncle": 1, "grandparent": 1}
    ranked = ["exact", "sibling", "parent", "uncle", "grandparent"]
    dcg = 3 + 1 / math.log2(3) + 2 / 2 + 1 / math.log2(5) + 1 / math.log2(6)
    idcg = 3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5) + 1 / math.log2(6)
    assert ndcg_at_k(ranked, gains, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(ranked, gains, 5) == pytest.approx(0.976, abs=1e-3)  # 0.97653, truncated there


def test_ndcg_ideal_comes_from_the_whole_candidate_set() -> None:
    gains = {"g": 3, "p": 2, "c": 2}
    # returning only the gold is not ideal when two gain-2 concepts exist:
    # DCG = 3; IDCG = 3 + 2/log2(3) + 2/2
    assert ndcg_at_k(["g", "x"], gains, 10) == pytest.approx(3 / (3 + 2 / math.log2(3) + 1))
    assert ndcg_at_k(["g", "p", "c"], gains, 10) == pytest.approx(1.0)
    # k cuts both: @1 only the first result and the single best gain count
    assert ndcg_at_k(["p", "g"], gains, 1) == pytest.approx(2 / 3)
    # a repeated code gains once: DCG = 3 (the second "g" gains nothing)
    assert ndcg_at_k(["g", "g"], gains, 10) == pytest.approx(3 / (3 + 2 / math.log2(3) + 1))
    assert ndcg_at_k(["x"], {}, 10) == 0.0


def test_overlap_share_uses_non_stop_words() -> None:
    # query words {fast, heart, rate}; label words {tachycardia, racing, heart}: 1 of 3
    assert overlap_share("Fast heart rate", ["Tachycardia", "Racing heart"]) == pytest.approx(1 / 3)
    # "of the" are stop words: {abnormality, ear} both found, case and accents folded
    assert overlap_share("Abnormality of the EAR", ["Abnormality of éar"]) == 1.0
    assert overlap_share("of the", ["anything"]) == 0.0
    assert overlap_share("heart", []) == 0.0


@pytest.mark.parametrize(
    ("share", "name"),
    [(0.0, "0"), (0.01, "(0,0.25]"), (0.25, "(0,0.25]"), (1 / 3, "(0.25,0.5]"), (0.5, "(0.25,0.5]"),
     (0.75, "(0.5,0.75]"), (0.8, "(0.75,1]"), (1.0, "(0.75,1]")],
)
def test_overlap_bins_are_closed_on_the_right(share: float, name: str) -> None:
    assert overlap_bin(share) == name


def test_hits_by_overlap() -> None:
    shares = [0.0, 0.2, 1 / 3, 1.0, 1.0]
    ranks = [None, 3, 11, 1, None]
    assert hits_by_overlap(shares, ranks, 10) == {
        "0": BinHits(1, 0.0),
        "(0,0.25]": BinHits(1, 1.0),
        "(0.25,0.5]": BinHits(1, 0.0),  # rank 11 is past k
        "(0.5,0.75]": BinHits(0, None),
        "(0.75,1]": BinHits(2, 0.5),
    }


def test_roc_auc_counts_ties_as_half() -> None:
    # positives 0.9, 0.8, 0.1; negatives 0.8, 0.3. Of the 6 (pos, neg) pairs the positive wins
    # (0.9,0.8) (0.9,0.3) (0.8,0.3), ties (0.8,0.8) for 1/2, loses (0.1,*): AUC = 3.5/6
    scores, labels = [0.9, 0.8, 0.8, 0.3, 0.1], [1, 1, 0, 0, 1]
    assert roc_auc(scores, labels) == pytest.approx(3.5 / 6)
    assert roc_auc([0.5, 0.5], [1, 0]) == pytest.approx(0.5)
    assert roc_auc([0.1, 0.2], [1, 1]) is None


def test_roc_auc_agrees_with_scikit_learn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, 200) / 4  # many ties
    labels = rng.integers(0, 2, 200)
    assert roc_auc(scores, labels) == pytest.approx(metrics.roc_auc_score(labels, scores))


def test_best_threshold_accuracy() -> None:
    # thresholds 0.1: 2/4 right; 0.35: predicted {0.35, 0.4, 0.8} → TP 2, FP 1, TN 1: 3/4;
    # 0.4: 2/4; 0.8: TP 1, TN 2: 3/4; above 0.8: 2/4. Best 3/4, the lowest such threshold.
    assert best_threshold_accuracy([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == (0.75, 0.35)
    # tied scores move together: at 0.5 three pairs are predicted similar, 2 right + 1 TN
    assert best_threshold_accuracy([0.5, 0.5, 0.5, 0.2], [1, 1, 0, 0]) == (0.75, 0.5)


def test_best_threshold_can_predict_all_dissimilar() -> None:
    # the positive scores lowest: any threshold at a score gets at most 1/3; above all, 2/3
    accuracy, threshold = best_threshold_accuracy([0.9, 0.8, 0.1], [0, 0, 1])
    assert accuracy == pytest.approx(2 / 3)
    assert 0.9 < threshold < 0.9 + 1e-9


def test_category_overlap_error() -> None:
    close = np.array([[0.9, 0.5], [0.4, 0.6]])  # sim(a_i, b_j)
    distant = np.array([[0.5, 0.1], [0.7, 0.6]])  # sim(a_i, c_k)
    # a_0: 0.9 beats both distant; 0.5 <= 0.5 (a tie is an error): 1 error
    # a_1: 0.4 <= 0.7 and 0.6; 0.6 <= 0.7 and 0.6: 4 errors. O = 5 / (2·2·2)
    assert category_overlap_error(close, distant) == pytest.approx(5 / 8)
    assert category_overlap_error(np.ones((1, 3)), np.zeros((1, 2))) == 0.0
    with pytest.raises(ValueError):
        category_overlap_error(np.ones((2, 2)), np.ones((3, 2)))
