"""Local supplements (FHIR CodeSystem supplement, CSV): load, read back, replace, remove, refuse."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import Result
from fhir.resources.R4B.codesystem import CodeSystem
from sqlalchemy import Engine, insert, select
from typer.testing import CliRunner

from indexer.bundle import Bundle, current_bundle
from indexer.cli import cli
from indexer.encoders import FakeEncoder
from indexer.knowledge.supplements import SupplementError, add_supplement, remove_supplement
from indexer.pipeline import build_bundle
from indexer.records import Designation, SourceError
from indexer.settings import Settings
from indexer.sources import Icd10cmSource, hpo_source
from indexer.store import KnowledgeSource, StoreReader, load_source, make_engine, migrate
from indexer.store.models import Base, KnowledgeSourceRow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CSV = FIXTURES / "supplements" / "site-terms.csv"
FHIR = FIXTURES / "supplements" / "hpo-site.json"


def _store(url: str) -> Engine:
    """A store holding the HPO and ICD-10-CM test excerpts (real release formats)."""
    migrate(url)
    engine = make_engine(url)
    load_source(engine, hpo_source(FIXTURES / "obo" / "mini.obo"))
    load_source(engine, Icd10cmSource(FIXTURES / "icd10cm" / "mini-tabular.xml"))
    return engine


@pytest.fixture
def engine(store_url: str) -> Iterator[Engine]:
    engine = _store(store_url)
    yield engine
    engine.dispose()


def _snapshot(engine: Engine) -> dict[str, list[tuple]]:
    """Every row of every table."""
    with engine.connect() as conn:
        return {t.name: sorted(map(tuple, conn.execute(select(t))), key=repr) for t in Base.metadata.sorted_tables}


def _added(engine: Engine, system: str) -> dict[str, list[Designation]]:
    """The designations with an origin of each concept, as ``iter_concepts`` reads them back."""
    reader = StoreReader(engine)
    concepts = reader.iter_concepts(reader.system(system))
    return {c.code: [d for d in c.designations if d.origin] for c in concepts if any(d.origin for d in c.designations)}


def _fields(designations: dict[str, list[Designation]]) -> dict[str, list[tuple]]:
    return {code: [(d.text, d.use, d.language, d.scope, d.type, d.active, d.origin) for d in ds] for code, ds in designations.items()}


def test_fixtures_are_valid_fhir() -> None:
    supplement = CodeSystem.model_validate(json.loads(FHIR.read_text()))
    assert (supplement.content, supplement.supplements) == ("supplement", "http://human-phenotype-ontology.org|2024-03-05")


def test_csv_terms_are_read_back_with_type_language_and_origin(engine: Engine) -> None:
    before = datetime.now(UTC)
    result = add_supplement(engine, CSV)
    assert (result.name, result.terms, result.per_system, result.replaced) == (
        "site-terms", 4, {"hpo": 2, "icd10cm": 2}, False
    )
    origin = "supplement site-terms"
    assert _fields(_added(engine, "hpo")) == {
        "MINI:0000002": [("Skipped beats", "synonym", "en", None, "layperson", True, origin)],
        "MINI:0000003": [("Cœur", "synonym", "fr", None, "translation", True, origin)],
    }
    assert _fields(_added(engine, "icd10cm")) == {
        "T07": [("Polytrauma, unspecified", "synonym", "en-US", None, "synonym", True, origin)],
        "T36.0X1A": [("Accidental penicillin OD", "synonym", "en", None, "abbreviation", True, origin)],
    }
    (source,) = StoreReader(engine).knowledge_sources()
    assert source == KnowledgeSource(
        "site-terms", "supplement", str(CSV), hashlib.sha256(CSV.read_bytes()).hexdigest(), 4, source.loaded_at
    )
    assert before <= source.loaded_at <= datetime.now(UTC) + timedelta(seconds=1)


def test_fhir_supplement_maps_designation_use_and_language_to_types(engine: Engine) -> None:
    result = add_supplement(engine, FHIR, "site")
    assert (result.terms, result.per_system) == (4, {"hpo": 4})
    added = {code: [(d.text, d.kind, d.language, d.origin) for d in ds] for code, ds in _added(engine, "hpo").items()}
    assert added == {
        "MINI:0000002": [  # a nested concept
            ("Herzrhythmusstörung", "translation", "de", "supplement site"),  # no use, another language
            ("HRA", "abbreviation", "en", "supplement site"),
        ],
        "MINI:0000003": [
            ("Cardiac organ", "synonym", "en", "supplement site"),  # SNOMED CT's synonym use
            ("Ticker", "layperson", "en", "supplement site"),
        ],
    }
    assert _added(engine, "icd10cm") == {}


def test_adding_a_name_again_replaces_that_supplement_only(engine: Engine, tmp_path: Path) -> None:
    add_supplement(engine, FHIR, "other")
    add_supplement(engine, CSV, "site")
    smaller = tmp_path / "site-v2.csv"
    smaller.write_text("system,code,term,type,language\nicd10cm,T07,Multiple trauma,synonym,en\n")
    result = add_supplement(engine, smaller, "site")
    assert (result.terms, result.replaced) == (1, True)
    icd = _added(engine, "icd10cm")
    assert {code: [d.text for d in ds] for code, ds in icd.items()} == {"T07": ["Multiple trauma"]}
    hpo = {code: [d.origin for d in ds] for code, ds in _added(engine, "hpo").items()}
    assert hpo == {"MINI:0000002": ["supplement other"] * 2, "MINI:0000003": ["supplement other"] * 2}
    sources = StoreReader(engine).knowledge_sources()
    assert [(s.name, s.terms, s.path) for s in sources] == [("other", 4, str(FHIR)), ("site", 1, str(smaller))]


def test_remove_deletes_the_terms_and_the_registry_row(engine: Engine) -> None:
    add_supplement(engine, FHIR, "other")
    before = _snapshot(engine)
    add_supplement(engine, CSV)
    assert remove_supplement(engine, "site-terms") == 4
    assert _snapshot(engine) == before
    assert [s.name for s in StoreReader(engine).knowledge_sources()] == ["other"]
    with pytest.raises(SupplementError, match=r"no supplement named 'site-terms' \(loaded: other\)"):
        remove_supplement(engine, "site-terms")


def test_a_name_that_cannot_be_stored_is_refused(engine: Engine, tmp_path: Path) -> None:
    spaced = tmp_path / "my terms.csv"
    spaced.write_bytes(CSV.read_bytes())
    with pytest.raises(SupplementError, match=r"invalid supplement name 'my terms'"):
        add_supplement(engine, spaced)
    assert add_supplement(engine, spaced, "my-terms").terms == 4


def test_a_name_of_another_knowledge_source_is_neither_replaced_nor_removed(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(
            insert(KnowledgeSourceRow).values(
                name="abbreviations", kind="abbreviations", path="x", sha256="0" * 64, terms=0, loaded_at=datetime.now(UTC)
            )
        )
    before = _snapshot(engine)
    with pytest.raises(SupplementError, match="the name 'abbreviations' is taken by the abbreviations knowledge source"):
        add_supplement(engine, CSV, "abbreviations")
    with pytest.raises(SupplementError, match=r"no supplement named 'abbreviations' \(loaded: none\)"):
        remove_supplement(engine, "abbreviations")
    assert _snapshot(engine) == before


HEADER = "system,code,term,type,language\n"
GOOD_ROW = "hpo,MINI:0000002,Skipped beats,layperson,en\n"
CSV_REFUSALS = [
    ("header", "system,code,term,kind,language\n" + GOOD_ROW, 1, "expected the header 'system,code,term,type,language'"),
    ("columns", HEADER + GOOD_ROW + "hpo,MINI:0000003,Heart,synonym\n", 3, "expected 5 comma-separated columns, got 4"),
    ("system", HEADER + GOOD_ROW + "snomedct,22298006,MI,abbreviation,en\n", 3, "no loaded code system 'snomedct'"),
    ("code", HEADER + GOOD_ROW + "hpo,HP:9999999,Odd,synonym,en\n", 3, "unknown code 'HP:9999999' in hpo 2024-03-05"),
    ("empty", HEADER + "hpo,MINI:0000002,  ,synonym,en\n", 2, "empty term"),
    ("long", HEADER + f"hpo,MINI:0000002,{'x' * 513},synonym,en\n", 2, "term of 513 characters, more than 512"),
    ("type", HEADER + "hpo,MINI:0000002,Skips,acronym,en\n", 2, "unknown type 'acronym'; expected one of synonym, "),
    ("language", HEADER + "hpo,MINI:0000002,Skips,synonym,en_US\n", 2, "invalid language tag 'en_US'"),
    # a quoted term spanning lines 3-4 is refused at the line it starts on
    ("multiline", HEADER + GOOD_ROW + 'hpo,MINI:0000002,"two\nlines",synonym,en\n', 3, "control character in the term"),
    ("quote", HEADER + GOOD_ROW + 'hpo,MINI:0000002,"open,synonym,en\n', 3, "malformed CSV"),
]


@pytest.mark.parametrize(("case", "text", "line", "message"), CSV_REFUSALS, ids=[c[0] for c in CSV_REFUSALS])
def test_malformed_csv_is_refused_at_its_line_and_changes_nothing(
    engine: Engine, tmp_path: Path, case: str, text: str, line: int, message: str
) -> None:
    add_supplement(engine, CSV, "site")
    before = _snapshot(engine)
    path = tmp_path / f"{case}.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as refused:
        add_supplement(engine, path, "site")
    assert (refused.value.path, refused.value.line) == (str(path), line)
    assert message in str(refused.value)
    assert str(refused.value).startswith(f"{path}:{line}: ")
    assert _snapshot(engine) == before


FHIR_REFUSALS = [  # (case, text in hpo-site.json, its replacement, line, message)
    ("json", '"version": "1",', '"version": "1",,', 5, "not valid JSON: Expecting property name"),
    ("resource", '"CodeSystem"', '"ValueSet"', 2, "expected resourceType 'CodeSystem', got 'ValueSet'"),
    ("content", '"supplement"', '"complete"', 8, "expected content 'supplement', got 'complete'"),
    ("uri", "http://human-phenotype-ontology.org|", "http://example.org/x|", 9, "no loaded code system 'http://example.org/x'"),
    ("version", "|2024-03-05", "|2025-01-16", 9, "supplements hpo version '2025-01-16', but the store's is '2024-03-05'"),
    ("code", '"code": "MINI:0000003"', '"code": "MINI:0000099"', 24, "unknown code 'MINI:0000099' in hpo 2024-03-05"),
    ("nested code", '"code": "MINI:0000002"', '"code": "MINI:0000098"', 14, "unknown code 'MINI:0000098'"),
    ("no code", '"code": "MINI:0000003", ', "", 24, "concept without a code"),
    # a designation written over five lines is named by the line it starts on
    ("empty", '"value": "HRA"', '"value": " "', 16, "empty term"),
    ("type", '"code": "abbreviation"', '"code": "acronym"', 16, "unknown type 'acronym'"),
    ("use", '"code": "900000000000013009"', '"code": "123"', 25, "unknown designation use http://snomed.info/sct|123"),
    ("language", '"language": "de"', '"language": "de_DE"', 15, "invalid language tag 'de_DE'"),
    ("not objects", '"designation": [\n      {"language": "en", "use"', '"designation": [\n      7, {"language": "en", "use"', 24,
     "expected designation to be a list of designation objects"),
]


@pytest.mark.parametrize(("case", "old", "new", "line", "message"), FHIR_REFUSALS, ids=[c[0] for c in FHIR_REFUSALS])
def test_malformed_fhir_supplement_is_refused_at_its_line_and_changes_nothing(
    engine: Engine, tmp_path: Path, case: str, old: str, new: str, line: int, message: str
) -> None:
    add_supplement(engine, FHIR, "site")
    before = _snapshot(engine)
    text = FHIR.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / "site.json"
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(SourceError) as refused:
        add_supplement(engine, path)
    assert (refused.value.path, refused.value.line) == (str(path), line)
    assert message in str(refused.value)
    assert _snapshot(engine) == before


def test_unreadable_files_and_other_resources_are_refused(engine: Engine, tmp_path: Path) -> None:
    before = _snapshot(engine)
    not_utf8 = tmp_path / "latin1.csv"
    not_utf8.write_bytes((HEADER + GOOD_ROW + "hpo,MINI:0000003,Cardiopathie sévère,translation,fr\n").encode("latin-1"))
    a_list = tmp_path / "list.json"
    a_list.write_text("[]")
    cases = [
        (tmp_path / "missing.csv", None, "no such file"),
        (a_list, 1, "expected a FHIR CodeSystem resource (a JSON object)"),
        (tmp_path, None, "cannot read"),
        (not_utf8, 3, "not UTF-8"),
        (FIXTURES / "obo" / "mini.obo", None, "expected a FHIR CodeSystem supplement (.json) or a CSV file (.csv)"),
    ]
    for path, line, message in cases:
        with pytest.raises(SourceError, match=re.escape(message)) as refused:
            add_supplement(engine, path, "site")
        assert (refused.value.path, refused.value.line) == (str(path), line)
    assert _snapshot(engine) == before


@pytest.fixture
def settings_store(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """The test settings' store holding the HPO and ICD-10-CM excerpts, used by the CLI."""
    monkeypatch.setattr("indexer.cli.get_settings", lambda: settings)
    engine = _store(settings.store.url)
    yield engine
    engine.dispose()


