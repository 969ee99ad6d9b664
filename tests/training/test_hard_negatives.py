"""Mined hard negatives for lay pairs (the nearest label, of any system, that means something else)
and bridges (labels of another system that contain the concept's name)."""

from __future__ import annotations

import pytest
from datasets import Dataset

from indexer.records import IS_A, Concept, Designation, Relationship
from training import base_models, train
from training.data import builders
from training.data.graph import OntologyGraph

pytestmark = pytest.mark.model
LAY = {"scope": "EXACT", "type": "layperson"}


def _concept(code: str, name: str, *designations: Designation, parent: str | None = None) -> Concept:
    return Concept(
        code,
        name,
        designations=[Designation(name, "preferred"), *designations],
        relationships=[Relationship(IS_A, parent)] if parent else [],
    )


def test_the_nearest_unrelated_label_is_the_negative(tmp_path) -> None:  # noqa: ANN001
    graph = OntologyGraph.from_concepts(
        "hpo",
        [
            _concept("1", "Heart disease"),
            _concept("2", "Myocardial infarction", Designation("Heart attack", **LAY), parent="1"),
            _concept("3", "Silent heart attack", parent="2"),  # a descendant: never the negative
            _concept("4", "Heart failure", parent="1"),
            _concept("5", "Attack of gout"),
        ],
    )
    graph.add("icd10cm", [_concept("I21", "Heart attack, acute")])  # holds the anchor's words: never the negative
    train_keys = set(graph.nodes)
    pairs = builders.lay_pairs(graph, train_keys)
    assert pairs == [("Heart attack", "Myocardial infarction")]
    dataset = Dataset.from_dict({"anchor": [a for a, _ in pairs], "positive": [p for _, p in pairs]})

    mined = train.hard_negatives(base_models.resolve(base_models.MINILM, tmp_path), dataset, graph, train_keys)

    assert mined.column_names == ["anchor", "positive", "negative"]
    assert mined.to_list() == [{"anchor": "Heart attack", "positive": "Myocardial infarction", "negative": "Heart failure"}]

    two = train.hard_negatives(base_models.resolve(base_models.MINILM, tmp_path), dataset, graph, train_keys, per_pair=2)

    assert two.to_list() == [
        {"anchor": "Heart attack", "positive": "Myocardial infarction", "negative_1": "Heart failure", "negative_2": "Attack of gout"}
    ]
    three = train.hard_negatives(base_models.resolve(base_models.MINILM, tmp_path), dataset, graph, train_keys, per_pair=3)
    assert len(three) == 0  # only two fair negatives exist


def test_nearness_to_the_lay_wording_does_not_spare_a_negative(tmp_path) -> None:  # noqa: ANN001
    """Only the concept's formal labels guard against unlisted synonyms. By the base model,
    "Heart failure" lies at cosine 0.72 from "Heart attack" but 0.53 from "Myocardial
    infarction": with the guard at 0.7 it is still the negative, and Gout (0.27) is not chosen."""
    graph = OntologyGraph.from_concepts(
        "hpo",
        [_concept("2", "Myocardial infarction", Designation("Heart attack", **LAY)), _concept("3", "Heart failure"), _concept("4", "Gout")],
    )
    dataset = Dataset.from_dict({"anchor": ["Heart attack"], "positive": ["Myocardial infarction"]})
    mined = train.hard_negatives(base_models.resolve(base_models.MINILM, tmp_path), dataset, graph, set(graph.nodes), threshold=0.7)
    assert mined["negative"] == ["Heart failure"]


def test_an_anchor_with_no_fair_negative_is_dropped(tmp_path) -> None:  # noqa: ANN001
    graph = OntologyGraph.from_concepts(
        "hpo", [_concept("1", "Heart disease"), _concept("2", "Myocardial infarction", Designation("Heart attack", **LAY), parent="1")]
    )
    dataset = Dataset.from_dict({"anchor": ["Heart attack"], "positive": ["Myocardial infarction"]})
    mined = train.hard_negatives(base_models.resolve(base_models.MINILM, tmp_path), dataset, graph, set(graph.nodes))
    assert len(mined) == 0  # its only other concept is its ancestor


def test_bridges_pair_lay_wording_with_another_systems_label_holding_the_concept_name(tmp_path) -> None:  # noqa: ANN001
    graph = OntologyGraph.from_concepts(
        "hpo",
        [_concept("1", "Heart disease"), _concept("2", "Myocardial infarction", Designation("Heart attack", **LAY), parent="1")],
    )
    graph.add("icd10cm", [_concept("I21", "Acute myocardial infarction"), _concept("I50", "Heart failure")])
    dataset = Dataset.from_dict({"anchor": ["Heart attack"], "positive": ["Myocardial infarction"]})

    mined = train.hard_negatives(
        base_models.resolve(base_models.MINILM, tmp_path), dataset, graph, set(graph.nodes), bridges=2
    )

    # I21 holds "myocardial infarction" (cosine 0.88 by the base model): a bridge, never a
    # negative; Heart disease is an ancestor; Heart failure is the one fair negative.
    assert mined.to_list() == [
        {"anchor": "Heart attack", "positive": "Myocardial infarction", "negative": "Heart failure"},
        {"anchor": "Heart attack", "positive": "Acute myocardial infarction", "negative": "Heart failure"},
    ]
