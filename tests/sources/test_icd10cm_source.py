"""ICD-10-CM 2026 as shipped by simple-icd-10-cm: counts measured on the real file, the
package's code list as an independent check, known codes, and a small excerpt fixture."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from indexer.records import IS_A, Concept, Designation, Relationship, SourceError
from indexer.sources.icd10cm import Icd10cmSource, default_code_list, read_code_list, with_seventh


@pytest.fixture(scope="module")
def code_list() -> frozenset[str]:
    return read_code_list(default_code_list())


def _kinds(concepts: dict[str, Concept], *kinds: str) -> list[Concept]:
    return [c for c in concepts.values() if c.properties["kind"] in kinds]


def test_info(icd10cm: Icd10cmSource) -> None:
    info = icd10cm.info
    assert (info.key, info.uri, info.name, info.version) == (
        "icd10cm",
        "http://hl7.org/fhir/sid/icd-10-cm",
        "ICD-10-CM",
        "2026",
    )
    assert icd10cm.path.name == "icd10c-tabular-April-1-2026.xml"


def test_counts(icd10cm_concepts: dict[str, Concept]) -> None:
    concepts = icd10cm_concepts.values()
    assert len(icd10cm_concepts) == 98_505
    assert Counter(c.properties["kind"] for c in concepts) == {
        "chapter": 22,
        "block": 297,
        "category": 1_918,
        "code": 96_268,
    }
    assert sum(c.properties["billable"] for c in concepts) == 74_719
    assert all(c.active for c in concepts)
    assert sum(len(c.designations) for c in concepts) == 112_485
    inclusions = [d for c in concepts for d in c.designations if d.type == "inclusion"]
    assert len(inclusions) == 13_101
    assert sum(d.type == "includes" for c in concepts for d in c.designations) == 879
    assert sum(len(c.properties.get("excludes1", [])) for c in concepts) == 5_407
    assert sum(len(c.properties.get("excludes2", [])) for c in concepts) == 2_520


def test_hierarchy_is_a_tree(icd10cm_concepts: dict[str, Concept]) -> None:
    chapters = _kinds(icd10cm_concepts, "chapter")
    assert all(not c.relationships for c in chapters)
    others = [c for c in icd10cm_concepts.values() if c.properties["kind"] != "chapter"]
    assert all(len(c.relationships) == 1 and c.relationships[0].type == IS_A for c in others)
    assert all(c.parents[0] in icd10cm_concepts for c in others)
    parents = {c.parents[0] for c in others}
    leaves = [c for c in icd10cm_concepts.values() if c.code not in parents]
    assert all(c.properties["billable"] for c in leaves)  # no empty chapter or block is left over


def test_same_codes_as_the_package_code_list(
    icd10cm_concepts: dict[str, Concept], code_list: frozenset[str]
) -> None:
    listed = {code for code in code_list if not code.isdigit() and "-" not in code}
    diags = _kinds(icd10cm_concepts, "category", "code")
    assert {c.code.replace(".", "") for c in diags} == listed
    ranges = {c.code for c in _kinds(icd10cm_concepts, "block")}
    single = {r for r in ranges if r.split("-")[0] == r.split("-")[1]}
    assert len(single) == 39 and "B10-B10" in single
    assert ranges - single == {code for code in code_list if "-" in code}


def test_billable_codes_are_the_code_list_leaves(
    icd10cm_concepts: dict[str, Concept], code_list: frozenset[str]
) -> None:
    listed = sorted(code for code in code_list if not code.isdigit() and "-" not in code)
    # sorted, a code's extensions follow it directly: a leaf is not a prefix of its successor
    leaves = {code for code, after in zip(listed, [*listed[1:], ""]) if not after.startswith(code)}
    billable = [c.code for c in icd10cm_concepts.values() if c.properties["billable"]]
    assert {code.replace(".", "") for code in billable} == leaves


def test_chapter_and_blocks(icd10cm_concepts: dict[str, Concept]) -> None:
    chapter = icd10cm_concepts["I00-I99"]
    assert chapter.display == "Diseases of the circulatory system"
    assert chapter.properties["kind"] == "chapter" and chapter.properties["chapter"] == "9"
    assert chapter.properties["billable"] is False
    assert "neoplasms (C00-D49)" in chapter.properties["excludes2"]
    block = icd10cm_concepts["I20-I25"]
    assert (block.display, block.parents) == ("Ischemic heart diseases", ["I00-I99"])
    assert block.properties == {
        "kind": "block",
        "billable": False,
        "code_also": ["the presence of hypertension (I10-I1A)"],
    }
    assert icd10cm_concepts["I21"].parents == ["I20-I25"]
    assert icd10cm_concepts["A00-A09"].parents == ["A00-B99"]
    assert icd10cm_concepts["A00-B99"].display == "Certain infectious and parasitic diseases"


def test_single_category_block_and_grouping_blocks(icd10cm_concepts: dict[str, Concept]) -> None:
    assert icd10cm_concepts["B10-B10"].display == "Other human herpesviruses"
    assert icd10cm_concepts["B10-B10"].parents == ["A00-B99"]
    assert icd10cm_concepts["B10"].parents == ["B10-B10"]
    assert icd10cm_concepts["C00-C96"].parents == ["C00-D49"]
    assert icd10cm_concepts["C00-C75"].parents == ["C00-C96"]
    assert icd10cm_concepts["C00-C14"].parents == ["C00-C75"]
    assert icd10cm_concepts["C7A-C7A"].parents == ["C00-C96"]
    assert icd10cm_concepts["D00-D09"].parents == ["C00-D49"]


def test_hypertension(icd10cm_concepts: dict[str, Concept]) -> None:
    i10 = icd10cm_concepts["I10"]
    assert i10.display == "Essential (primary) hypertension"
    assert i10.designations == [
        Designation("Essential (primary) hypertension", use="preferred"),
        Designation("high blood pressure", type="includes"),
        Designation("hypertension", type="includes"),  # nonessential modifiers dropped
    ]
    assert i10.relationships == [Relationship(IS_A, "I10-I1A")]
    assert i10.properties["kind"] == "category" and i10.properties["billable"] is True
    assert i10.properties["includes"] == [
        "high blood pressure",
        "hypertension (arterial) (benign) (essential) (malignant) (primary) (systemic)",
    ]


def test_stemi_family_and_inclusion_terms(icd10cm_concepts: dict[str, Concept]) -> None:
    family = sorted(code for code in icd10cm_concepts if code.startswith("I21.0"))
    assert family == ["I21.0", "I21.01", "I21.02", "I21.09"]
    i210 = icd10cm_concepts["I21.0"]
    assert i210.display == "ST elevation (STEMI) myocardial infarction of anterior wall"
    assert i210.parents == ["I21"] and i210.properties["billable"] is False
    assert i210.designations[1] == Designation(
        "Type 1 ST elevation myocardial infarction of anterior wall", type="inclusion"
    )
    for code in family[1:]:
        concept = icd10cm_concepts[code]
        assert concept.parents == ["I21.0"] and concept.properties["billable"] is True
    assert len(icd10cm_concepts["I21.09"].designations) == 6
    assert Designation(
        "Acute transmural myocardial infarction of anterior wall", type="inclusion"
    ) in icd10cm_concepts["I21.09"].designations


def test_seventh_character_expansion(icd10cm_concepts: dict[str, Concept]) -> None:
    extended = [c for c in icd10cm_concepts.values() if "seventh_character" in c.properties]
    assert len(extended) == 51_305
    assert len({c.parents[0] for c in extended}) == 12_929
    assert all(c.properties["billable"] for c in extended)
    assert all(not icd10cm_concepts[c.parents[0]].properties["billable"] for c in extended)
    assert sum(len(c.parents[0]) < 7 for c in extended) == 11_125  # X-padded
    for c in extended:
        assert with_seventh(c.parents[0], c.properties["seventh_character"]) == c.code


def test_femur_fracture(icd10cm_concepts: dict[str, Concept]) -> None:
    base = icd10cm_concepts["S72.001"]
    assert base.display == "Fracture of unspecified part of neck of right femur"
    assert base.parents == ["S72.00"]
    assert base.properties["billable"] is False
    note = "The appropriate 7th character is to be added to all codes from category S72"
    assert base.properties["seven_chr_note"] == note
    children = sorted(c.code for c in icd10cm_concepts.values() if c.parents == ["S72.001"])
    assert children == [f"S72.001{ch}" for ch in "ABCDEFGHJKMNPQRS"]
    closed = icd10cm_concepts["S72.001A"]
    assert closed.display == (
        "Fracture of unspecified part of neck of right femur, initial encounter for closed fracture"
    )
    assert closed.properties == {"kind": "code", "billable": True, "seventh_character": "A"}
    assert closed.relationships == [Relationship(IS_A, "S72.001")]
    # a <note> after an <extension> is another wording of that extension
    assert icd10cm_concepts["S72.001B"].designations[1] == Designation(
        "Fracture of unspecified part of neck of right femur, "
        "initial encounter for open fracture NOS",
        type="inclusion",
    )


def test_x_padding(icd10cm_concepts: dict[str, Concept]) -> None:
    poisoning = icd10cm_concepts["T36.0X1A"]
    assert poisoning.display == (
        "Poisoning by penicillins, accidental (unintentional), initial encounter"
    )
    assert poisoning.parents == ["T36.0X1"]
    fall = icd10cm_concepts["W08.XXXA"]
    assert (fall.display, fall.parents) == ("Fall from other furniture, initial encounter", ["W08"])
    assert icd10cm_concepts["W08"].properties["billable"] is False


def test_code_list_drops_extensions_the_xml_over_generates(
    icd10cm_concepts: dict[str, Concept],
) -> None:
    assert "S06.1X7A" in icd10cm_concepts
    assert "S06.1X7D" not in icd10cm_concepts and "S06.1X7S" not in icd10cm_concepts


@pytest.mark.parametrize("with_code_list", [False, True])
def test_excerpt(fixture_dir: Path, with_code_list: bool) -> None:
    folder = fixture_dir / "icd10cm"
    code_list = folder / "mini-code-list.txt" if with_code_list else None
    source = Icd10cmSource(folder / "mini-tabular.xml", code_list)
    assert source.info.version == "2099"
    concepts = {c.code: c for c in source}
    expected = {
        "S00-T88": [],
        "T07-T88": ["S00-T88"],
        "T07-T07": ["T07-T88"],
        "T07": ["T07-T07"],
        "T07.XXXA": ["T07"],
        "T07.XXXD": ["T07"],
        "T07.XXXS": ["T07"],
        "T36-T50": ["T07-T88"],
        "T36": ["T36-T50"],
        "T36.0": ["T36"],
        "T36.0X1": ["T36.0"],
        "T36.0X1A": ["T36.0X1"],
        "T36.0X1S": ["T36.0X1"],
        "T37": ["T36-T50"],
    }
    if with_code_list:
        del expected["T36.0X1S"]
    assert {code: c.parents for code, c in concepts.items()} == expected
    billable = {code for code, c in concepts.items() if c.properties["billable"]}
    assert billable == {code for code in expected if len(code) == 8} | {"T37"}
    assert concepts["T07"].designations[1] == Designation("Injury NOS", type="inclusion")
    assert concepts["T07"].properties["excludes1"] == ["injury NOS (T14.90)"]
    assert concepts["T07.XXXD"].designations[1] == Designation(
        "Unspecified multiple injuries, follow-up encounter", type="inclusion"
    )
    # includes notes: searchable without their nonessential modifiers; instructions never are
    assert concepts["T37"].designations[1:] == [Designation("poisoning by antiviral drugs", type="includes")]
    assert len(concepts["T37"].properties["includes"]) == 2


def test_malformed_xml_names_file_and_line(fixture_dir: Path) -> None:
    path = fixture_dir / "icd10cm" / "malformed.xml"
    with pytest.raises(SourceError, match=r"malformed\.xml:12: malformed XML: mismatched tag"):
        list(Icd10cmSource(path))


def test_diag_without_name(tmp_path: Path) -> None:
    path = tmp_path / "nameless.xml"
    path.write_text(
        "<ICD10CM.tabular><version>1</version><chapter><name>1</name><desc>X (A00-B99)</desc>"
        '<section id="A00-A01"><desc>Y (A00-A01)</desc><diag><desc>Z</desc></diag></section>'
        "</chapter></ICD10CM.tabular>",
        encoding="utf-8",
    )
    with pytest.raises(SourceError, match=r"nameless\.xml:1: <diag> without code or name in A00-A01"):
        list(Icd10cmSource(path))
