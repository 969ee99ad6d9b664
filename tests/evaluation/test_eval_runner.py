from __future__ import annotations

import json
import math

import numpy as np
import pytest

from evaluation.benchmarks import BENCHMARKS, BenchmarkSpec
from evaluation.gold import Categories, RankingItem
from evaluation.hierarchy import Hierarchy
from evaluation.metrics import BinHits
from evaluation.pairs import TermPair
from evaluation.runner import PairScores, evaluate_ranking, evaluate_separation, evaluate_similarity
from indexer.store import StoreReader
from tests.toy import toy_concepts

TOY = Hierarchy.from_concepts(toy_concepts())
ITEMS = [
    RankingItem("Fast heart rate", ("T:2",), "toy"),
    RankingItem("Hearing loss", ("T:4",), "toy"),
    RankingItem("Slow heart rate", ("T:3",), "toy"),
]
ANSWERS = {
    "Fast heart rate": ["T:3", "T:2", "T:4", "T:1"],  # rank 2
    "Hearing loss": ["T:4", "T:4", "T:5"],  # rank 1; the repeat is dropped
    "Slow heart rate": [],  # not found
}


def fake_search(query: str) -> list[str]:
    return ANSWERS[query]


def test_ranks_hits_mrr_and_ndcg() -> None:
    report = evaluate_ranking(ITEMS, fake_search, gain=TOY.gains)
    assert [i.rank for i in report.items] == [2, 1, None]
    assert report.items[1].results == ("T:4", "T:5")
    # Fast heart rate: DCG 1 + 3/log2 3 + 2/log2 5 over the ideal 3,2,1,1,1,1 (see the hierarchy test)
    fast = (1 + 3 / math.log2(3) + 2 / math.log2(5)) / (
        3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5) + 1 / math.log2(6) + 1 / math.log2(7)
    )
    # Hearing loss: gains T:4 3, T:5 2 (parent), T:0 1 (grandparent), T:1 1 (uncle)
    hearing = (3 + 2 / math.log2(3)) / (3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5))
    assert [i.ndcg for i in report.items] == pytest.approx([fast, hearing, 0.0])
    assert report.metrics == pytest.approx(
        {"hits@1": 1 / 3, "hits@5": 2 / 3, "hits@10": 2 / 3, "mrr": (1 / 2 + 1) / 3, "ndcg@10": (fast + hearing) / 3}
    )
    assert report.overlap is None and report.count == 3 and report.k == 10


def test_everything_is_cut_at_k() -> None:
    report = evaluate_ranking(ITEMS, fake_search, k=1)
    assert [i.rank for i in report.items] == [None, 1, None]  # rank 2 is past k
    assert report.metrics == pytest.approx({"hits@1": 1 / 3, "mrr": 1 / 3})  # no gain, no nDCG
    assert set(evaluate_ranking(ITEMS, fake_search, k=20).metrics) == {"hits@1", "hits@5", "hits@10", "hits@20", "mrr"}


def test_overlap_breakdown_leaves_the_query_label_out() -> None:
    report = evaluate_ranking(ITEMS, fake_search, labels=TOY.labels)
    # Fast heart rate vs Tachycardia, Racing heart: {heart} of 3 words
    # Hearing loss vs Hearing impairment, Deafness: {hearing} of 2; Slow heart rate vs Bradycardia: 0
    assert [i.overlap for i in report.items] == pytest.approx([1 / 3, 1 / 2, 0.0])
    assert report.overlap == {
        "0": BinHits(1, 0.0),
        "(0,0.25]": BinHits(0, None),
        "(0.25,0.5]": BinHits(2, 1.0),
        "(0.5,0.75]": BinHits(0, None),
        "(0.75,1]": BinHits(0, None),
    }


def test_candidates_restrict_results_and_gains() -> None:
    item = RankingItem("Tachycardia", ("T:1",), "toy")
    report = evaluate_ranking(
        [item], lambda q: ["T:2", "T:3", "T:1", "T:0"], gain=TOY.gains, candidates={"T:0", "T:1", "T:5"}
    )
    assert report.items[0].results == ("T:1", "T:0") and report.items[0].rank == 1
    # gains among candidates: T:1 3, T:0 2 (parent), T:5 1 (sibling); the leaf children are out
    assert report.metrics["ndcg@10"] == pytest.approx((3 + 2 / math.log2(3)) / (3 + 2 / math.log2(3) + 1 / 2))


def test_reports_serialise_to_plain_json() -> None:
    data = evaluate_ranking(ITEMS, fake_search, gain=TOY.gains, labels=TOY.labels).to_dict()
    restored = json.loads(json.dumps(data))
    assert restored["items"][0]["gold"] == ["T:2"]
    assert restored["overlap"]["0"] == {"count": 1, "hits": 0.0}
    assert restored["metrics"]["hits@10"] == pytest.approx(2 / 3)


