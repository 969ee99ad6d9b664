"""The SNOMED CT RF2 loader on a tiny Snapshot release written in the exact format (CRLF,
tab-separated, header rows), as a directory and as a zip."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer.records import IS_A, Concept, Definition, Designation, Relationship, SourceError
from indexer.sources.snomed import GB_ENGLISH, SnomedSource, verhoeff_valid
from tests.sources.editing import copy_release, edit_line, find, replace_field

MI, IHD, CVD, ANEMIA, HEART = "22298006", "414545008", "49601007", "271737000", "80891009"
RETIRED, AMBIGUOUS = "3190001009", "3190002002"  # inactive concepts
FINDING_SITE = "363698007"


@pytest.fixture(scope="module")
def release(fixture_dir: Path) -> Path:
    return fixture_dir / "rf2"


@pytest.fixture(scope="module")
def concepts(release: Path) -> dict[str, Concept]:
    return {c.code: c for c in SnomedSource(release)}


def us(text: str, use: str = "synonym", type_: str = "synonym") -> Designation:
    return Designation(text, use=use, language="en-US", type=type_)


def gb(text: str, use: str = "synonym", type_: str = "synonym") -> Designation:
    return Designation(text, use=use, language="en-GB", type=type_)


def test_fixture_files_are_rf2(release: Path) -> None:
    files = sorted(p.name for p in release.rglob("*.txt") if "Snapshot" in p.parts)
    assert files == [
        "der2_cRefset_AssociationSnapshot_INT_20250101.txt",
        "der2_cRefset_LanguageSnapshot-en_INT_20250101.txt",
        "sct2_Concept_Snapshot_INT_20250101.txt",
        "sct2_Description_Snapshot-en_INT_20250101.txt",
        "sct2_Relationship_Snapshot_INT_20250101.txt",
        "sct2_TextDefinition_Snapshot-en_INT_20250101.txt",
    ]
    for path in release.rglob("*.txt"):
        data = path.read_bytes()
        assert data.count(b"\n") == data.count(b"\r\n") > 1 and data.endswith(b"\r\n"), path.name
        assert b"\t" in data.splitlines()[0]


def test_info(release: Path) -> None:
    info = SnomedSource(release).info
    assert (info.key, info.uri, info.name) == ("snomedct", "http://snomed.info/sct", "SNOMED CT")
    # the latest effectiveTime, and the module holding most concepts of that date (core, not model)
    assert info.version == "http://snomed.info/sct/900000000000207008/version/20250101"


def test_concepts_in_id_order_full_files_ignored(concepts: dict[str, Concept]) -> None:
    assert list(concepts) == sorted(concepts, key=int)
    assert len(concepts) == 14
    assert [code for code, c in concepts.items() if not c.active] == [RETIRED, AMBIGUOUS]


def test_myocardial_infarction(concepts: dict[str, Concept]) -> None:
    mi = concepts[MI]
    assert (mi.display, mi.active) == ("Myocardial infarction", True)
    assert mi.designations == [
        us("Myocardial infarction", "preferred"),
        us("Myocardial infarction", "fsn", "fsn"),  # the FSN, its semantic tag stripped
        us("Heart attack"),
        us("Infarction of heart"),
        us("MI - Myocardial infarction"),
        gb("Myocardial infarction", "preferred"),
        gb("Myocardial infarction", "fsn", "fsn"),
        gb("Heart attack"),
        gb("MI - Myocardial infarction"),  # "Infarction of heart" is not in the GB refset
        Designation("Cardiac infarction", language="en", type="synonym", active=False),
    ]
    assert mi.labels() == ["Myocardial infarction", "Heart attack", "Infarction of heart", "MI - Myocardial infarction"]
    assert mi.properties == {"semantic_tag": "disorder", "case_significance": {"MI - Myocardial infarction": "CS"}}
    assert mi.definitions == [
        Definition("Necrosis of the myocardium caused by an interruption of its blood supply.", language="en")
    ]
    # inferred and active only: the inactive is-a to Disease is gone; two parents, one attribute
    assert mi.relationships == [
        Relationship(IS_A, IHD),
        Relationship(IS_A, CVD),
        Relationship(FINDING_SITE, HEART, label="Finding site"),
    ]
    assert mi.parents == [IHD, CVD]
    assert (mi.associations, mi.xrefs) == ({}, [])


def test_dialects_preferred_and_acceptable(concepts: dict[str, Concept]) -> None:
    anemia = concepts[ANEMIA]
    assert anemia.display == "Anemia"
    assert anemia.designations == [
        us("Anemia", "preferred"),
        us("Anemia", "fsn", "fsn"),
        gb("Anaemia", "preferred"),
        gb("Anemia", "fsn", "fsn"),
        gb("Anemia"),  # acceptable in GB English
    ]
    assert concepts[IHD].designations[2] == gb("Ischaemic heart disease", "preferred")


def test_language_refset_option_picks_the_display(release: Path) -> None:
    british = {c.code: c for c in SnomedSource(release, language_refset=GB_ENGLISH)}
    assert british[ANEMIA].display == "Anaemia"
    assert british[ANEMIA].designations[:3] == [gb("Anaemia", "preferred"), gb("Anemia", "fsn", "fsn"), gb("Anemia")]
    assert british[IHD].display == "Ischaemic heart disease"
    assert british[MI].display == "Myocardial infarction"


def test_description_in_no_language_refset_keeps_its_language_code(concepts: dict[str, Concept]) -> None:
    heart = concepts[HEART]
    assert heart.designations[-1] == Designation("Cardiac structure", language="en", type="synonym")
    assert heart.parents == ["123037004"]  # the active "additional" relationship is not inferred
    assert heart.properties == {"semantic_tag": "body structure"}


def test_inactive_concepts_and_historical_associations(concepts: dict[str, Concept]) -> None:
    retired = concepts[RETIRED]
    assert (retired.display, retired.active) == ("Cardiac infarction", False)
    assert retired.associations == {"replaced_by": [MI]}  # the inactive SAME AS row is ignored
    assert retired.relationships == []
    assert concepts[AMBIGUOUS].associations == {"possibly_equivalent_to": [CVD, IHD]}
    # REFERS TO points from a description: no concept carries it
    assert all("refers_to" not in c.associations for c in concepts.values())


def test_attribute_types_and_root(concepts: dict[str, Concept]) -> None:
    assert concepts[FINDING_SITE].properties == {"semantic_tag": "attribute"}
    root = concepts["138875005"]
    assert (root.display, root.parents) == ("SNOMED CT Concept", [])
    assert root.properties == {"semantic_tag": "SNOMED RT+CTV3", "case_significance": {"SNOMED CT Concept": "CS"}}


def test_zip_reads_like_the_directory(release: Path, concepts: dict[str, Concept], tmp_path: Path) -> None:
    archive = tmp_path / "SnomedCT_InternationalRF2_PRODUCTION_20250101T120000Z.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(release.rglob("*")):
            zipped.write(path, path.relative_to(release))
    source = SnomedSource(archive)
    assert source.info == SnomedSource(release).info
    assert list(source) == list(concepts.values())


@pytest.mark.parametrize(
    ("item", "valid"),
    [("22298006", True), ("900000000000509007", True), ("3190001009", True), ("22298007", False), ("22289006", False)],
)
def test_verhoeff(item: str, valid: bool) -> None:
    assert verhoeff_valid(item) is valid


# --- malformed input ------------------------------------------------------------------------------

Edit = Callable[[bytes], bytes]
TAB = b"\t"


@pytest.mark.parametrize(
    ("prefix", "line", "edit", "message"),
    [
        ("sct2_Description", 5, lambda row: row.rsplit(TAB, 1)[0], "expected 9 tab-separated columns, got 8"),
        ("sct2_Relationship", 3, replace_field(4, b"64572002", TAB), "sourceId: 64572002 fails its Verhoeff"),
        ("sct2_Description", 4, replace_field(0, b"404684003", TAB), "id: 404684003 is not a description identifier"),
        ("sct2_Concept", 2, replace_field(0, b"12x45", TAB), "id: '12x45' is not a SNOMED CT identifier"),
        ("der2_cRefset_Language", 7, replace_field(6, b"900000000000003001", TAB), "acceptabilityId: unknown value"),
        ("der2_cRefset_Association", 3, replace_field(2, b"yes", TAB), "active: 'yes' is not 0 or 1"),
        ("sct2_TextDefinition", 2, replace_field(1, b"2025-01-01", TAB), "effectiveTime: '2025-01-01' is not"),
        ("sct2_Description", 6, lambda row: row + b" \xff", "not UTF-8"),
        ("sct2_Description", 6, lambda row: row + b"\x00", "NUL character"),
        ("sct2_Relationship", 1, lambda row: row.replace(b"sourceId", b"source"), "expected the header"),
    ],
)
def test_malformed_row_names_file_and_line(
    release: Path, tmp_path: Path, prefix: str, line: int, edit: Edit, message: str
) -> None:
    broken = copy_release(release, tmp_path / "rf2")
    path = find(broken / "SnomedCT_InternationalRF2_PRODUCTION_20250101T120000Z" / "Snapshot", prefix)
    edit_line(path, line, edit)
    with pytest.raises(SourceError, match=message) as raised:
        list(SnomedSource(broken))
    assert (raised.value.path, raised.value.line) == (str(path), line)


def test_duplicate_concept(release: Path, tmp_path: Path) -> None:
    broken = copy_release(release, tmp_path / "rf2")
    path = find(broken, "sct2_Concept_Snapshot")
    path.write_bytes(path.read_bytes() + path.read_bytes().splitlines(keepends=True)[1])
    with pytest.raises(SourceError, match="duplicate concept id") as raised:
        list(SnomedSource(broken))
    assert (raised.value.path, raised.value.line) == (str(path), len(path.read_bytes().splitlines()))


def test_missing_file(release: Path, tmp_path: Path) -> None:
    broken = copy_release(release, tmp_path / "rf2")
    find(broken, "der2_cRefset_Language").unlink()
    with pytest.raises(SourceError, match="no der2_cRefset_LanguageSnapshot\\*.txt file in the release"):
        SnomedSource(broken)
    with pytest.raises(SourceError, match="no such file or directory"):
        SnomedSource(tmp_path / "nowhere")


def test_language_refset_must_be_in_the_release(release: Path) -> None:
    with pytest.raises(SourceError, match="language refset 32570271000036106 has no active member"):
        list(SnomedSource(release, language_refset=32570271000036106))
    with pytest.raises(ValueError, match="fails its Verhoeff check digit"):
        SnomedSource(release, language_refset="900000000000509008")
