from __future__ import annotations

import math

import pytest

from evaluation.hierarchy import Hierarchy
from evaluation.metrics import ndcg_at_k
from indexer.store import StoreReader
from tests.toy import toy_concepts

# The toy system (tests/toy.py), active concepts only (T:6 is inactive):
#   T:0 Phenotypic abnormality
#   ├── T:1 Abnormality of the cardiovascular system
#   │   ├── T:2 Tachycardia
#   │   ├── T:3 Bradycardia
#   │   └── T:7 Heart murmur
#   └── T:5 Abnormality of the ear
#       └── T:4 Hearing impairment   (also part_of T:5, which is not is_a)


@pytest.fixture(scope="module")
def toy() -> Hierarchy:
    return Hierarchy.from_concepts(toy_concepts())


def test_edges_and_labels_of_active_concepts(toy: Hierarchy) -> None:
    assert set(toy.labels) == {"T:0", "T:1", "T:2", "T:3", "T:4", "T:5", "T:7"}
    assert toy.parents["T:4"] == ("T:5",)
    assert toy.children["T:1"] == ("T:2", "T:3", "T:7")
    assert toy.labels["T:2"] == ("Tachycardia", "Fast heart rate", "Racing heart")
    assert toy.display("T:5") == "Abnormality of the ear"
    assert [c for c in toy.labels if toy.is_leaf(c)] == ["T:2", "T:3", "T:4", "T:7"]
    assert toy.descendants("T:0") == {"T:1", "T:2", "T:3", "T:4", "T:5", "T:7"}


def test_from_reader_matches_the_records(toy_reader: StoreReader, toy: Hierarchy) -> None:
    stored = Hierarchy.from_reader(toy_reader, "toy")
    assert (stored.parents, stored.children, stored.labels) == (toy.parents, toy.children, toy.labels)
    with pytest.raises(LookupError):
        Hierarchy.from_reader(toy_reader, "nope")


def test_gain_levels_of_a_leaf(toy: Hierarchy) -> None:
    gold = ["T:2"]
    assert toy.gain(gold, "T:2") == 3  # exact
    assert toy.gain(gold, "T:1") == 2  # parent
    assert toy.gain(gold, "T:0") == 1  # grandparent
    assert toy.gain(gold, "T:3") == 1  # sibling
    assert toy.gain(gold, "T:7") == 1  # sibling
    assert toy.gain(gold, "T:5") == 1  # uncle
    assert toy.gain(gold, "T:4") == 0  # cousin
    assert toy.gain(gold, "T:6") == 0  # inactive


def test_gain_levels_downwards(toy: Hierarchy) -> None:
    assert toy.gains(["T:1"]) == {"T:1": 3, "T:0": 2, "T:2": 2, "T:3": 2, "T:7": 2, "T:5": 1}  # T:5 sibling
    assert toy.gains(["T:0"]) == {"T:0": 3, "T:1": 2, "T:5": 2, "T:2": 1, "T:3": 1, "T:7": 1, "T:4": 1}


def test_gains_take_the_max_over_several_golds(toy: Hierarchy) -> None:
    # T:1 is T:3's parent (2) and T:4's uncle (1); T:5 is T:4's parent (2) and T:3's uncle (1)
    assert toy.gains(["T:3", "T:4"]) == {"T:3": 3, "T:4": 3, "T:1": 2, "T:5": 2, "T:0": 1, "T:2": 1, "T:7": 1}


def test_ndcg_with_toy_gains(toy: Hierarchy) -> None:
    # gold Tachycardia, ranked [Bradycardia (1), Tachycardia (3), Hearing impairment (0), T:1 (2)]
    # DCG = 1/log2 2 + 3/log2 3 + 0 + 2/log2 5
    # ideal: gains {3, 2, 1, 1, 1, 1} → 3 + 2/log2 3 + 1/log2 4 + 1/log2 5 + 1/log2 6 + 1/log2 7
    dcg = 1 + 3 / math.log2(3) + 2 / math.log2(5)
    idcg = 3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5) + 1 / math.log2(6) + 1 / math.log2(7)
    assert ndcg_at_k(["T:3", "T:2", "T:4", "T:1"], toy.gains(["T:2"]), 10) == pytest.approx(dcg / idcg)
    assert dcg / idcg == pytest.approx(0.6325, abs=1e-4)
