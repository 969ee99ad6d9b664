"""Open text beside the store (MeSH) and the guard that keeps held-out text out of training."""

from __future__ import annotations

import random

from indexer.knowledge import mesh
from indexer.records import IS_A, Concept, Designation, Relationship
from training.data import builders
from training.data.graph import OntologyGraph
from training.data.open_text import mesh_concepts
from training.data.splits import Split, guarded

HEART = mesh.Descriptor("D006331", "Heart Diseases", ("cardiac disease",), ("C14.280",))
MI = mesh.Descriptor("D009203", "Myocardial Infarction", ("heart attack", "cardiac infarction"), ("C14.280.647", "C14.907.585.500"))
ISCHEMIA = mesh.Descriptor("D017202", "Myocardial Ischemia", (), ("C14.280.647.x", "C14.907.585"))


def test_mesh_descriptors_become_concepts_under_their_parent_trees() -> None:
    concepts = {c.code: c for c in mesh_concepts((HEART, MI, ISCHEMIA))}
    mi = concepts["D009203"]
    assert mi.labels() == ["Myocardial Infarction", "heart attack", "cardiac infarction"]
    assert all(d.scope == "EXACT" and d.use == "synonym" for d in mi.designations[1:])
    # C14.280.647 → C14.280 (Heart Diseases); C14.907.585.500 → C14.907.585 (Myocardial Ischemia)
    assert [r.target for r in mi.relationships if r.type == IS_A] == ["D006331", "D017202"]
    assert concepts["D006331"].relationships == []
    graph = OntologyGraph.from_concepts("mesh", concepts.values())
    assert sorted(builders.synonym_pairs(graph, {("mesh", "D006331")}, 6, random.Random(0))) == [
        ("Heart Diseases", "cardiac disease"),
        ("cardiac disease", "Heart Diseases"),
    ]


def test_the_packaged_mesh_hierarchy_reads() -> None:
    concepts = {c.display: c for c in mesh_concepts()}
    assert len(concepts) > 6000
    parents = {r.target for r in concepts["Myocardial Infarction"].relationships}
    assert {c.code for c in concepts.values() if c.display in ("Myocardial Ischemia", "Infarction")} <= parents


def _concept(code: str, name: str, *synonyms: str, parents: tuple[str, ...] = ()) -> Concept:
    return Concept(
        code,
        name,
        designations=[Designation(name, "preferred"), *(Designation(s) for s in synonyms)],
        relationships=[Relationship(IS_A, p) for p in parents],
    )


def test_no_text_of_a_held_out_concept_of_any_system_is_trained_on() -> None:
    graph = OntologyGraph.from_concepts("hpo", [_concept("HP:1", "Tachycardia", "Fast heart rate")])
    graph.add(
        "icd10cm",
        [
            _concept("R00.0", "Tachycardia, unspecified", "fast heart rate", "Rapid heartbeat"),
            _concept("I47", "TACHYCARDIA"),  # its name is held-out text: left out
        ],
    )
    graph.add("mesh", mesh_concepts((HEART, MI)))
    groups = {Split.TRAIN: {k for k in graph.nodes if k[0] != "hpo"}, Split.DEV: set(), Split.TEST: {("hpo", "HP:1")}}

    train = guarded(graph, groups)

    assert train == {("icd10cm", "R00.0"), ("mesh", "D006331"), ("mesh", "D009203")}
    assert graph.nodes[("icd10cm", "R00.0")].labels == ["Tachycardia, unspecified", "Rapid heartbeat"]
    texts = {t for rows in (builders.synonym_pairs(graph, train, 6, random.Random(0)),) for row in rows for t in row}
    assert "fast heart rate" not in texts and "Rapid heartbeat" in texts
