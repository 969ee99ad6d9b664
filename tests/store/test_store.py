"""Store round-trips on SQLite and PostgreSQL, idempotent loads, atomic failure, migrations."""

from __future__ import annotations

import pytest
from sqlalchemy import func, inspect, select

import app.tables  # noqa: F401 - the app's tables on Base.metadata: migrations create them too
from indexer.records import SourceError
from indexer.store import StoreReader, load_source, make_engine, migrate
from indexer.store.db import downgrade
from indexer.store.models import Base, ConceptRow, DesignationRow
from tests.toy import TOY, ListSource, toy_concepts, toy_sources


@pytest.fixture
def engine(store_url: str):
    migrate(store_url)
    engine = make_engine(store_url)
    yield engine
    engine.dispose()


def _table_counts(engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {t.name: conn.scalar(select(func.count()).select_from(t)) for t in Base.metadata.sorted_tables}


def test_round_trip_is_exact(engine) -> None:
    for source in toy_sources():
        result = load_source(engine, source)
        assert result.loaded
    reader = StoreReader(engine)
    systems = {s.key: s for s in reader.systems()}
    assert list(systems) == ["toy", "toyicd"]
    assert (systems["toy"].version, systems["toy"].concept_count) == ("2025-01-16", 8)
    assert list(reader.iter_concepts(systems["toy"])) == toy_concepts()


def test_spread_displays_steps_evenly_through_each_system_in_load_order(engine) -> None:
    for source in toy_sources():
        load_source(engine, source)
    reader = StoreReader(engine)
    toy = reader.system("toy")
    displays = [c.display for c in reader.iter_concepts(toy)]
    assert reader.spread_displays(3, keys={"toy"}) == displays[::2][:3]  # 8 concepts, 4 wanted → every 2nd
    both = reader.spread_displays(4)
    assert len(both) == 4 and both[:3] == displays[::2][:3]
    assert reader.spread_displays(3, keys={"nothing"}) == []


def test_load_counts_and_reload_changes_nothing(engine) -> None:
    first = load_source(engine, ListSource(TOY, toy_concepts()))
    assert (first.concepts, first.designations, first.definitions, first.relationships) == (8, 14, 1, 7)
    before = _table_counts(engine)
    again = load_source(engine, ListSource(TOY, toy_concepts()))
    assert not again.loaded
    assert again.version_id == first.version_id
    assert _table_counts(engine) == before


def test_failed_load_leaves_store_as_it_was(engine) -> None:
    load_source(engine, toy_sources()[1])
    before = _table_counts(engine)
    with pytest.raises(SourceError, match=r"toy.obo:4: malformed stanza"):
        load_source(engine, ListSource(TOY, toy_concepts(), fail_at=3))
    assert _table_counts(engine) == before
    assert [s.key for s in StoreReader(engine).systems()] == ["toyicd"]


def test_concept_detail_has_parents_children_and_associations(engine) -> None:
    load_source(engine, ListSource(TOY, toy_concepts()))
    reader = StoreReader(engine)
    toy = reader.system("toy")
    detail = reader.concept(toy, "T:1")
    assert [(p.code, p.display) for p in detail.parents] == [("T:0", "Phenotypic abnormality")]
    assert [c.code for c in detail.children] == ["T:2", "T:3", "T:7"]
    tachy = reader.concept(toy, "T:2").concept
    assert [(d.text, d.scope, d.type) for d in tachy.designations[1:]] == [
        ("Fast heart rate", "EXACT", "layperson"),
        ("Racing heart", "RELATED", None),
    ]
    obsolete = reader.concept(toy, "T:6").concept
    assert (obsolete.active, obsolete.associations) == (False, {"replaced_by": ["T:2"]})
    assert reader.concept(toy, "T:404") is None
    # Read back: which inactive concepts name T:2 (a code that is also a prefix of none).
    assert reader.associated_to(toy, "T:2") == [("T:6", "replaced_by")]
    assert reader.associated_to(toy, "T:") == [] and reader.associated_to(toy, "T:3") == []


def test_new_version_is_served_and_old_kept(engine) -> None:
    load_source(engine, ListSource(TOY, toy_concepts()))
    newer = type(TOY)(TOY.key, TOY.uri, TOY.name, "2026-01-01")
    load_source(engine, ListSource(newer, toy_concepts()[:3]))
    reader = StoreReader(engine)
    assert (reader.system("toy").version, reader.system("toy").concept_count) == ("2026-01-01", 3)
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(ConceptRow)) == 11
        assert conn.scalar(select(func.count()).select_from(DesignationRow)) == 14 + 5


def test_alembic_upgrade_and_downgrade(store_url: str) -> None:
    migrate(store_url)
    engine = make_engine(store_url)
    expected = {t.name for t in Base.metadata.sorted_tables}
    assert expected <= set(inspect(engine).get_table_names())
    downgrade(store_url, "base")
    assert set(inspect(engine).get_table_names()) & expected == set()
    migrate(store_url)
    assert expected <= set(inspect(engine).get_table_names())
    engine.dispose()
