"""The OBO reader on small files written in the exact format."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.records import IS_A, Concept, Definition, Designation, Relationship, SourceError
from indexer.sources.obo import OboSource


@pytest.fixture(scope="module")
def mini(fixture_dir: Path) -> OboSource:
    return OboSource(fixture_dir / "obo" / "mini.obo")


@pytest.fixture(scope="module")
def concepts(mini: OboSource) -> dict[str, Concept]:
    return {c.code: c for c in mini}


def test_info_defaults_from_the_file(mini: OboSource) -> None:
    assert mini.info.key == "mini"  # the id prefix, lower-cased
    assert mini.info.name == "mini"
    assert mini.info.uri == "http://purl.obolibrary.org/obo/mini.owl"
    assert mini.info.version == "2024-03-05"  # the date out of "mini/releases/2024-03-05"


def test_info_overrides(fixture_dir: Path) -> None:
    info = OboSource(fixture_dir / "obo" / "mini.obo", key="m", uri="urn:m", name="Mini").info
    assert (info.key, info.uri, info.name) == ("m", "urn:m", "Mini")


def test_terms_only_in_file_order(concepts: dict[str, Concept]) -> None:
    assert list(concepts) == ["MINI:0000001", "MINI:0000002", "MINI:0000003", "MINI:0000004"]


def test_names_definitions_and_escapes(concepts: dict[str, Concept]) -> None:
    term = concepts["MINI:0000002"]
    assert term.display == 'Heart rhythm "abnormality"'
    assert term.designations[0] == Designation('Heart rhythm "abnormality"', use="preferred")
    assert term.definitions == [
        Definition(
            'A "quoted" word,\nthen a backslash \\ and a comma.',
            source="PMID:123, https://example.org/paper, ISBN:978,0",
        )
    ]
    assert term.properties["comment"] == 'Mind the {braces} and "quotes" inside.'


def test_synonyms_scopes_and_types(concepts: dict[str, Concept]) -> None:
    synonyms = concepts["MINI:0000002"].designations[1:]
    assert synonyms == [
        Designation("Irregular heartbeat", scope="EXACT", type="layperson"),
        Designation("Arrhythmia", scope="BROAD"),
        Designation("biallelic", scope="EXACT", type="allelic_requirement"),
        Designation("Old name", scope="RELATED", type="obsolete_synonym", active=False),
        Designation("Dysrhythmia", scope="RELATED"),
    ]
    assert "Old name" not in concepts["MINI:0000002"].labels()


def test_edges_xrefs_and_properties(concepts: dict[str, Concept]) -> None:
    term = concepts["MINI:0000002"]
    assert term.relationships == [
        Relationship(IS_A, "MINI:0000001"),
        Relationship("part_of", "MINI:0000003", label="part of"),
    ]
    assert term.parents == ["MINI:0000001"]
    assert term.xrefs == ["UMLS:C0003811", "SNOMEDCT_US:698247007"]
    assert term.properties["alt_ids"] == ["MINI:0000020", "MINI:0000021"]
    assert term.properties["subsets"] == ["core"]
    assert concepts["MINI:0000003"].parents == ["MINI:0000001"]  # qualifiers and comment dropped
    assert concepts["MINI:0000001"].designations == [Designation("All", use="preferred")]


def test_obsolete_term(concepts: dict[str, Concept]) -> None:
    term = concepts["MINI:0000004"]
    assert term.active is False
    assert term.associations == {
        "replaced_by": ["MINI:0000002"],
        "consider": ["MINI:0000003", "MINI:0000001"],
    }
    assert all(c.active for code, c in concepts.items() if code != "MINI:0000004")


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("unterminated-quote.obo", 10, "unterminated quoted string"),
        ("missing-colon.obo", 6, "expected 'tag: value'"),
        ("missing-id.obo", 7, "[Term] stanza without id"),
    ],
)
def test_malformed_files_name_file_and_line(
    fixture_dir: Path, name: str, line: int, message: str
) -> None:
    path = fixture_dir / "obo" / name
    with pytest.raises(SourceError) as caught:
        list(OboSource(path, key="x"))
    assert caught.value.line == line
    assert f"{name}:{line}: " in str(caught.value)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("tag_line", "message"),
    [
        ('synonym: "Text" SOMETIMES []', "unknown synonym scope 'SOMETIMES'"),
        ('synonym: "Text" EXACT [PMID:1', "unterminated xref list"),
        ("def: No quotes []", "expected a quoted string"),
        ("relationship: part_of", "expected 2 value(s)"),
        ("name: Text\x00", "NUL character"),
    ],
)
def test_malformed_values(tmp_path: Path, tag_line: str, message: str) -> None:
    path = tmp_path / "bad.obo"
    path.write_text(f"format-version: 1.4\n\n[Term]\nid: X:1\n{tag_line}\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"bad\.obo:5: ") as caught:
        list(OboSource(path))
    assert message in str(caught.value)


def test_crlf_and_missing_version(tmp_path: Path) -> None:
    path = tmp_path / "crlf.obo"
    path.write_bytes(b"format-version: 1.4\r\n\r\n[Term]\r\nid: GO:1\r\nname: One\r\n")
    source = OboSource(path)
    assert (source.info.key, source.info.version) == ("go", "unknown")
    assert [(c.code, c.display) for c in source] == [("GO:1", "One")]


def test_path_required() -> None:
    with pytest.raises(ValueError, match="needs the path"):
        OboSource()


def test_a_duplicate_id_names_file_and_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "dup.obo"
    path.write_text("format-version: 1.4\n\n[Term]\nid: X:1\nname: One\n\n[Term]\nid: X:1\nname: Again\n", encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        list(OboSource(path))
    assert str(caught.value) == f"{path}:7: duplicate id 'X:1' (first at line 3)"
