"""Pair and triplet builders on a graph small enough to know every output."""

from __future__ import annotations

import random

import pytest

from indexer.records import IS_A, Concept, Definition, Designation, Relationship
from tests.toy import toy_concepts
from training.data import builders
from training.data.graph import OntologyGraph, phrase
from training.data.splits import Split, held_out, split_of


def _concept(code: str, name: str, *synonyms: str, parents=(), definitions=(), relations=()) -> Concept:
    return Concept(
        code,
        name,
        designations=[Designation(name, "preferred"), *(Designation(s) for s in synonyms)],
        definitions=[Definition(d) for d in definitions],
        relationships=[Relationship(IS_A, p) for p in parents] + [Relationship(t, target, label) for t, target, label in relations],
    )


@pytest.fixture
def graph() -> OntologyGraph:
    return OntologyGraph.from_concepts(
        "x",
        [
            _concept("A", "Root"),
            _concept("B", "Heart disease", parents=("A",)),
            _concept(
                "C",
                "Tachycardia",
                "Fast heart rate",
                parents=("B",),
                definitions=("A heart rate above normal.",),
                relations=(("finding_site", "H", "Finding site"),),
            ),
            _concept("D", "Bradycardia", parents=("B",)),
            _concept("H", "Heart"),
        ],
    )


def keys(*codes: str) -> set[tuple[str, str]]:
    return {("x", c) for c in codes}


def test_graph_neighbourhoods(graph: OntologyGraph) -> None:
    assert graph.nodes[("x", "C")].parents == [("x", "B")]
    assert graph.nodes[("x", "B")].children == [("x", "C"), ("x", "D")]
    assert graph.nodes[("x", "C")].relations == [("has finding site", ("x", "H"))]
    assert graph.siblings(("x", "C")) == [("x", "D")]
    assert graph.ancestors(("x", "C")) == [("x", "B"), ("x", "A")]


def test_triplets_follow_algorithm_1(graph: OntologyGraph) -> None:
    triplets = builders.triplets(graph, keys("A", "B", "C", "D"), random.Random(0))
    assert triplets == [
        ("Tachycardia", "Fast heart rate", "Heart disease"),
        ("Tachycardia", "Fast heart rate", "Bradycardia"),
        ("Tachycardia", "Heart disease", "Bradycardia"),
        ("Fast heart rate", "Tachycardia", "Heart disease"),
        ("Fast heart rate", "Tachycardia", "Bradycardia"),
        ("Fast heart rate", "Heart disease", "Bradycardia"),
    ]


def test_triplets_skip_what_is_missing(graph: OntologyGraph) -> None:
    # Without D there is no sibling or uncle: only the (l1, l2, parent) triplets remain.
    assert builders.triplets(graph, keys("B", "C"), random.Random(0)) == [
        ("Tachycardia", "Fast heart rate", "Heart disease"),
        ("Fast heart rate", "Tachycardia", "Heart disease"),
    ]


def test_definition_pairs_oversample_with_each_label(graph: OntologyGraph) -> None:
    pairs = builders.definition_pairs(graph, keys("C", "D"), repeats=4, rng=random.Random(0))
    assert sorted(pairs) == sorted(
        [("Tachycardia", "A heart rate above normal."), ("Fast heart rate", "A heart rate above normal.")] * 2
    )


def test_descriptions_use_the_template(graph: OntologyGraph) -> None:
    allowed = keys("B", "C", "D", "H")
    assert builders.descriptions(graph, ("x", "C"), allowed, random.Random(0)) == [
        "something which is a kind of Heart disease",
        "Heart disease which has finding site Heart",
    ]
    # B's only ancestor (A) is not allowed: the generic term falls back to "something".
    assert builders.descriptions(graph, ("x", "D"), allowed, random.Random(0)) == [
        "something which is a kind of Heart disease"
    ]
    texts = builders.descriptions(graph, ("x", "B"), allowed, random.Random(0))
    assert texts[1] == "something which has subtype Bradycardia"
    assert texts[0] in {"something which has subtype Tachycardia", "something which has subtype Fast heart rate"}


def test_synonym_pairs(graph: OntologyGraph) -> None:
    assert sorted(builders.synonym_pairs(graph, keys("C", "D"), 6, random.Random(0))) == [
        ("Fast heart rate", "Tachycardia"),
        ("Tachycardia", "Fast heart rate"),
    ]


def test_lay_pairs_pull_lay_wording_towards_every_formal_label() -> None:
    lay = {"type": "layperson"}
    graph = OntologyGraph.from_concepts(
        "x",
        [
            Concept(
                "E",
                "Hypertension",
                designations=[
                    Designation("Hypertension", "preferred"),
                    Designation("Arterial hypertension", scope="EXACT"),
                    Designation("High blood pressure", scope="RELATED", **lay),
                    Designation("Raised blood pressure", scope="EXACT", **lay),
                    Designation("Blood pressure problem", scope="BROAD", **lay),  # too loose to anchor
                ],
            ),
            _concept("F", "Tachycardia", "Fast heart rate"),  # no lay-typed synonym: nothing
        ],
    )
    assert builders.lay_pairs(graph, keys("E", "F")) == [
        ("High blood pressure", "Hypertension"),
        ("High blood pressure", "Arterial hypertension"),
        ("High blood pressure", "Blood pressure problem"),
        ("Raised blood pressure", "Hypertension"),
        ("Raised blood pressure", "Arterial hypertension"),
        ("Raised blood pressure", "Blood pressure problem"),
    ]
    assert builders.lay_pairs(graph, keys("F")) == []


@pytest.mark.parametrize(
    ("relationship", "expected"),
    [("part_of", "is part of"), ("Finding site", "has finding site"), ("may_treat", "may treat"), ("has_part", "has part")],
)
def test_relationships_read_as_verbs(relationship: str, expected: str) -> None:
    assert phrase(relationship) == expected


def test_splits_are_stable_and_disjoint() -> None:
    keys_ = [("hpo", f"HP:{i:07d}") for i in range(4000)]
    groups = held_out(keys_, seed=13, dev=0.05, test=0.10)
    assert set().union(*groups.values()) == set(keys_)
    assert sum(len(g) for g in groups.values()) == len(keys_)
    assert 300 < len(groups[Split.TEST]) < 500 and 120 < len(groups[Split.DEV]) < 280
    assert all(split_of(k, 13, 0.05, 0.10) is s for s, g in groups.items() for k in g)
    assert held_out(keys_, seed=14, dev=0.05, test=0.10) != groups


def test_held_out_concepts_never_reach_training_text() -> None:
    graph = OntologyGraph.from_concepts("toy", toy_concepts())
    train = {k for k in graph.nodes if k[1] not in {"T:1", "T:4"}}
    held_labels = {label for k in graph.nodes.keys() - train for label in graph.nodes[k].labels}
    rng = random.Random(3)
    texts = [
        text
        for rows in (
            builders.definition_pairs(graph, train, 3, rng),
            builders.description_pairs(graph, train, 5, rng),
            builders.synonym_pairs(graph, train, 6, rng),
            builders.triplets(graph, train, rng),
            builders.lay_pairs(graph, train),
        )
        for row in rows
        for text in row
    ]
    assert texts
    assert not any(label in text for text in texts for label in held_labels)
