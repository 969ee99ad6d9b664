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
    # Algorithm 1 less (l1, l2, parent): the parent is never a negative.
    assert triplets == [
        ("Tachycardia", "Fast heart rate", "Bradycardia"),
        ("Tachycardia", "Heart disease", "Bradycardia"),
        ("Fast heart rate", "Tachycardia", "Bradycardia"),
        ("Fast heart rate", "Heart disease", "Bradycardia"),
    ]


def test_triplets_skip_what_is_missing(graph: OntologyGraph) -> None:
    # Without D there is no sibling or uncle to be the negative: no triplet.
    assert builders.triplets(graph, keys("B", "C"), random.Random(0)) == []


def test_hierarchy_rows_keep_the_parent_near_and_an_uncle_far() -> None:
    graph = OntologyGraph.from_concepts(
        "x",
        [
            _concept("A", "Disease"),
            _concept("B", "Heart disease", parents=("A",)),
            _concept("C", "Tachycardia", parents=("B",)),
            _concept("D", "Bradycardia", parents=("B",)),  # a sibling: never the negative
            _concept("E", "Lung disease", parents=("A",)),
            _concept("F", "Pneumonia", "Lung infection", parents=("E",)),
        ],
    )
    rows = builders.hierarchy_rows(graph, keys("A", "B", "C", "D", "E", "F"), random.Random(0))
    assert rows == [
        ("Tachycardia", "Heart disease", "Lung disease"),
        ("Bradycardia", "Heart disease", "Lung disease"),
        (rows[2][0], "Lung disease", "Heart disease"),
    ]
    assert rows[2][0] in {"Pneumonia", "Lung infection"}
    # B and E have a parent but no uncle; without E, nothing is a branch over.
    assert builders.hierarchy_rows(graph, keys("A", "B", "C", "D"), random.Random(0)) == []


def test_icd_extensions_collapse_and_inclusion_terms_describe_their_code() -> None:
    """7th-character extensions leave the graph; inclusion terms and includes notes are entry
    terms: descriptions of their code, never labels or synonyms."""
    graph = OntologyGraph.from_concepts(
        "icd10cm",
        [
            _concept("S72", "Fracture of femur"),
            Concept(
                "S72.0",
                "Fracture of head and neck of femur",
                designations=[
                    Designation("Fracture of head and neck of femur", "preferred"),
                    Designation("Fracture of hip NOS", type="inclusion"),
                    Designation("femoral neck fracture", type="includes"),
                ],
                relationships=[Relationship(IS_A, "S72")],
            ),
            Concept(
                "S72.0XXA",
                "Fracture of head and neck of femur, initial encounter for closed fracture",
                designations=[Designation("initial encounter for fracture NOS", type="inclusion")],
                relationships=[Relationship(IS_A, "S72.0")],
                properties={"kind": "code", "seventh_character": "A"},
            ),
        ],
    )
    assert sorted(code for _, code in graph.nodes) == ["S72", "S72.0"]
    node = graph.nodes[("icd10cm", "S72.0")]
    assert (node.labels, node.entries, node.children) == (
        ["Fracture of head and neck of femur"],
        ["Fracture of hip NOS", "femoral neck fracture"],
        [],
    )
    allowed = set(graph.nodes)
    assert builders.synonym_pairs(graph, allowed, 6, random.Random(0)) == []
    assert builders.entry_descriptions(graph, allowed) == [
        ("Fracture of head and neck of femur", "Fracture of hip NOS which is a kind of Fracture of head and neck of femur"),
        ("Fracture of head and neck of femur", "femoral neck fracture which is a kind of Fracture of head and neck of femur"),
    ]
    # Descriptions name the parent by its title.
    assert builders.descriptions(graph, ("icd10cm", "S72.0"), allowed, random.Random(0)) == [
        "something which is a kind of Fracture of femur"
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
    held_labels = {text for k in graph.nodes.keys() - train for text in graph.nodes[k].labels + graph.nodes[k].entries}
    rng = random.Random(3)
    texts = [
        text
        for rows in (
            builders.definition_pairs(graph, train, 3, rng),
            builders.description_pairs(graph, train, 5, rng),
            builders.synonym_pairs(graph, train, 6, rng),
            builders.triplets(graph, train, rng),
            builders.hierarchy_rows(graph, train, rng),
            builders.entry_descriptions(graph, train),
            builders.lay_pairs(graph, train),
        )
        for row in rows
        for text in row
    ]
    assert texts
    assert not any(label in text for text in texts for label in held_labels)
