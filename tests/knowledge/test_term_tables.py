"""The term tables (abbreviations, lay terms): expansions find their concepts by name, ambiguity
is kept, a malformed table is refused naming file and line; and an ambiguous query never claims
certainty."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.search.scope import Scope
from app.settings import Settings
from indexer.bundle import Bundle, current_bundle
from indexer.catalog import Catalog, Entry
from indexer.encoders import FakeEncoder
from indexer.knowledge.alignment import KNOWLEDGE
from indexer.knowledge.supplements import add_supplement
from indexer.knowledge.term_tables import ABBREVIATIONS, LAY_TERMS, Resolution, TermTable, name_index
from indexer.pipeline import build_bundle
from indexer.records import Designation, DesignationUse, SourceError
from indexer.store import StoreReader

HEADER = "abbreviation\texpansions\tcontext\tnote\n"


def _entry(row: int, code: str, display: str, *synonyms: str) -> Entry:
    labels = [Designation(display, DesignationUse.PREFERRED), *(Designation(s, scope="EXACT") for s in synonyms)]
    return Entry(row, "icd", code, display, True, "code", True, [], labels)


def _table(tmp_path: Path, rows: str, first: str = "# Abbreviations. Version 3 (2026-11-24)\n") -> TermTable:
    path = tmp_path / "abbreviations.tsv"
    path.write_text(first + HEADER + rows, encoding="utf-8")
    return dataclasses.replace(ABBREVIATIONS, path=path)


def test_each_meaning_of_an_ambiguous_abbreviation_gets_it(tmp_path: Path) -> None:
    catalog = Catalog([], [
        _entry(0, "I26.99", "Other pulmonary embolism", "Pulmonary embolism NOS"),
        _entry(1, "J90", "Pleural effusion, not elsewhere classified", "Pleural effusion"),
        _entry(2, "I10", "Essential (primary) hypertension"),
    ])
    table = _table(tmp_path, "PE\tpulmonary embolism\tlung\t\nPE\tpleural effusion\t\t\nXYZ\tnothing at all\t\t\n")
    result = table.apply(name_index(catalog), table.read())
    assert (result.labels, result.unresolved) == (2, ["XYZ = nothing at all"])
    lent = {e.code: [d for d in e.labels if d.knowledge == "abbreviations"] for e in catalog.entries}
    assert [d.origin for d in lent["I26.99"]] == ["abbreviation table v3, line 3: PE = pulmonary embolism"]
    assert [d.origin for d in lent["J90"]] == ["abbreviation table v3, line 4: PE = pleural effusion"]
    assert lent["I10"] == []
    assert {d.kind for d in lent["J90"]} == {"abbreviation"}


def test_an_expansion_lands_on_the_concept_whose_own_name_it_is_not_on_those_it_was_lent_to(tmp_path: Path) -> None:
    """ "end stage renal disease" is N18.6's own name; an alignment lent it to N18.5 as well, which
    gets no "ESRD"; a concept named so only by a lent name gets it where no concept of its system owns it."""
    lent = Designation("End stage renal disease", scope="EXACT", origin="via another system", knowledge=KNOWLEDGE)
    n185 = _entry(0, "N18.5", "Chronic kidney disease, stage 5")
    n185.labels.append(lent)
    other = Entry(2, "hpo", "HP:0003774", "Stage 5 chronic kidney disease", True, "code", True, [], [
        Designation("Stage 5 chronic kidney disease", DesignationUse.PREFERRED), lent,
    ])
    catalog = Catalog([], [n185, _entry(1, "N18.6", "End stage renal disease"), other])
    table = _table(tmp_path, "ESRD\tend stage renal disease\t\t\n")
    assert table.apply(name_index(catalog), table.read()) == Resolution(2, [])
    given = {e.code for e in catalog.entries if any(d.knowledge == "abbreviations" for d in e.labels)}
    assert given == {"N18.6", "HP:0003774"}


def test_a_term_lands_by_its_first_wording_that_names_a_concept_in_each_system(tmp_path: Path) -> None:
    """ "SOB = shortness of breath | dyspnea": in ICD-10-CM the first wording is R06.02's own name, so
    the category R06.0 *Dyspnea* gets no "SOB"; in HPO only the second names a concept, so it lands
    there; a wording that is only lent comes after any that is a concept's own."""
    lent = Designation("Shortness of breath", scope="EXACT", origin="via another system", knowledge=KNOWLEDGE)
    dyspnea = _entry(0, "R06.0", "Dyspnea")
    dyspnea.labels.append(lent)
    hpo = Entry(3, "hpo", "HP:0002094", "Dyspnea", True, "code", True, [], [Designation("Dyspnea", DesignationUse.PREFERRED)])
    catalog = Catalog([], [dyspnea, _entry(1, "R06.02", "Shortness of breath"), _entry(2, "R06.00", "Dyspnea, unspecified"), hpo])
    table = _table(tmp_path, "SOB\tshortness of breath|dyspnea\t\t\n")
    assert table.apply(name_index(catalog), table.read()) == Resolution(2, [])
    given = {e.code for e in catalog.entries if any(d.knowledge == "abbreviations" for d in e.labels)}
    assert given == {"R06.02", "HP:0002094"}


