"""MeSH entry terms: read from the package, kept in the bundle with their heading, and a query
that is exactly an entry term also searches the heading, saying so."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from indexer.bundle import Bundle, current_bundle
from indexer.encoders import FakeEncoder
from indexer.knowledge import mesh
from indexer.pipeline import build_bundle
from indexer.store import StoreReader

LABIALIS = mesh.Descriptor("D013283", "Herpes Labialis", ("cold sore", "fever blister"))
HYPERTENSION = mesh.Descriptor("D006973", "Hypertension", ("high blood pressure",))
MALIGNANT = mesh.Descriptor("D006974", "Hypertension, Malignant", ("high blood pressure", "malignant hypertension"))
STROKE = mesh.Descriptor("D020521", "Stroke", ("cerebrovascular accident",))
MI = mesh.Descriptor("D009203", "Myocardial Infarction", ("heart attack", "stroke"))


def test_the_packaged_descriptors_read() -> None:
    descriptors = {d.heading: d for d in mesh.read_descriptors()}
    assert len(descriptors) > 6000
    assert descriptors["Herpes Labialis"].terms[:2] == ("cold sore", "fever blister")
    assert "sores, cold" not in descriptors["Herpes Labialis"].terms  # inverted and plural forms collapse
    assert "herpes labialis" not in descriptors["Herpes Labialis"].terms  # the heading is no entry term


def test_an_entry_term_of_two_descriptors_or_naming_a_heading_bridges_nowhere() -> None:
    rows = mesh.entry_terms((LABIALIS, HYPERTENSION, MALIGNANT, STROKE, MI))
    # "high blood pressure" has two owners; "malignant hypertension" and "stroke" name headings
    assert [row[4] for row in rows] == ["cold sore", "fever blister", "cerebrovascular accident", "heart attack"]
    assert rows[1] == ["blister fever", "MeSH", "D013283", "Herpes Labialis", "fever blister"]


def test_a_query_that_is_an_entry_term_searches_its_heading(settings: Settings, toy_reader: StoreReader) -> None:
    """An entry term MeSH files under Tachycardia ("tachyarrhythmia") is no toy label: searched in
    toyicd, the heading finds R00.0, and the row names the bridge; with bridges off, nothing does."""
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    bundle = Bundle(current_bundle(settings.bundles_dir))
    assert bundle.manifest.knowledge["mesh"] == {"release": mesh.release(), "entry_terms": len(bundle.entry_terms)}
    term = next(t for t in bundle.entry_terms.values() if t.heading == "Tachycardia")
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        rows = client.get("/search", params={"q": term.term, "system": "toyicd", "k": 1}).json()["results"]
        assert rows[0]["code"] == "R00.0"
        assert rows[0]["why"]["origin"] == f"via MeSH {term.id} Tachycardia: '{term.term}'"
        settings.search.bridges = False
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        rows = client.get("/search", params={"q": term.term, "system": "toyicd", "k": 3}).json()["results"]
        assert not any((r["why"]["origin"] or "").startswith("via MeSH") for r in rows)
