"""A tiny two-system ontology written as records, for store, bundle and API tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from indexer.records import IS_A, CodeSystemInfo, Concept, Definition, Designation, DesignationUse, Relationship

TOY = CodeSystemInfo("toy", "http://example.org/toy", "Toy phenotypes", "2025-01-16")
TOYICD = CodeSystemInfo("toyicd", "http://example.org/toyicd", "Toy diagnoses", "2026")


def _concept(code: str, display: str, *synonyms: Designation, parents: tuple[str, ...] = (), **extra) -> Concept:
    designations = [Designation(display, DesignationUse.PREFERRED), *synonyms]
    relationships = [Relationship(IS_A, parent) for parent in parents] + extra.pop("relationships", [])
    return Concept(code, display, designations=designations, relationships=relationships, **extra)


def toy_concepts() -> list[Concept]:
    lay = {"scope": "EXACT", "type": "layperson"}
    return [
        _concept("T:0", "Phenotypic abnormality"),
        _concept("T:1", "Abnormality of the cardiovascular system", parents=("T:0",)),
        _concept(
            "T:2",
            "Tachycardia",
            Designation("Fast heart rate", **lay),
            Designation("Racing heart", scope="RELATED"),
            parents=("T:1",),
            definitions=[Definition("A heart rate that is faster than normal.", "PMID:1")],
            xrefs=["UMLS:C0039231"],
        ),
        _concept("T:3", "Bradycardia", Designation("Slow heart rate", **lay), parents=("T:1",)),
        _concept("T:5", "Abnormality of the ear", parents=("T:0",)),
        _concept(
            "T:4",
            "Hearing impairment",
            Designation("Hearing loss", **lay),
            Designation("Deafness", scope="BROAD"),
            parents=("T:5",),
            relationships=[Relationship("part_of", "T:5", "part of")],
            properties={"alt_ids": ["T:40"]},
        ),
        _concept("T:6", "obsolete Rapid pulse", active=False, associations={"replaced_by": ["T:2"]}),
        _concept("T:7", "Heart murmur", Designation("Whooshing heart sound", **lay), parents=("T:1",)),
    ]


def toyicd_concepts() -> list[Concept]:
    inclusion = {"type": "inclusion"}
    return [
        _concept("I00-I99", "Diseases of the circulatory system", properties={"kind": "chapter", "billable": False}),
        _concept(
            "I10",
            "Essential (primary) hypertension",
            Designation("High blood pressure", **inclusion),
            parents=("I00-I99",),
            properties={"kind": "category", "billable": True},
        ),
        _concept("I21", "Acute myocardial infarction", parents=("I00-I99",), properties={"kind": "category", "billable": False}),
        _concept(
            "I21.0",
            "ST elevation myocardial infarction of anterior wall",
            parents=("I21",),
            properties={"kind": "code", "billable": True},
        ),
        _concept("R00.0", "Tachycardia, unspecified", Designation("Rapid heart beat", **inclusion), parents=("I00-I99",)),
    ]


@dataclass
class ListSource:
    info: CodeSystemInfo
    concepts: list[Concept] = field(default_factory=list)
    fail_at: int | None = None  # raise after yielding this many concepts

    def __iter__(self) -> Iterator[Concept]:
        for number, concept in enumerate(self.concepts):
            if number == self.fail_at:
                from indexer.records import SourceError

                raise SourceError("toy.obo", number + 1, "malformed stanza")
            yield concept


def toy_sources() -> list[ListSource]:
    return [ListSource(TOY, toy_concepts()), ListSource(TOYICD, toyicd_concepts())]