def test_a_lay_term_lands_as_a_layperson_designation_with_its_origin(tmp_path: Path) -> None:
    catalog = Catalog([], [_entry(0, "I21.9", "Acute myocardial infarction, unspecified"), _entry(1, "I10", "Essential (primary) hypertension")])
    path = tmp_path / "lay_terms.tsv"
    path.write_text("# Lay terms. Version 1 (2026-11-24)\nterm\texpansions\tnote\nheart attack\tacute myocardial infarction\t\n", encoding="utf-8")
    table = dataclasses.replace(LAY_TERMS, path=path)
    assert table.apply(name_index(catalog), table.read()) == Resolution(1, [])
    (lent,) = [d for d in catalog.entries[0].labels if d.knowledge == "lay_terms"]
    assert (lent.text, lent.kind, lent.origin) == (
        "heart attack", "layperson", "lay-term table v1, line 3: heart attack = acute myocardial infarction"
    )
    assert [d for d in catalog.entries[1].labels if d.knowledge] == []


@pytest.mark.parametrize(
    ("rows", "line", "message"),
    [
        ("PE\tpulmonary embolism\n", 3, "expected 4 tab-separated fields (abbreviation, expansions, context, note), found 2"),
        ("HTN\thypertension\t\t\n\tpleural effusion\t\t\n", 4, "a term and at least one expansion are required"),
    ],
)
def test_a_malformed_table_is_refused_naming_file_and_line(tmp_path: Path, rows: str, line: int, message: str) -> None:
    table = _table(tmp_path, rows)
    with pytest.raises(SourceError) as error:
        table.read()
    assert str(error.value) == f"{table.path}:{line}: {message}"


def test_a_table_without_its_version_is_refused(tmp_path: Path) -> None:
    table = _table(tmp_path, "PE\tpulmonary embolism\t\t\n", first="# Abbreviations.\n")
    with pytest.raises(SourceError) as error:
        table.version
    assert str(error.value) == f"{table.path}:1: the first line must state the table's version ('Version N')"


def test_the_shipped_tables_read() -> None:
    abbreviations, lay = ABBREVIATIONS.read(), LAY_TERMS.read()
    assert len(abbreviations) > 400 and len(lay) > 300
    assert {a.text for a in abbreviations} >= {"HTN", "CHF", "MI", "PE", "MS", "RA"}
    assert len([a for a in abbreviations if a.text == "PE"]) > 1  # ambiguous: one row per meaning
    assert {t.text for t in lay} >= {"heart attack", "pink eye"}
    assert ABBREVIATIONS.version >= 2 and LAY_TERMS.version >= 1


def test_an_ambiguous_query_never_claims_certainty(settings: Settings, toy_reader: StoreReader, tmp_path: Path) -> None:
    """A site supplement makes "HTN" also a name of I21 and of I21.0 below it here: two meanings
    in toyicd (one above the other by is-a is one), so no row of either is more than half
    certain, while "MI" (one meaning) stays confident."""
    supplement = tmp_path / "site.csv"
    supplement.write_text(
        "system,code,term,type,language\ntoyicd,I21,HTN,abbreviation,en\ntoyicd,I21.0,HTN,abbreviation,en\n", encoding="utf-8"
    )
    add_supplement(toy_reader.engine, supplement, "site")
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        rows = client.get("/search", params={"q": "HTN", "system": "toyicd", "k": 3}).json()["results"]
        assert {r["code"] for r in rows} == {"I10", "I21", "I21.0"}
        assert all(r["confidence"] <= 0.5 for r in rows)
        service = client.app.state.service
        assert service.rewriter.meanings("HTN", ["toyicd"]) == {"toyicd": 2}
        assert service.rewriter.meanings("MI", ["toyicd"]) == {"toyicd": 1}
        mi = client.get("/search", params={"q": "MI", "system": "toyicd", "k": 1}).json()["results"][0]
        assert mi["code"].startswith("I21") and mi["confidence"] > 0.5  # I21.0 listed before its category


