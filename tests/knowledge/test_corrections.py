"""Corrections: a reviewer's denial stops an alignment lending names and removes a lent name."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.catalog import Catalog, Entry
from indexer.knowledge import corrections
from indexer.knowledge.alignment import Alignment, propagate
from indexer.records import Designation, DesignationUse, SourceError

HEADER = "# Corrections. Version 1\nkind\tsystem\tcode\twhat\treason\treviewer\tdate\n"


def _catalog() -> Catalog:
    reflux = Entry(
        0,
        "hpo",
        "HP:0002020",
        "Gastroesophageal reflux",
        True,
        None,
        None,
        [],
        [
            Designation("Gastroesophageal reflux", DesignationUse.PREFERRED),
            Designation("GERD", scope="EXACT", type="abbreviation"),
        ],
    )
    heartburn = Entry(
        1, "icd10cm", "R12", "Heartburn", True, "code", True, [], [Designation("Heartburn", DesignationUse.PREFERRED)]
    )
    return Catalog([], [reflux, heartburn])


def _read(tmp_path: Path, rows: str) -> list[corrections.Correction]:
    path = tmp_path / "corrections.tsv"
    path.write_text(HEADER + rows, encoding="utf-8")
    return corrections.read(path)


def test_a_denied_alignment_lends_nothing(tmp_path: Path) -> None:
    catalog = _catalog()
    aligned = [Alignment(0, 1, 0.95, "label", "heartburn")]
    denied = _read(tmp_path, "alignment\ticd10cm\tR12\thpo HP:0002020\tHeartburn is not GERD\tme\t2026-11-28\n")
    stopped = corrections.denied_alignments(catalog, aligned, denied)
    assert stopped == aligned
    assert propagate(catalog, [a for a in aligned if a not in stopped]) == 0
    assert [d.text for d in catalog.get("icd10cm", "R12").labels] == ["Heartburn"]


def test_a_denied_name_is_removed_but_the_terminologys_own_names_stay(tmp_path: Path) -> None:
    catalog = _catalog()
    propagate(catalog, [Alignment(0, 1, 0.95, "label", "heartburn")])
    assert "GERD" in [d.text for d in catalog.get("icd10cm", "R12").labels]
    denied = _read(
        tmp_path,
        "designation\ticd10cm\tR12\tgerd\tlent by a wrong alignment\tme\t2026-11-28\n"
        "designation\ticd10cm\tR12\tHeartburn\tthe release's own name\tme\t2026-11-28\n",
    )
    assert corrections.deny_designations(catalog, denied) == 1
    assert [d.text for d in catalog.get("icd10cm", "R12").labels] == ["Heartburn", "Gastroesophageal reflux"]


def test_a_malformed_correction_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(
        SourceError, match=r"corrections.tsv:3: an alignment names the other concept as 'system code' \(got 'HP:0002020'\)"
    ):
        _read(tmp_path, "alignment\ticd10cm\tR12\tHP:0002020\twhy\tme\t2026-11-28\n")


def test_the_shipped_corrections_deny_the_heartburn_alignment() -> None:
    assert ("alignment", "icd10cm", "R12", "hpo HP:0002020") in [(c.kind, c.system, c.code, c.what) for c in corrections.read()]