def _words(result: Result) -> str:
    """The output with rich's line wrapping undone."""
    return " ".join(result.output.split())


def test_cli_add_list_remove(settings_store: Engine, tmp_path: Path) -> None:
    runner = CliRunner()
    added = runner.invoke(cli, ["supplement", "add", str(CSV)])
    assert added.exit_code == 0, added.output
    assert f"added supplement site-terms from {CSV}: 4 terms (hpo 2, icd10cm 2)" in added.output
    assert "python -m indexer build" in added.output
    again = runner.invoke(cli, ["supplement", "add", str(FHIR), "--name", "site-terms"])
    assert again.exit_code == 0 and "replaced supplement site-terms" in again.output
    listed = runner.invoke(cli, ["supplement", "list"], terminal_width=200)
    assert listed.exit_code == 0
    row = next(line for line in listed.output.splitlines() if "site-terms" in line)
    assert "4" in row and hashlib.sha256(FHIR.read_bytes()).hexdigest()[:12] in row

    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "hpo,HP:9999999,Odd,synonym,en\n")
    refused = runner.invoke(cli, ["supplement", "add", str(bad)])
    assert refused.exit_code == 1
    assert _words(refused) == f"error: {bad}:2: unknown code 'HP:9999999' in hpo 2024-03-05"

    removed = runner.invoke(cli, ["supplement", "remove", "site-terms"])
    assert removed.exit_code == 0 and "removed supplement site-terms: 4 terms" in removed.output
    assert StoreReader(settings_store).knowledge_sources() == []
    unknown = runner.invoke(cli, ["supplement", "remove", "site-terms"])
    assert unknown.exit_code == 1
    assert _words(unknown) == "error: no supplement named 'site-terms' (loaded: none)"


def test_a_built_bundle_has_the_supplement_terms_until_removed(settings: Settings, settings_store: Engine) -> None:
    reader = StoreReader(settings_store)

    def build() -> Bundle:
        build_bundle(settings, reader, FakeEncoder(32), ["hpo", "icd10cm"], force=True, show_progress=False)
        return Bundle(current_bundle(settings.bundles_dir))

    add_supplement(settings_store, CSV)
    bundle = build()
    label = bundle.label_text.index("Skipped beats")
    concept = bundle.concepts[bundle.label_concept[label]]
    assert (concept.system, concept.code) == ("hpo", "MINI:0000002")
    assert (bundle.label_kind[label], bundle.label_origin[label]) == ("layperson", "supplement site-terms")
    assert "Accidental penicillin OD" in bundle.label_text

    remove_supplement(settings_store, "site-terms")
    rebuilt = build()
    assert not {"Skipped beats", "Accidental penicillin OD", "Cœur"} & set(rebuilt.label_text)
    assert len(rebuilt.label_text) == len(bundle.label_text) - 4
