"""Alignment of two terminologies and the names lent along it, on the toy pair; bridges and
ambiguity in the ranking core; the knowledge shown by /concepts and $lookup."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from fhir.resources.R4B import get_fhir_model_class

from app.main import create_app
from app.settings import Settings
from indexer.bundle import Bundle, current_bundle
from indexer.encoders import FakeEncoder
from indexer.knowledge.term_tables import ABBREVIATIONS
from indexer.lexical.normalise import label_key
from indexer.pipeline import build_bundle
from indexer.store import StoreReader


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Tachycardia, unspecified", "tachycardia"),
        ("Heart failure NOS", "Failure, heart"),
        ("Pneumonia, unspecified organism", "Pneumonia"),
        ("Essential (primary) hypertension", "essential hypertension"),
        ("Cataracts", "cataract"),
    ],
)
def test_label_key_says_when_two_labels_name_the_same(one: str, other: str) -> None:
    assert label_key(one) == label_key(other)


def test_label_key_keeps_what_changes_the_meaning() -> None:
    assert label_key("Acute sinusitis, unspecified") != label_key("Sinusitis")
    assert label_key("Rheumatic mitral stenosis") != label_key("Mitral stenosis")
    # a type letter written "A" is kept, the article (a stop word) is not
    assert label_key("Hepatitis A (acute)(viral) NOS") != label_key("Hepatitis")
    assert label_key("Hepatitis A (acute)(viral) NOS") == label_key("hepatitis A")
    assert label_key("Vitamin A deficiency") != label_key("Vitamin deficiency")
    assert label_key("history of a fall") == label_key("History of fall")


@pytest.fixture
def aligned(settings: Settings, toy_reader: StoreReader) -> Settings:
    settings.knowledge.align = [("toy", "toyicd")]
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    return settings


def test_concepts_with_the_same_name_align_and_lend_their_exact_names(aligned: Settings) -> None:
    bundle = Bundle(current_bundle(aligned.bundles_dir))
    tachycardia, r000 = bundle.concept_index("toy", "T:2"), bundle.concept_index("toyicd", "R00.0")
    assert [(a.row, a.method, a.score) for a in bundle.alignments[tachycardia]] == [(r000, "label", 1.0)]
    assert bundle.alignments[tachycardia][0].evidence == "'Tachycardia' = 'Tachycardia, unspecified'"
    lent = {d.text: d for d in bundle.knowledge_labels(r000) if d.knowledge == "alignments"}
    # The preferred name and the exact layperson synonym are lent; "Racing heart" (RELATED) is not.
    assert set(lent) == {"Tachycardia", "Fast heart rate"}
    assert lent["Fast heart rate"].type == "layperson"
    assert lent["Fast heart rate"].origin == "via TOY T:2 Tachycardia (label alignment 1.00)"
    assert bundle.manifest.knowledge["alignments"]["by_method"] == {"label": 1}
    # Nothing aligns a concept whose names no concept of the other system shares.
    assert bundle.concept_index("toy", "T:3") not in bundle.alignments


def test_a_build_without_alignments_has_no_lent_names(aligned: Settings, toy_reader: StoreReader) -> None:
    aligned.knowledge.alignments = False
    build_bundle(aligned, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    bundle = Bundle(current_bundle(aligned.bundles_dir))
    assert bundle.alignments == {}
    assert "Fast heart rate" not in {d.text for d in bundle.knowledge_labels(bundle.concept_index("toyicd", "R00.0"))}


@pytest.fixture
def client(aligned: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(aligned, encoder=FakeEncoder(32))) as test_client:
        yield test_client


def test_concepts_and_lookup_list_lent_names_with_their_origin(client: TestClient) -> None:
    synonyms = client.get("/concepts/toyicd/R00.0").json()["synonyms"]
    lent = next(s for s in synonyms if s["text"] == "Fast heart rate")
    assert lent == {
        "text": "Fast heart rate",
        "use": "synonym",
        "language": "en",
        "scope": "EXACT",
        "type": "layperson",
        "kind": "layperson",
        "origin": "via TOY T:2 Tachycardia (label alignment 1.00)",
        "knowledge": "alignments",
    }
    params = {"system": "http://example.org/toyicd", "code": "I10"}
    plain = client.get("/fhir/CodeSystem/$lookup", params=params).json()  # a supplement's designations when asked
    assert not any({"name": "value", "valueString": "HTN"} in p["part"] for p in plain["parameter"] if p["name"] == "designation")
    supplement = {"useSupplement": "urn:termsearch:supplement:abbreviations"}
    body = client.get("/fhir/CodeSystem/$lookup", params=params | supplement).json()
    htn = next(
        p for p in body["parameter"] if p["name"] == "designation" and {"name": "value", "valueString": "HTN"} in p["part"]
    )
    extensions = {e["url"].rsplit("-", 1)[1]: e for e in htn["extension"]}
    assert extensions["type"] == {"url": "urn:termsearch:fhir:designation-type", "valueCode": "abbreviation"}
    assert extensions["source"]["valueCode"] == "abbreviations"
    assert extensions["origin"]["valueString"].startswith(f"abbreviation table v{ABBREVIATIONS.version}, line ")
    get_fhir_model_class("Parameters").model_validate(body)


def test_a_name_of_another_terminology_bridges_to_its_concept(settings: Settings, toy_reader: StoreReader) -> None:
    """ "Fast heart rate" is no label of toyicd (no alignment lends it here): it is toy's layperson
    name of Tachycardia, so the search goes through that concept's name, and the row says so."""
    settings.knowledge.alignments = False
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        rows = client.get("/search", params={"q": "fast heart rate", "system": "toyicd", "k": 1}).json()["results"]
        assert rows[0]["code"] == "R00.0"
        assert rows[0]["why"]["origin"] == "via TOY T:2 Tachycardia: 'Fast heart rate'"
        assert rows[0]["why"]["corrected"] is False
        settings.search.bridges = False
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        rows = client.get("/search", params={"q": "fast heart rate", "system": "toyicd", "k": 3}).json()["results"]
        assert rows and not any((r["why"]["origin"] or "").startswith("via TOY") for r in rows)


def test_alignments_are_offered_as_mappings_with_their_evidence(client: TestClient) -> None:
    similar = client.get("/concepts/toy/T:2/similar", params={"target_system": "toyicd", "k": 3}).json()
    assert similar["alignments"] == [
        {
            "system": "toyicd",
            "code": "R00.0",
            "display": "Tachycardia, unspecified",
            "score": 1.0,
            "method": "label",
            "evidence": "'Tachycardia' = 'Tachycardia, unspecified'",
        }
    ]
    body = client.get(
        "/fhir/ConceptMap/$translate",
        params={
            "system": "http://example.org/toy",
            "code": "T:2",
            "targetsystem": "http://example.org/toyicd",
        },
    ).json()
    first = next(p for p in body["parameter"] if p["name"] == "match")
    assert first["part"][0] == {"name": "equivalence", "valueCode": "equivalent"}
    assert first["part"][1]["valueCoding"]["code"] == "R00.0"
    assert first["extension"][1] == {
        "url": "urn:termsearch:fhir:alignment-evidence",
        "valueString": "label alignment: 'Tachycardia' = 'Tachycardia, unspecified'",
    }
    get_fhir_model_class("Parameters").model_validate(body)
