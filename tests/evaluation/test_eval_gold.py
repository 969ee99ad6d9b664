from __future__ import annotations

from collections.abc import Callable

import pytest

from evaluation.gold import Categories, RankingItem, category_terms, leaf_to_parent, sample, synonym_items
from evaluation.hierarchy import Hierarchy
from indexer.records import Concept, Designation
from indexer.store import StoreReader
from tests.toy import _concept, toy_concepts

LAY = {"scope": "EXACT", "type": "layperson"}


def test_layperson_items(toy_reader: StoreReader) -> None:
    # "Racing heart" (RELATED) and "Deafness" (BROAD) are not layperson; T:6 is inactive
    assert synonym_items(toy_reader, "toy", "layperson") == [
        RankingItem("Fast heart rate", ("T:2",), "toy"),
        RankingItem("Slow heart rate", ("T:3",), "toy"),
        RankingItem("Hearing loss", ("T:4",), "toy"),
        RankingItem("Whooshing heart sound", ("T:7",), "toy"),
    ]
    assert synonym_items(toy_reader, "toy", "exact") == []  # the toy has no untyped exact synonym


def test_inclusion_items(toy_reader: StoreReader) -> None:
    assert synonym_items(toy_reader, "toyicd", "inclusion") == [
        RankingItem("High blood pressure", ("I10",), "toyicd"),
        RankingItem("Rapid heart beat", ("R00.0",), "toyicd"),
    ]


def test_items_of_a_concept_subset_and_a_seeded_sample(toy_reader: StoreReader) -> None:
    subset = synonym_items(toy_reader, "toy", concepts={"T:3", "T:4"})
    assert [i.query for i in subset] == ["Slow heart rate", "Hearing loss"]
    # random.Random(0).sample(range(4), 2) draws the indexes {1, 3}, kept in their order
    sampled = synonym_items(toy_reader, "toy", max_items=2, seed=0)
    assert [i.query for i in sampled] == ["Slow heart rate", "Whooshing heart sound"]
    assert synonym_items(toy_reader, "toy", max_items=2, seed=0) == sampled
    with pytest.raises(LookupError):
        synonym_items(toy_reader, "nope")


def test_a_query_carried_by_several_concepts_has_them_all_as_gold(
    reader_of: Callable[[list[Concept]], StoreReader],
) -> None:
    reader = reader_of(
        [
            _concept("M:1", "Hypertension", Designation("High blood pressure", **LAY)),
            _concept("M:2", "High blood pressure"),
            _concept("M:3", "Fever", Designation("fever", **LAY)),  # only the display's case differs
            _concept("M:4", "Raised arterial pressure", Designation("High Blood Pressure", **LAY)),
        ]
    )
    assert synonym_items(reader, "mini") == [RankingItem("High blood pressure", ("M:1", "M:2", "M:4"), "mini")]


def test_leaf_to_parent(toy_reader: StoreReader) -> None:
    gold = leaf_to_parent(Hierarchy.from_reader(toy_reader, "toy"), "toy")
    assert gold.items == [
        RankingItem("Tachycardia", ("T:1",), "toy"),
        RankingItem("Bradycardia", ("T:1",), "toy"),
        RankingItem("Hearing impairment", ("T:5",), "toy"),
        RankingItem("Heart murmur", ("T:1",), "toy"),
    ]
    assert gold.candidates == {"T:0", "T:1", "T:5"}
    held_out = leaf_to_parent(Hierarchy.from_concepts(toy_concepts()), "toy", concepts={"T:4"})
    assert held_out.items == [RankingItem("Hearing impairment", ("T:5",), "toy")]
    assert held_out.candidates == gold.candidates  # the search space stays the whole non-leaf set


def test_a_leaf_with_several_parents_has_them_all_as_gold() -> None:
    hierarchy = Hierarchy.from_concepts(
        [_concept("R", "Root"), _concept("A", "A", parents=("R",)), _concept("L", "Leaf", parents=("A", "R"))]
    )
    assert leaf_to_parent(hierarchy, "x").items == [RankingItem("Leaf", ("A", "R"), "x")]


def test_category_terms_leave_out_concepts_in_two_categories() -> None:
    hierarchy = Hierarchy.from_concepts(
        [
            _concept("R", "Root"),
            _concept("D", "Diagnostic procedure", parents=("R",)),
            _concept("T", "Therapeutic procedure", parents=("R",)),
            _concept("O", "Organism", parents=("R",)),
            _concept("d1", "Biopsy", parents=("D",)),
            _concept("d2", "Bone marrow biopsy", parents=("d1",)),
            _concept("t1", "Surgery", parents=("T",)),
            _concept("both", "Excision biopsy", parents=("d1", "t1")),
            _concept("o1", "Bacterium", parents=("O",)),
        ]
    )
    assert category_terms(hierarchy, "D", "T", "O") == Categories(
        ("Biopsy", "Bone marrow biopsy"), ("Surgery",), ("Bacterium",)
    )
    assert len(category_terms(hierarchy, "D", "T", "O", max_terms=1).anchor) == 1


def test_sample_keeps_order_and_is_seeded() -> None:
    assert sample("abcdef", None, 1) == list("abcdef")
    assert sample("abc", 5, 1) == list("abc")
    drawn = sample("abcdef", 3, 7)
    assert drawn == sample("abcdef", 3, 7) and drawn == sorted(drawn) and len(drawn) == 3
