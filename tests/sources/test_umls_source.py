"""The UMLS loader on a tiny META directory written in the exact RRF format (pipe-terminated
fields, no header, column order from MRFILES.RRF)."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from indexer.records import IS_A, Concept, Definition, Designation, Relationship, SourceError
from indexer.sources.umls import UmlsSource
from tests.sources.editing import copy_release, edit_line, replace_field

MI, ISCHEMIA, CVD, HEART, ANEMIA, PAIN, OBSOLETE = (
    "C0027051", "C0151744", "C0007222", "C0018787", "C0002871", "C0000737", "C1234567",
)  # fmt: skip
DISEASE = {"semantic_types": ["Disease or Syndrome"], "tuis": ["T047"]}
PIPE = b"|"


@pytest.fixture(scope="module")
def meta(fixture_dir: Path) -> Path:
    return fixture_dir / "umls" / "2025AA" / "META"


def load(meta: Path, **options: object) -> dict[str, Concept]:
    return {c.code: c for c in UmlsSource(meta, **options)}


@pytest.fixture(scope="module")
def everything(meta: Path) -> dict[str, Concept]:
    return load(meta)


@pytest.fixture(scope="module")
def filtered(meta: Path) -> dict[str, Concept]:
    return load(meta, sab=["SNOMEDCT_US", "MSH"], lang=["ENG"])


def en(text: str, type_: str, use: str = "synonym", active: bool = True) -> Designation:
    return Designation(text, use=use, language="en", type=type_, active=active)


def test_fixture_files_are_rrf(meta: Path) -> None:
    listed = [line.split("|")[0] for line in (meta / "MRFILES.RRF").read_text(encoding="utf-8").splitlines()]
    assert sorted(p.name for p in meta.iterdir()) == sorted(listed)
    for path in meta.iterdir():
        lines = path.read_bytes().split(b"\n")
        assert lines.pop() == b"" and all(line.endswith(b"|") and b"\r" not in line for line in lines), path.name


def test_info(meta: Path) -> None:
    info = UmlsSource(meta).info
    assert (info.key, info.uri, info.name, info.version) == (
        "umls", "http://www.nlm.nih.gov/research/umls", "UMLS Metathesaurus", "2025AA",
    )  # fmt: skip
    sab = UmlsSource(meta, as_sab="snomedct_us").info  # name and version from MRSAB
    assert (sab.key, sab.uri, sab.name, sab.version) == (
        "snomedct_us", "http://snomed.info/sct", "US Edition of SNOMED CT", "2024_09_01",
    )  # fmt: skip
    assert UmlsSource(meta, as_sab="MSH").info.uri == "http://id.nlm.nih.gov/mesh"
    assert UmlsSource(meta, as_sab="ICD10CM").info.uri == "http://hl7.org/fhir/sid/icd-10-cm"
    assert UmlsSource(meta, as_sab="NCI").info.uri == "urn:umls:sab:NCI"


def test_all_sources_and_languages(everything: dict[str, Concept]) -> None:
    assert list(everything) == [PAIN, ANEMIA, CVD, HEART, MI, ISCHEMIA]  # suppressed-only C1234567 dropped
    mi = everything[MI]
    assert (mi.display, mi.active) == ("Myocardial Infarction", True)  # TS=P, STT=PF, ISPREF=Y
    assert mi.designations == [
        en("Myocardial Infarction", "MSH/MH", "preferred"),
        en("Myocardial infarction", "SNOMEDCT_US/PT"),  # and NCI's identical string, once
        en("Myocardial infarction (disorder)", "SNOMEDCT_US/FN"),
        en("Heart attack", "SNOMEDCT_US/SY"),  # and MSH's entry term
        en("Infarction of heart", "SNOMEDCT_US/SY"),
        en("MI - Myocardial infarction", "SNOMEDCT_US/SY"),
        Designation("Infarctus du myocarde", language="fr", type="MSHFRE/MH"),
    ]  # the obsolete SNOMEDCT_US atom (SUPPRESS=O) is dropped
    assert mi.xrefs == ["MSH:D009203", "SNOMEDCT_US:22298006", "NCI:C27996", "MSHFRE:D009203"]
    assert mi.definitions == [  # three sources; the suppressed definition is dropped
        Definition(
            "NECROSIS of the MYOCARDIUM caused by an obstruction of the blood supply to the heart "
            "(CORONARY CIRCULATION).",
            "MSH",
        ),
        Definition("Necrosis of the myocardium caused by an interruption of its blood supply.", "SNOMEDCT_US"),
        Definition(
            "Gross necrosis of the myocardium, as a result of interruption of the blood supply to the area.", "NCI"
        ),
    ]
    assert mi.properties == DISEASE
    assert everything[HEART].designations[-1] == Designation("Cœur", language="fr", type="MSHFRE/MH")


def test_relationships_read_right_to_left(everything: dict[str, Concept]) -> None:
    assert everything[MI].relationships == [
        Relationship(IS_A, ISCHEMIA),  # from SNOMEDCT_US and MSH, once
        Relationship(IS_A, CVD),
        Relationship("has_finding_site", HEART, "has finding site"),
        Relationship("RN", CVD, "is narrower than"),  # MTH
        Relationship("RO", CVD, "is related to"),  # NCI; the suppressed SNOMEDCT_US RO is dropped
    ]
    assert everything[HEART].relationships == [Relationship("finding_site_of", MI, "finding site of")]
    assert everything[ISCHEMIA].parents == [CVD]
    assert everything[ANEMIA].relationships == []


def test_sab_and_language_filters(filtered: dict[str, Concept]) -> None:
    assert list(filtered) == [ANEMIA, CVD, HEART, MI, ISCHEMIA]  # ICD10CM-only abdominal pain is gone
    mi = filtered[MI]
    assert [d.text for d in mi.designations] == [
        "Myocardial Infarction",
        "Myocardial infarction",
        "Myocardial infarction (disorder)",
        "Heart attack",
        "Infarction of heart",
        "MI - Myocardial infarction",
    ]
    assert [d.source for d in mi.definitions] == ["MSH", "SNOMEDCT_US"]
    assert mi.xrefs == ["MSH:D009203", "SNOMEDCT_US:22298006"]
    assert [r.type for r in mi.relationships] == [IS_A, IS_A, "has_finding_site"]  # no MTH, NCI edges
    assert [d.text for d in filtered[ANEMIA].designations] == ["Anemia", "anemia", "Anaemia"]


def test_semantic_types(everything: dict[str, Concept]) -> None:
    assert everything[ISCHEMIA].properties == {
        "semantic_types": ["Pathologic Function", "Disease or Syndrome"],
        "tuis": ["T046", "T047"],
    }
    body_part = ["Body Part, Organ, or Organ Component"]
    assert everything[HEART].properties == {"semantic_types": body_part, "tuis": ["T023"]}
    assert everything[PAIN].properties == {"semantic_types": ["Sign or Symptom"], "tuis": ["T184"]}


def test_first_language_gives_the_display(meta: Path) -> None:
    french_first = load(meta, lang=["FRE", "ENG"])
    assert french_first[MI].display == "Infarctus du myocarde"
    assert french_first[MI].designations[0] == Designation("Infarctus du myocarde", "preferred", "fr", type="MSHFRE/MH")
    assert french_first[PAIN].display == "Unspecified abdominal pain"


def test_include_suppressed_keeps_inactive_names(meta: Path) -> None:
    concepts = load(meta, include_suppressed=True)
    assert en("Cardiac infarction", "SNOMEDCT_US/OAP", active=False) in concepts[MI].designations
    assert "Cardiac infarction" not in concepts[MI].labels()
    obsolete = concepts[OBSOLETE]
    assert (obsolete.display, obsolete.active) == ("Heart disease NOS", False)
    assert obsolete.designations == [en("Heart disease NOS", "SNOMEDCT_US/OP", "preferred", active=False)]


def test_one_source_as_its_own_code_system(meta: Path) -> None:
    concepts = load(meta, as_sab="SNOMEDCT_US")
    assert list(concepts) == ["22298006", "271737000", "414545008", "49601007", "80891009"]
    mi = concepts["22298006"]
    assert mi.display == "Myocardial infarction"  # PT outranks FN and SY in MRRANK
    assert mi.designations == [
        en("Myocardial infarction", "PT", "preferred"),
        en("Myocardial infarction (disorder)", "FN"),
        en("Heart attack", "SY"),
        en("Infarction of heart", "SY"),
        en("MI - Myocardial infarction", "SY"),
    ]
    assert mi.xrefs == ["UMLS:C0027051"]
    assert mi.definitions == [
        Definition("Necrosis of the myocardium caused by an interruption of its blood supply.", "SNOMEDCT_US")
    ]
    assert mi.relationships == [
        Relationship(IS_A, "414545008"),
        Relationship(IS_A, "49601007"),
        Relationship("has_finding_site", "80891009", "has finding site"),
    ]
    assert mi.properties == DISEASE
    assert concepts["80891009"].relationships == [Relationship("finding_site_of", "22298006", "finding site of")]


def test_one_source_with_its_retired_codes(meta: Path) -> None:
    concepts = load(meta, as_sab="SNOMEDCT_US", include_suppressed=True)
    retired = concepts["3190001009"]
    assert (retired.display, retired.active, retired.xrefs) == ("Cardiac infarction", False, ["UMLS:C0027051"])


def test_column_order_comes_from_mrfiles(meta: Path, everything: dict[str, Concept], tmp_path: Path) -> None:
    moved = copy_release(meta, tmp_path / "META")
    mrsty = moved / "MRSTY.RRF"
    rows = [line.split("|") for line in mrsty.read_text(encoding="utf-8").splitlines()]
    mrsty.write_text("".join("|".join([r[3], r[0], r[2], r[1], *r[4:]]) + "\n" for r in rows), encoding="utf-8")
    mrfiles = moved / "MRFILES.RRF"
    listing = mrfiles.read_text(encoding="utf-8")
    mrfiles.write_text(listing.replace("CUI,TUI,STN,STY,", "STY,CUI,STN,TUI,"), encoding="utf-8")
    assert load(moved) == everything


def test_optional_files_and_release_name(meta: Path, tmp_path: Path) -> None:
    bare = copy_release(meta, tmp_path / "2024AB" / "META")  # no release.dat beside it
    for name in ("MRSAB.RRF", "MRRANK.RRF", "MRDEF.RRF", "MRREL.RRF", "MRSTY.RRF", "MRCOLS.RRF"):
        (bare / name).unlink()
    (bare / "MRFILES.RRF").write_text(
        "".join(line for line in (meta / "MRFILES.RRF").open(encoding="utf-8") if line.startswith("MRCONSO")),
        encoding="utf-8",
    )
    assert UmlsSource(bare).info.version == "2024AB"
    info = UmlsSource(bare, as_sab="SNOMEDCT_US").info
    assert (info.name, info.version) == ("SNOMEDCT_US", "2024AB")
    mi = load(bare)[MI]
    assert (mi.definitions, mi.relationships, mi.properties) == ([], [], {})


def test_zip_of_the_release(meta: Path, everything: dict[str, Concept], tmp_path: Path) -> None:
    archive = tmp_path / "umls-2025AA-metathesaurus.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(meta.parent.rglob("*")):
            zipped.write(path, path.relative_to(meta.parent.parent))
    source = UmlsSource(archive)
    assert source.info.version == "2025AA"  # from release.dat in the zip
    assert {c.code: c for c in source} == everything


# --- malformed input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "edit", "message"),
    [
        ("MRCONSO.RRF", 3, lambda row: row[:-1], "expected 18 '|'-terminated columns, got 17"),
        ("MRCONSO.RRF", 4, replace_field(0, b"C00028X1", PIPE), "CUI: 'C00028X1' is not a UMLS identifier"),
        ("MRCONSO.RRF", 5, replace_field(16, b"Q", PIPE), "SUPPRESS: unknown flag 'Q'"),
        ("MRREL.RRF", 2, replace_field(4, b"27051", PIPE), "CUI2: '27051' is not a UMLS identifier"),
        ("MRSTY.RRF", 6, replace_field(1, b"047", PIPE), "TUI: '047' is not a UMLS identifier"),
        ("MRDEF.RRF", 2, lambda row: row + b"extra|", "expected 8 '|'-terminated columns, got 9"),
        ("MRRANK.RRF", 1, replace_field(0, b"high", PIPE), "MRRANK_RANK: 'high' is not a number"),
        ("MRFILES.RRF", 2, replace_field(3, b"17", PIPE), "CLS '17' does not match the 18 columns"),
    ],
)
def test_malformed_row_names_file_and_line(
    meta: Path, tmp_path: Path, name: str, line: int, edit: Callable[[bytes], bytes], message: str
) -> None:
    broken = copy_release(meta, tmp_path / "META")
    edit_line(broken / name, line, edit)
    with pytest.raises(SourceError, match=message) as raised:
        list(UmlsSource(broken, as_sab="SNOMEDCT_US"))
    assert (raised.value.path, raised.value.line) == (str(broken / name), line)


def test_missing_files(meta: Path, tmp_path: Path) -> None:
    broken = copy_release(meta, tmp_path / "META")
    (broken / "MRDEF.RRF").unlink()
    with pytest.raises(SourceError, match="MRDEF.RRF is listed in MRFILES.RRF but missing"):
        UmlsSource(broken)
    (broken / "MRCONSO.RRF").unlink()
    (broken / "MRFILES.RRF").write_text("MRDEF.RRF|Definitions|CUI,AUI,ATUI,SATUI,SAB,DEF,SUPPRESS,CVF|8|0|0|\n")
    with pytest.raises(SourceError, match="no MRCONSO.RRF"):
        UmlsSource(broken)
    (broken / "MRFILES.RRF").unlink()
    with pytest.raises(SourceError, match="no MRFILES.RRF"):
        UmlsSource(broken)


def test_unlisted_file_or_column(meta: Path, tmp_path: Path) -> None:
    broken = copy_release(meta, tmp_path / "META")
    mrfiles = broken / "MRFILES.RRF"
    mrfiles.write_text(mrfiles.read_text(encoding="utf-8").replace(",STR,", ",NAME,"), encoding="utf-8")
    with pytest.raises(SourceError, match="MRCONSO.RRF has no column STR") as raised:
        list(UmlsSource(broken))
    assert raised.value.path == str(mrfiles)
    mrfiles.write_text("".join(line for line in (meta / "MRFILES.RRF").open() if not line.startswith("MRSTY")))
    with pytest.raises(SourceError, match="MRSTY.RRF is not listed, so its columns are unknown"):
        UmlsSource(broken)


def test_bad_options(meta: Path) -> None:
    with pytest.raises(ValueError, match="sab and as_sab exclude each other"):
        UmlsSource(meta, sab=["MSH"], as_sab="SNOMEDCT_US")
    with pytest.raises(ValueError, match="unknown source vocabulary SNOMEDCT; MRSAB.RRF lists ICD10CM, MSH"):
        UmlsSource(meta, sab=["SNOMEDCT"])
    with pytest.raises(SourceError, match=r"no atom passes the filters \(lang=GER, sab=any\)"):
        list(UmlsSource(meta, lang=["GER"]))
