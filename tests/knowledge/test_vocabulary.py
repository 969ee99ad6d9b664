"""The project's vocabulary: phrasings by code, with their origin, checked against the release,
switchable table by table."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.catalog import Catalog, Entry
from indexer.knowledge import vocabulary
from indexer.knowledge.vocabulary import VocabularyTable
from indexer.records import Designation, DesignationUse, SourceError

HEADER = "# A vocabulary. Version 2 (2026-11-28).\n# written for a test\ncode\tname\tphrasing\tregister\n"


def _catalog() -> Catalog:
    def entry(row: int, code: str, display: str) -> Entry:
        return Entry(row, "icd10cm", code, display, True, "code", True, [], [Designation(display, DesignationUse.PREFERRED)])

    return Catalog([], [entry(0, "R00.0", "Tachycardia, unspecified"), entry(1, "I10", "Essential (primary) hypertension")])


def _table(tmp_path: Path, rows: str, name: str = "icd10cm_test") -> VocabularyTable:
    path = tmp_path / f"{name}.tsv"
    path.write_text(HEADER + rows, encoding="utf-8")
    return VocabularyTable(path)


def test_phrasings_become_labels_with_their_register_and_origin(tmp_path: Path) -> None:
    table = _table(
        tmp_path,
        (
            "R00.0\tTachycardia, unspecified\tmy heart is racing\tlay\n"
            "I10\tEssential (primary) hypertension\tHTN, well controlled\tclinician\n"
            "I10\tHypertension\tpressure is up\tlay\n"  # a name the release does not give I10
            "Z99.81\tDependence on supplemental oxygen\ton home O2\tclinician\n"  # not loaded
        ),
    )
    catalog = _catalog()
    applied = table.apply(catalog, table.read())
    assert applied.labels == 2
    assert applied.unresolved == [
        "line 6: I10 (named 'Hypertension', the release says 'Essential (primary) hypertension')",
        "line 7: Z99.81 (not in the loaded release)",
    ]
    [lay] = [d for d in catalog.get("icd10cm", "R00.0").labels if d.knowledge == "vocabulary"]
    assert (lay.text, lay.kind, lay.origin) == ("my heart is racing", "lay phrasing", "vocabulary icd10cm_test v2, line 4: lay")
    assert table.system == "icd10cm" and table.version == 2


@pytest.mark.parametrize(
    ("rows", "line", "message"),
    [
        (
            "R00.0\tTachycardia, unspecified\tracing heart\n",
            4,
            "expected 4 tab-separated fields (code, name, phrasing, register), found 3",
        ),
        ("R00.0\tTachycardia, unspecified\tracing heart\tnurse\n", 4, "register 'nurse' is not one of lay, parent, clinician"),
        ("R00.0\tTachycardia, unspecified\t\tlay\n", 4, "a code and a phrasing are required"),
    ],
)
def test_a_malformed_row_is_refused_naming_file_and_line(tmp_path: Path, rows: str, line: int, message: str) -> None:
    table = _table(tmp_path, rows)
    with pytest.raises(SourceError) as raised:
        table.read()
    assert str(raised.value) == f"{table.path}:{line}: {message}"


def test_the_shipped_tables_load_and_each_can_be_switched_off() -> None:
    every = vocabulary.tables()
    assert {t.system for t in every} == {"hpo", "icd10cm"}
    assert all(t.version >= 1 and t.read() for t in every)
    off = every[0].name
    assert off not in [t.name for t in vocabulary.tables(off=[off])]
