"""Mined hard negatives for lay pairs (the nearest label, of any system, that means something else)
and bridges (labels of another system that contain the concept's name)."""

from __future__ import annotations

import pytest

from indexer.records import IS_A, Concept, Designation, Relationship
from training import base_models, train
from training.data import builders, negatives
from training.data.graph import OntologyGraph

pytestmark = pytest.mark.model
LAY = {"scope": "EXACT", "type": "layperson"}
HEART_ATTACK = [("Heart attack", "Myocardial infarction")]


def _mine(tmp_path, pairs, graph: OntologyGraph, **options) -> list[tuple[str, ...]]:  # noqa: ANN001
    encode = train.encoder(base_models.resolve(base_models.MINILM, tmp_path))
    return negatives.mine(encode, pairs, graph, set(graph.nodes), **options)


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
            _concept("4", "Heart block", parent="1"),  # a sibling: never the negative
            _concept("5", "Heart failure"),
            _concept("6", "Attack of gout"),
        ],
    )
    graph.add("icd10cm", [_concept("I21", "Heart attack, acute")])  # holds the anchor's words: never the negative
    pairs = builders.lay_pairs(graph, set(graph.nodes))
    assert pairs == HEART_ATTACK

    assert _mine(tmp_path, pairs, graph) == [("Heart attack", "Myocardial infarction", "Heart failure")]
    assert negatives.columns(1) == ["anchor", "positive", "negative"]
    assert _mine(tmp_path, pairs, graph, per_pair=2) == [("Heart attack", "Myocardial infarction", "Heart failure", "Attack of gout")]
    assert negatives.columns(2) == ["anchor", "positive", "negative_1", "negative_2"]
    assert _mine(tmp_path, pairs, graph, per_pair=3) == []  # only two fair negatives exist


def test_siblings_and_cousins_are_never_negatives(tmp_path) -> None:  # noqa: ANN001
    """"Same site, other abnormality = far" is what pushed leaves off their parents."""
    graph = OntologyGraph.from_concepts(
        "hpo",
        [
            _concept("1", "Abnormality of the heart"),
            _concept("2", "Abnormal myocardium", parent="1"),
            _concept("3", "Myocardial infarction", Designation("Heart attack", **LAY), parent="2"),
            _concept("4", "Myocardial fibrosis", parent="2"),  # sibling
            _concept("5", "Abnormal heart valve", parent="1"),
            _concept("6", "Heart valve attack", parent="5"),  # cousin
            _concept("7", "Panic attack"),
        ],
    )
    assert _mine(tmp_path, HEART_ATTACK, graph, depth=8) == [("Heart attack", "Myocardial infarction", "Panic attack")]


def test_nearness_to_the_lay_wording_does_not_spare_a_negative(tmp_path) -> None:  # noqa: ANN001
    """Only the concept's formal labels guard against unlisted synonyms. By the base model,
    "Heart failure" lies at cosine 0.72 from "Heart attack" but 0.53 from "Myocardial
    infarction": with the guard at 0.7 it is still the negative, and Gout (0.27) is not chosen."""
    graph = OntologyGraph.from_concepts(
        "hpo",
        [_concept("2", "Myocardial infarction", Designation("Heart attack", **LAY)), _concept("3", "Heart failure"), _concept("4", "Gout")],
    )
    assert [row[2] for row in _mine(tmp_path, HEART_ATTACK, graph, threshold=0.7)] == ["Heart failure"]


def test_an_anchor_with_no_fair_negative_is_dropped(tmp_path) -> None:  # noqa: ANN001
    graph = OntologyGraph.from_concepts(
        "hpo", [_concept("1", "Heart disease"), _concept("2", "Myocardial infarction", Designation("Heart attack", **LAY), parent="1")]
    )
    assert _mine(tmp_path, HEART_ATTACK, graph) == []  # its only other concept is its ancestor


def test_bridges_pair_lay_wording_with_another_systems_label_holding_the_concept_name(tmp_path) -> None:  # noqa: ANN001
    graph = OntologyGraph.from_concepts(
        "hpo",
        [_concept("1", "Heart disease"), _concept("2", "Myocardial infarction", Designation("Heart attack", **LAY), parent="1")],
    )
    graph.add("icd10cm", [_concept("I21", "Acute myocardial infarction"), _concept("I50", "Heart failure")])
    mined = _mine(tmp_path, HEART_ATTACK, graph, bridges=2)

    # I21 holds "myocardial infarction" (cosine 0.88 by the base model): a bridge, never a
    # negative; Heart disease is an ancestor; Heart failure is the one fair negative.
    assert mined == [
        ("Heart attack", "Myocardial infarction", "Heart failure"),
        ("Heart attack", "Acute myocardial infarction", "Heart failure"),
    ]
