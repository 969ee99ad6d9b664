"""Open text beside the store (MeSH) and the guard that keeps held-out text out of training."""

from __future__ import annotations

import random
from pathlib import Path

from indexer.knowledge import hpoa, mesh
from indexer.records import IS_A, Concept, Designation, Relationship
from training.data import builders
from training.data.graph import OntologyGraph
from training.data.open_text import disease_concepts, mesh_concepts
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


HPOA = """#description: "HPO annotations for rare diseases"
#version: 2025-01-16
database_id\tdisease_name\tqualifier\thpo_id\treference\tevidence\tonset\tfrequency\tsex\tmodifier\taspect\tbiocuration
OMIM:1\tSmith syndrome\t\tHP:1\tPMID:1\tPCS\t\t\t\t\tP\tx
OMIM:1\tSmith syndrome\t\tHP:1\tPMID:2\tPCS\t\t\t\t\tP\tx
OMIM:1\tSmith syndrome\tNOT\tHP:2\tPMID:1\tPCS\t\t\t\t\tP\tx
OMIM:1\tSmith syndrome\t\tHP:3\tPMID:1\tPCS\t\t\t\t\tP\tx
OMIM:1\tSmith syndrome\t\tHP:9\tPMID:1\tPCS\t\t\t\t\tI\tx
OMIM:1\tSmith syndrome\t\tHP:8\tPMID:1\tPCS\t\t\t\t\tC\tx
ORPHA:7\tJones disease\t\tHP:2\tPMID:1\tTAS\t\t\t\t\tP\tx
"""


def test_disease_annotations_describe_a_disease_by_its_training_phenotypes_only(tmp_path: Path) -> None:
    path = tmp_path / "phenotype.hpoa"
    path.write_text(HPOA, encoding="utf-8")
    diseases = {c.code: c for c in disease_concepts(path)}
    assert hpoa.release(path) == "phenotype.hpoa 2025-01-16"
    # NOT-qualified and clinical-course rows are left out; a term annotated twice is one edge
    assert [(r.type, r.target) for r in diseases["OMIM:1"].relationships] == [
        ("has phenotype", "HP:1"), ("has phenotype", "HP:3"), ("has mode of inheritance", "HP:9")
    ]
    graph = OntologyGraph.from_concepts(
        "hpo",
        [_concept("HP:1", "Seizure", "Epileptic seizure"), _concept("HP:2", "Ataxia"), _concept("HP:3", "Microcephaly"),
         _concept("HP:9", "Autosomal recessive inheritance")],
    )
    graph.add("hpoa", diseases.values(), related="hpo")
    groups = {Split.TRAIN: set(graph.nodes) - {("hpo", "HP:3")}, Split.DEV: set(), Split.TEST: {("hpo", "HP:3")}}
    train = guarded(graph, groups)
    pairs = builders.description_pairs(graph, train, 10, random.Random(0))
    smith = sorted(text for anchor, text in pairs if anchor == "Smith syndrome")
    assert smith[0] == "something which has mode of inheritance Autosomal recessive inheritance"
    assert smith[1] in ("something which has phenotype Seizure", "something which has phenotype Epileptic seizure")
    assert len(smith) == 2  # Microcephaly is held out: never named
    assert [text for anchor, text in pairs if anchor == "Jones disease"] == ["something which has phenotype Ataxia"]


def test_the_packaged_disease_annotations_read() -> None:
    diseases = {c.code: c for c in disease_concepts()}
    assert len(diseases) > 12000
    assert {c.code.partition(":")[0] for c in diseases.values()} == {"OMIM", "ORPHA", "DECIPHER"}
    assert hpoa.release().startswith("phenotype.hpoa 20")
