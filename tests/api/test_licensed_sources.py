"""SNOMED CT and UMLS fixture releases through the store, a bundle and the API; and a failed
licensed load that leaves the store as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text
from typer.testing import CliRunner

from app.main import create_app
from app.settings import Settings
from indexer.cli import cli
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.records import SourceError
from indexer.sources import SnomedSource, UmlsSource
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.sources.editing import copy_release, edit_line, find, replace_field

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RF2, META = FIXTURES / "rf2", FIXTURES / "umls" / "2025AA" / "META"
TABLES = ("code_system", "code_system_version", "concept", "designation", "definition", "relationship")


@pytest.fixture
def engine(settings: Settings) -> Iterator[Engine]:
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    yield engine
    engine.dispose()


@pytest.fixture
def licensed(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    load_source(engine, SnomedSource(RF2))
    load_source(engine, UmlsSource(META, sab=["SNOMEDCT_US", "MSH"], lang=["ENG"]))
    build_bundle(settings, StoreReader(engine), FakeEncoder(32), ["snomedct", "umls"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        yield client


def top(client: TestClient, q: str, system: str, **params: object) -> dict:
    body = client.get("/search", params={"q": q, "system": system, "mode": "lexical", **params}).json()
    return body["results"][0] if body["results"] else {}


def test_found_by_a_synonym(licensed: TestClient) -> None:
    hit = top(licensed, "heart attack", "snomedct")
    assert (hit["code"], hit["display"], hit["matched_term"]) == ("22298006", "Myocardial infarction", "Heart attack")
    assert top(licensed, "anaemia", "snomedct")["code"] == "271737000"  # the GB-preferred term
    hit = top(licensed, "infarction of heart", "umls")
    assert (hit["code"], hit["display"]) == ("C0027051", "Myocardial Infarction")


def test_inactive_concept_redirects_through_replaced_by(licensed: TestClient) -> None:
    retired = licensed.get("/concepts/snomedct/3190001009").json()
    assert (retired["display"], retired["status"]) == ("Cardiac infarction", "inactive")
    assert retired["associations"] == {"replaced_by": ["22298006"]}
    replacement = licensed.get(f"/concepts/snomedct/{retired['associations']['replaced_by'][0]}").json()
    assert (replacement["display"], replacement["status"]) == ("Myocardial infarction", "active")
    assert top(licensed, "cardiac infarction", "snomedct").get("code") != "3190001009"
    assert top(licensed, "cardiac infarction", "snomedct", include_inactive="true")["code"] == "3190001009"


def test_snomed_concept_detail(licensed: TestClient) -> None:
    body = licensed.get("/concepts/snomedct/22298006").json()
    assert body["version"] == "http://snomed.info/sct/900000000000207008/version/20250101"
    synonyms = [(s["text"], s["use"], s["language"]) for s in body["synonyms"]]
    assert synonyms[:3] == [
        ("Myocardial infarction", "preferred", "en-US"),
        ("Myocardial infarction", "fsn", "en-US"),
        ("Heart attack", "synonym", "en-US"),
    ]
    assert ("Infarction of heart", "synonym", "en-GB") not in synonyms
    assert all(text != "Cardiac infarction" for text, _, _ in synonyms)  # an inactive description
    assert body["definitions"] == [
        {"text": "Necrosis of the myocardium caused by an interruption of its blood supply.", "source": None}
    ]
    assert body["parents"] == [
        {"code": "414545008", "display": "Ischemic heart disease"},
        {"code": "49601007", "display": "Disorder of cardiovascular system"},
    ]
    assert body["properties"]["semantic_tag"] == "disorder"


def test_umls_semantic_types_and_definitions(licensed: TestClient) -> None:
    body = licensed.get("/concepts/umls/C0027051").json()
    assert body["properties"] == {"semantic_types": ["Disease or Syndrome"], "tuis": ["T047"]}
    assert [d["source"] for d in body["definitions"]] == ["MSH", "SNOMEDCT_US"]
    assert body["definitions"][1]["text"] == "Necrosis of the myocardium caused by an interruption of its blood supply."
    assert body["parents"] == [
        {"code": "C0151744", "display": "Myocardial Ischemia"},
        {"code": "C0007222", "display": "Cardiovascular Diseases"},
    ]
    assert "SNOMEDCT_US:22298006" in body["xrefs"]


def test_both_load_on_every_store_backend(store_url: str) -> None:
    migrate(store_url)
    engine = make_engine(store_url)
    try:
        results = [
            load_source(engine, source)
            for source in (SnomedSource(RF2), UmlsSource(META), UmlsSource(META, as_sab="SNOMEDCT_US"))
        ]
        assert [(r.system, r.concepts, r.designations, r.definitions, r.relationships) for r in results] == [
            ("snomedct", 14, 64, 1, 14),
            ("umls", 6, 20, 4, 8),
            ("snomedct_us", 5, 10, 1, 5),
        ]
        reader = StoreReader(engine)
        retired = reader.concept(reader.system("snomedct"), "3190001009").concept
        assert (retired.active, retired.associations) == (False, {"replaced_by": ["22298006"]})
    finally:
        engine.dispose()


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {table: conn.scalar(text(f"SELECT count(*) FROM {table}")) for table in TABLES}


def test_a_failed_load_leaves_the_store_unchanged(engine: Engine, tmp_path: Path) -> None:
    load_source(engine, UmlsSource(META))
    before = counts(engine)
    assert before["concept"] == 6
    rf2 = copy_release(RF2, tmp_path / "rf2")
    edit_line(find(rf2, "der2_cRefset_Association"), 3, replace_field(6, b"22298007", b"\t"))  # the last file read
    meta = copy_release(META, tmp_path / "META")
    edit_line(meta / "MRREL.RRF", 18, lambda row: row[:-1])
    for source in (SnomedSource(rf2), UmlsSource(meta, as_sab="SNOMEDCT_US")):
        with pytest.raises(SourceError):
            load_source(engine, source)
        assert counts(engine) == before
    assert [s.key for s in StoreReader(engine).systems()] == ["umls"]


def test_cli_load_passes_the_source_options(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("indexer.cli.get_settings", lambda: settings)  # the test's own store
    runner = CliRunner()
    for arguments in (
        ["snomed", str(RF2), "--language-refset", "900000000000508004"],
        ["umls", str(META), "--sab", "SNOMEDCT_US,MSH", "--lang", "ENG"],
        ["umls", str(META), "--as-sab", "SNOMEDCT_US", "--include-suppressed"],
    ):
        result = runner.invoke(cli, ["load", *arguments])
        assert result.exit_code == 0, result.output
    engine = make_engine(settings.store.url)
    reader = StoreReader(engine)
    assert {s.key: s.concept_count for s in reader.systems()} == {"snomedct": 14, "snomedct_us": 7, "umls": 5}
    assert reader.concept(reader.system("snomedct"), "271737000").concept.display == "Anaemia"  # GB English
    engine.dispose()
    refused = runner.invoke(cli, ["load", "hpo", "--sab", "MSH"])
    assert refused.exit_code == 1
    assert "source 'hpo': got an unexpected keyword argument 'sab'" in refused.output
