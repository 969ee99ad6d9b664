"""The abbreviation table: expansions find their concepts by name, ambiguity is kept, a
malformed table is refused naming file and line; and an ambiguous query never claims certainty."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from indexer.catalog import Catalog, Entry
from indexer.encoders import FakeEncoder
from indexer.knowledge import abbreviations
from indexer.knowledge.supplements import add_supplement
from indexer.pipeline import build_bundle
from indexer.records import Designation, DesignationUse, SourceError
from indexer.settings import Settings
from indexer.store import StoreReader

HEADER = "abbreviation\texpansions\tnote\n"


def _entry(row: int, code: str, display: str, *synonyms: str) -> Entry:
    labels = [Designation(display, DesignationUse.PREFERRED), *(Designation(s, scope="EXACT") for s in synonyms)]
    return Entry(row, "icd", code, display, True, "code", True, [], labels)


def _table(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "abbreviations.tsv"
    path.write_text("# a comment\n" + HEADER + rows, encoding="utf-8")
    return path


def test_each_meaning_of_an_ambiguous_abbreviation_gets_it(tmp_path: Path) -> None:
    catalog = Catalog([], [
        _entry(0, "I26.99", "Other pulmonary embolism", "Pulmonary embolism NOS"),
        _entry(1, "J90", "Pleural effusion, not elsewhere classified", "Pleural effusion"),
        _entry(2, "I10", "Essential (primary) hypertension"),
    ])
    table = abbreviations.read_table(_table(tmp_path, "PE\tpulmonary embolism\t\nPE\tpleural effusion\t\nXYZ\tnothing at all\t\n"))
    result = abbreviations.apply(catalog, table)
    assert (result.labels, result.unresolved) == (2, ["XYZ = nothing at all"])
    lent = {e.code: [d for d in e.labels if d.knowledge == "abbreviations"] for e in catalog.entries}
    assert [d.origin for d in lent["I26.99"]] == ["abbreviation table v1, line 3: PE = pulmonary embolism"]
    assert [d.origin for d in lent["J90"]] == ["abbreviation table v1, line 4: PE = pleural effusion"]
    assert lent["I10"] == []
    assert {d.kind for d in lent["J90"]} == {"abbreviation"}


@pytest.mark.parametrize(
    ("rows", "line", "message"),
    [
        ("PE\tpulmonary embolism\n", 3, "expected 3 tab-separated fields, found 2"),
        ("HTN\thypertension\t\n\tpleural effusion\t\n", 4, "an abbreviation and at least one expansion are required"),
    ],
)
def test_a_malformed_table_is_refused_naming_file_and_line(tmp_path: Path, rows: str, line: int, message: str) -> None:
    path = _table(tmp_path, rows)
    with pytest.raises(SourceError) as error:
        abbreviations.read_table(path)
    assert str(error.value) == f"{path}:{line}: {message}"


def test_the_shipped_table_reads(tmp_path: Path) -> None:
    table = abbreviations.read_table()
    assert len(table) > 100
    assert {a.text for a in table} >= {"HTN", "CHF", "MI", "PE", "MS", "RA"}
    assert len([a for a in table if a.text == "PE"]) == 2  # ambiguous: one row per meaning


def test_an_ambiguous_query_never_claims_certainty(settings: Settings, toy_reader: StoreReader, tmp_path: Path) -> None:
    """A site supplement makes "HTN" also a name of I21 here: two meanings in toyicd, so no row
    of either is more than half certain, while "MI" (one meaning) stays confident."""
    supplement = tmp_path / "site.csv"
    supplement.write_text("system,code,term,type,language\ntoyicd,I21,HTN,abbreviation,en\n", encoding="utf-8")
    add_supplement(toy_reader.engine, supplement, "site")
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        rows = client.get("/search", params={"q": "HTN", "system": "toyicd", "k": 2}).json()["results"]
        assert {r["code"] for r in rows} == {"I10", "I21"}
        assert all(r["confidence"] <= 0.5 for r in rows)
        service = client.app.state.service
        assert service.meanings("HTN", ["toyicd"]) == {"toyicd": 2}
        assert service.meanings("MI", ["toyicd"]) == {"toyicd": 1}
        mi = client.get("/search", params={"q": "MI", "system": "toyicd", "k": 1}).json()["results"][0]
        assert mi["code"] == "I21" and mi["confidence"] > 0.5


def test_a_table_abbreviation_of_another_system_bridges_unless_left_out(settings: Settings, toy_reader: StoreReader) -> None:
    """"HTN" is a name of toyicd's I10 only by the abbreviation table: searching toy, it bridges to
    I10's preferred name; a left-out label bridges nothing."""
    from app.search.scope import Scope

    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        service = client.app.state.service
        via = "via TOYICD I10 Essential (primary) hypertension: 'HTN'"
        assert service.bridges("HTN", Scope(("toy",))) == [("Essential (primary) hypertension", via)]
        assert service.bridges("HTN", Scope(("toyicd",))) == []  # its own system is searched anyway
        label = next(i for i, text in enumerate(service.bundle.label_text) if text == "HTN")
        assert service.bridges("HTN", Scope(("toy",), exclude_labels=frozenset({label}))) == []