PAIRS = [
    TermPair("p1", "q1", 1, "name-synonym", 2, False),
    TermPair("p2", "q2", 1, "synonym-synonym", 9, True),
    TermPair("p1", "r1", 0, "random", 20, False),
    TermPair("p2", "r2", 0, "random", 20, True),
    TermPair("p1", "l1", 0, "levenshtein", 1, False),
    TermPair("p2", "l2", 0, "levenshtein", 1, True),
]
SCORES = {"q1": 0.9, "q2": 0.4, "r1": 0.1, "r2": 0.2, "l1": 0.95, "l2": 0.3}


def fake_similarity(left: list[str], right: list[str]) -> np.ndarray:
    return np.array([SCORES[b] for b in right])


def test_similarity_per_negative_strategy_and_split() -> None:
    groups = evaluate_similarity(PAIRS, fake_similarity).groups
    # all: positives 0.9, 0.4 each beat r1 r2 l2 and lose to l1: 6/8
    assert groups["all"].roc_auc == pytest.approx(0.75)
    assert groups["easy"].roc_auc == pytest.approx(0.5)  # 0.9 vs 0.1 and 0.95
    assert groups["hard"].roc_auc == pytest.approx(1.0)  # 0.4 vs 0.2 and 0.3
    assert groups["random"] == PairScores(4, 2, 1.0, 1.0, 0.4)
    # levenshtein: 0.9 > 0.3, 0.4 > 0.3, both < 0.95: AUC 2/4; ">= 0.4" gets 3 of 4 right
    assert groups["levenshtein"] == PairScores(4, 2, 0.5, 0.75, 0.4)
    assert groups["levenshtein/easy"].roc_auc == 0.0 and groups["levenshtein/hard"].roc_auc == 1.0
    assert set(groups) == {
        "all", "easy", "hard", "random", "random/easy", "random/hard",
        "levenshtein", "levenshtein/easy", "levenshtein/hard",
    }  # fmt: skip


def test_similarity_checks_the_shape() -> None:
    with pytest.raises(ValueError):
        evaluate_similarity(PAIRS, lambda left, right: np.zeros((len(left), 2)))


def test_separation_scores_every_triple_in_one_call() -> None:
    table = {("a1", "b1"): 0.9, ("a1", "b2"): 0.5, ("a2", "b1"): 0.4, ("a2", "b2"): 0.6,
             ("a1", "c1"): 0.5, ("a1", "c2"): 0.1, ("a2", "c1"): 0.7, ("a2", "c2"): 0.6}  # fmt: skip
    calls = []

    def similarity(left: list[str], right: list[str]) -> np.ndarray:
        calls.append(len(left))
        return np.array([table[pair] for pair in zip(left, right)])

    report = evaluate_separation(Categories(("a1", "a2"), ("b1", "b2"), ("c1", "c2")), similarity)
    assert calls == [8]
    # the metric test's matrices: 5 errors of 8
    assert report.overlap_error == pytest.approx(5 / 8)
    assert report.mean_close == pytest.approx(0.6) and report.mean_distant == pytest.approx(0.475)
    assert report.to_dict()["sizes"] == (2, 2, 2)


def test_benchmark_specs_build_and_run(toy_reader: StoreReader) -> None:
    assert set(BENCHMARKS) == {"hpo-lay", "hpo-synonyms", "hpo-leaf-to-parent", "icd10cm-inclusion"}
    lay = BenchmarkSpec("toy-lay", "toy", "toy layperson", "layperson").build(toy_reader)
    assert [i.query for i in lay.items] == ["Fast heart rate", "Slow heart rate", "Hearing loss", "Whooshing heart sound"]
    answers = {"Fast heart rate": ["T:2"], "Slow heart rate": ["T:2", "T:3"]}
    report = lay.run(lambda q: answers.get(q, []))
    assert report.metrics["hits@1"] == pytest.approx(1 / 4) and report.metrics["mrr"] == pytest.approx(1.5 / 4)
    assert report.overlap is not None and "ndcg@10" in report.metrics
    l2p = BenchmarkSpec("toy-l2p", "toy", "toy leaves", None).build(toy_reader)
    assert l2p.candidates == {"T:0", "T:1", "T:5"}
    assert l2p.run(lambda q: ["T:2", "T:1", "T:5"]).items[0].results == ("T:1", "T:5")
    with pytest.raises(LookupError):
        BENCHMARKS["hpo-lay"].build(toy_reader)  # the toy store holds no HPO