def test_a_table_abbreviation_of_another_system_bridges_unless_left_out(settings: Settings, toy_reader: StoreReader) -> None:
    """"HTN" is a name of toyicd's I10 only by the abbreviation table: searching toy, it bridges to
    I10's preferred name; a left-out label bridges nothing."""

    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        service = client.app.state.service
        via = "via TOYICD I10 Essential (primary) hypertension: 'HTN'"
        assert service.rewriter.bridges("HTN", Scope(("toy",))) == [("Essential (primary) hypertension", via)]
        assert service.rewriter.bridges("HTN", Scope(("toyicd",))) == []  # its own system is searched anyway
        label = next(i for i, text in enumerate(service.bundle.label_text) if text == "HTN")
        assert service.rewriter.bridges("HTN", Scope(("toy",), exclude_labels=frozenset({label}))) == []


def test_an_abbreviation_among_other_words_is_read_as_what_it_stands_for(
    settings: Settings, toy_reader: StoreReader, tmp_path: Path
) -> None:
    """"acute MI" is also searched as "acute myocardial infarction" (the table's first expansion),
    and its rows say so; "HTN", of two meanings once a site supplement makes it a name of I21
    too, is never written out, nor is a query of one word; a reading of the same words in another
    order is searched too."""
    supplement = tmp_path / "site.csv"
    supplement.write_text("system,code,term,type,language\ntoyicd,I21,HTN,abbreviation,en\n", encoding="utf-8")
    add_supplement(toy_reader.engine, supplement, "site")
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        service = client.app.state.service
        read = "read as 'acute myocardial infarction': 'MI' as 'myocardial infarction'"
        scope = Scope(("toyicd",))
        rewriter = service.rewriter
        assert rewriter.rewrites("acute MI", scope, rewriter.read("acute MI", scope)) == [("acute myocardial infarction", read)]
        assert rewriter.rewrites("severe HTN", scope, rewriter.read("severe HTN", scope)) == []
        assert rewriter.rewrites("MI", scope, rewriter.read("MI", scope)) == []
        # the same words in another order are another text to the encoder (a coder's index order)
        inverted = "read as 'acute infarction': 'infarction, acute' as 'acute infarction'"
        assert rewriter.rewrites("infarction, acute", scope, rewriter.read("infarction, acute", scope)) == [
            ("acute infarction", inverted)
        ]
        code, category = client.get("/search", params={"q": "acute MI", "system": "toyicd", "k": 2}).json()["results"]
        assert (category["code"], category["why"]["origin"]) == ("I21", read)
        descended = f"{read}; via I21 Acute myocardial infarction: its code for what the query states"
        assert (code["code"], code["why"]["origin"]) == ("I21.0", descended)


def test_an_abbreviation_of_words_is_written_out_though_it_names_no_concept(settings: Settings, toy_reader: StoreReader) -> None:
    """The table's "PFs" (palpebral fissures) and "DTRs" (deep tendon reflexes) name parts of a
    finding, no concept: written in capitals (a plural "s" too), each is read as its one meaning;
    lower-case, a word that is no label is left as typed."""
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        rewriter, scope = client.app.state.service.rewriter, Scope(("toy",))
        assert rewriter.read("short PFs", scope).said == ["'PFs' as 'palpebral fissures'"]
        assert rewriter.read("brisk DTRs", scope).text == "brisk deep tendon reflexes"
        assert rewriter.read("short pfs", scope).text == "short pfs"


def test_the_shipped_lay_terms_land_on_the_toy_with_their_origin(settings: Settings, toy_reader: StoreReader) -> None:
    """"heart attack" names I21 by the lay-term table; I10 already has "High blood pressure" (an
    inclusion term), so the table's row adds no second copy; the manifest counts what landed."""
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    bundle = Bundle(current_bundle(settings.bundles_dir))
    lay = {(bundle.concepts[bundle.label_concept[i]].code, bundle.label_text[i]): bundle.label_origin[i]
           for i in range(len(bundle.label_text)) if bundle.label_knowledge[i] == "lay_terms"}
    assert lay[("I21", "heart attack")].startswith("lay-term table v1, line ")
    assert not any(code == "I10" and text.casefold() == "high blood pressure" for code, text in lay)
    summary = bundle.manifest.knowledge["lay_terms"]
    assert (summary["table"], summary["version"], summary["labels"]) == ("lay_terms.tsv", LAY_TERMS.version, len(lay))


def test_an_abbreviation_matches_whole_or_not_at_all(settings: Settings, toy_reader: StoreReader) -> None:
    """Keyboard mash sharing letters with "HTN" or "HBP" gets nothing from them (no cosine, no
    character similarity), while "HTN" typed whole, alone or among other words, matches it."""
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        def rows(q: str) -> list[dict]:
            return client.get("/search", params={"q": q, "system": "toyicd", "k": 5}).json()["results"]

        assert not any(r["why"]["matched_term"] in ("HTN", "HBP") for r in rows("htnbpq"))
        assert [(r["code"], r["why"]["matched_term"], r["why"]["char"]) for r in rows("HTN")][0] == ("I10", "HTN", 1.0)
        assert rows("severe HTN")[0]["code"] == "I10"
