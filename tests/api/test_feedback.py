"""Learning from use over HTTP on the toy bundle: events stored without identity, the review
queue, curator decisions served at once (overlay) and built into the next bundle, the usage set."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect, select

from app.feedback.events import Action, Event, EventStore, Surface
from app.main import create_app
from app.settings import ApiSettings, FeedbackSettings, Settings
from app.tables import FeedbackEventRow
from indexer.bundle import Bundle, current_bundle
from indexer.encoders import FakeEncoder
from indexer.knowledge.supplements import add_supplement
from indexer.pipeline import build_bundle
from indexer.settings import StoreSettings
from indexer.store import StoreReader

CURATOR_KEY = "curator-key-0123456789"
CURATOR = {"X-API-Key": CURATOR_KEY}
PHRASING = "my heart is galloping"


def taught_bundle(settings: Settings, reader: StoreReader, directory: Path, curator: str) -> Settings:
    """``settings`` with ``curator`` holding CURATOR_KEY, over a toy bundle built after a supplement
    gave Bradycardia a wrong name ("Racing pulse")."""
    supplement = directory / "site.csv"
    supplement.write_text("system,code,term,type,language\ntoy,T:3,Racing pulse,synonym,en\n", encoding="utf-8")
    add_supplement(reader.engine, supplement, "site")
    settings = settings.model_copy(update={"api": ApiSettings(curator_keys=f"{curator}={CURATOR_KEY}")})
    build_bundle(settings, reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    return settings


@pytest.fixture
def settings(tmp_path: Path, store_url: str) -> Settings:
    """Every test here on SQLite and on PostgreSQL (the events' and decisions' queries on both)."""
    return Settings(data_dir=tmp_path / "var", store=StoreSettings(url=store_url), _env_file=None)


@pytest.fixture
def taught(settings: Settings, toy_reader: StoreReader, tmp_path: Path) -> Settings:
    """The toy store with a supplement that gives Bradycardia a wrong name ("Racing pulse"),
    built; a curator named alice."""
    return taught_bundle(settings, toy_reader, tmp_path, "alice")


@pytest.fixture
def client(taught: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(taught, encoder=FakeEncoder(32))) as test_client:
        yield test_client


def chose(client: TestClient, query: str, code: str, rank: int, times: int = 1, system: str = "toy") -> None:
    for _ in range(times):
        body = {"query": query, "action": "chose", "surface": "widget", "system": system, "code": code, "rank": rank, "shown": 10}
        assert client.post("/feedback", json=body).status_code == 202


def first(client: TestClient, query: str, system: str = "toy") -> dict:
    return client.get("/search", params={"q": query, "system": system}).json()["results"][0]


def events(client: TestClient) -> list[dict]:
    engine = client.app.state.reader.engine  # type: ignore[attr-defined]
    with engine.connect() as conn:
        return [dict(row) for row in conn.execute(select(FeedbackEventRow.__table__)).mappings()]


def test_an_event_is_stored_without_who_sent_it(client: TestClient) -> None:
    body = {"query": "Fast heart!", "action": "chose", "surface": "browser", "system": "http://example.org/toy", "code": "T:2",
            "rank": 2, "shown": 5, "scope": {"k": 10, "billable": None}}  # fmt: skip
    response = client.post("/feedback", json=body, headers={"X-Forwarded-For": "10.1.2.3"})
    assert (response.status_code, response.json()) == (202, {"status": "recorded"})
    [event] = events(client)
    assert {k: event[k] for k in ("query", "query_key", "system", "code", "rank", "shown", "scope")} == {
        "query": "Fast heart!", "query_key": "fast heart", "system": "toy", "code": "T:2", "rank": 2, "shown": 5,
        "scope": {"k": 10, "billable": None},
    }  # fmt: skip
    engine = client.app.state.reader.engine  # type: ignore[attr-defined]
    columns = {column["name"] for column in inspect(engine).get_columns("feedback_event")}
    assert not columns & {"address", "client", "key", "api_key", "ip"}
    assert 'termsearch_feedback_events_total{action="chose"} 1.0' in client.get("/metrics").text


CHOSE = {"action": "chose", "surface": "widget", "system": "toy"}


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ({**CHOSE, "code": "T:99", "rank": 1}, 422, "code: 'T:99' is not a code of toy"),
        ({"action": "chose", "surface": "widget", "system": "toy"}, 422, "code: a chose row needs its system and code"),
        ({**CHOSE, "system": "nope", "code": "T:2"}, 422, "system: unknown code system 'nope'; loaded: toy, toyicd"),
        ({**CHOSE, "code": "T:2", "rank": 6, "shown": 5}, 422, "rank: 6 is past the 5 rows shown"),
        ({"action": "flagged", "surface": "browser", "system": "toy", "code": "T:2"}, 422,
         "wrong: a flag says what is wrong (wrong: name or alignment) with which name (label)"),
        ({"action": "abandoned", "surface": "widget", "code": "T:2"}, 422,
         "code: an abandoned ranking names no row (no code, no wrong)"),
    ],
)  # fmt: skip
def test_bad_feedback_is_refused_naming_the_problem(client: TestClient, body: dict, status: int, detail: str) -> None:
    response = client.post("/feedback", json={"query": "fast heart", **body})
    assert (response.status_code, response.json()["detail"]) == (status, detail)
    assert events(client) == []


def test_bad_feedback_fields_are_refused(client: TestClient) -> None:
    for body, param in (
        ({"query": " ", "action": "abandoned", "surface": "widget"}, "query"),
        ({"query": "x", "action": "abandoned", "surface": "widget", "frobnicate": 1}, "frobnicate"),
        ({"query": "x", "action": "leave", "surface": "widget"}, "action"),
        ({"query": "x" * 600, "action": "abandoned", "surface": "widget"}, "query"),
    ):
        response = client.post("/feedback", json=body)
        assert response.status_code == 422, body
        assert param in response.json()["detail"]
    assert events(client) == []


def test_with_the_feature_off_nothing_is_served_or_stored(taught: Settings) -> None:
    off = taught.model_copy(update={"feedback": FeedbackSettings(enabled=False)})
    with TestClient(create_app(off, encoder=FakeEncoder(32))) as client:
        body = {"query": "fast heart", "action": "abandoned", "surface": "widget"}
        assert client.post("/feedback", json=body).status_code == 404
        assert client.get("/review/queue").status_code == 404
        assert client.get("/benchmarks/usage").status_code == 404
        assert events(client) == []


def test_a_phrasing_chosen_three_times_is_proposed_and_once_approved_ranks_its_concept_first(client: TestClient) -> None:
    assert first(client, PHRASING)["code"] != "T:3"
    chose(client, PHRASING, "T:3", rank=6, times=2)
    assert client.get("/review/queue").json()["proposals"] == []  # two choices: not yet
    chose(client, "My heart is  galloping.", "T:3", rank=4)  # the same phrasing, typed otherwise
    [proposal] = client.get("/review/queue").json()["proposals"]
    assert {k: proposal[k] for k in ("system", "code", "display", "key", "count", "ranks")} == {
        "system": "toy", "code": "T:3", "display": "Bradycardia", "key": "gallop heart my", "count": 3, "ranks": [4, 6]
    }  # fmt: skip

    decision = {"kind": "designation", "system": "toy", "code": "T:3", "text": PHRASING, "decision": "approve"}
    refused = client.post("/review/decisions", json=decision)
    assert (refused.status_code, refused.json()["detail"]) == (
        403, "a curator key is required to decide: send it as X-API-Key or Authorization: Bearer"
    )  # fmt: skip
    assert client.post("/review/decisions", json=decision, headers={"X-API-Key": "not-a-curator-key-000"}).status_code == 403

    approved = client.post("/review/decisions", json=decision, headers=CURATOR)
    assert approved.status_code == 201
    [row] = approved.json()["decisions"]
    assert (row["decision"], row["reviewer"], row["count"]) == ("approved", "alice", 3)
    top = first(client, PHRASING)
    assert top["code"] == "T:3"
    assert top["why"]["origin"].startswith("learned from use: 3 choices, approved by alice on ")
    assert client.get("/review/queue").json()["proposals"] == []  # decided: never proposed again


def test_a_rejected_proposal_is_not_proposed_again_and_an_edited_one_serves_as_edited(client: TestClient) -> None:
    chose(client, "ticker too quick", "T:3", rank=3, times=3)
    chose(client, "slow ticker", "T:2", rank=2, times=3)
    queue = client.get("/review/queue").json()["proposals"]
    assert {(p["text"], p["code"]) for p in queue} == {("ticker too quick", "T:3"), ("slow ticker", "T:2")}
    reject = {"kind": "designation", "system": "toy", "code": "T:3", "text": "ticker too quick", "decision": "reject"}
    assert client.post("/review/decisions", json=reject, headers=CURATOR).status_code == 201
    # Users chose the wrong concept for "slow ticker": the curator approves it for Bradycardia.
    edit = {**reject, "code": "T:2", "text": "slow ticker", "decision": "approve", "edit_code": "T:3"}
    written = client.post("/review/decisions", json=edit, headers=CURATOR).json()["decisions"]
    assert [(w["code"], w["decision"]) for w in written] == [("T:2", "edited"), ("T:3", "approved")]
    chose(client, "ticker too quick", "T:3", rank=3)
    assert client.get("/review/queue").json()["proposals"] == []
    assert first(client, "slow ticker")["code"] == "T:3"
    assert "learned from use" not in (first(client, "ticker too quick")["why"]["origin"] or "")
    bad = {**edit, "edit_code": "T:404"}
    refused = client.post("/review/decisions", json=bad, headers=CURATOR)
    assert (refused.status_code, refused.json()["detail"]) == (422, "edit_code: 'T:404' is not a code of toy")


def test_a_flagged_lent_name_once_denied_no_longer_lends(client: TestClient) -> None:
    top = first(client, "racing pulse")
    assert (top["code"], top["matched_term"], top["why"]["origin"]) == ("T:3", "Racing pulse", "supplement site")
    flag = {"query": "racing pulse", "action": "flagged", "surface": "browser", "system": "toy", "code": "T:3",
            "label": "Racing pulse", "wrong": "name", "reason": "a racing pulse is not a slow one"}  # fmt: skip
    for _ in range(2):
        assert client.post("/feedback", json=flag).status_code == 202
    [item] = client.get("/review/queue").json()["flags"]
    assert {k: item[k] for k in ("code", "label", "wrong", "count", "reasons", "origin")} == {
        "code": "T:3", "label": "Racing pulse", "wrong": "name", "count": 2, "reasons": ["a racing pulse is not a slow one"],
        "origin": "supplement site",
    }  # fmt: skip
    own = {"kind": "denial", "system": "toy", "code": "T:3", "text": "Bradycardia", "decision": "approve"}
    refused = client.post("/review/decisions", json=own, headers=CURATOR)
    assert (refused.status_code, refused.json()["detail"]) == (
        422, "text: 'Bradycardia' is not a name a knowledge source gave toy T:3 (the terminology's own names cannot be denied)"
    )  # fmt: skip
    deny = {"kind": "denial", "system": "toy", "code": "T:3", "text": "Racing pulse", "decision": "approve"}
    assert client.post("/review/decisions", json=deny, headers=CURATOR).status_code == 201
    rows = client.get("/search", params={"q": "racing pulse", "system": "toy"}).json()["results"]
    assert all(row["matched_term"] != "Racing pulse" for row in rows)
    assert client.get("/review/queue").json()["flags"] == []


def test_what_curators_approved_is_built_into_the_next_bundle(
    client: TestClient, taught: Settings, toy_reader: StoreReader
) -> None:
    chose(client, PHRASING, "T:3", rank=5, times=3)
    for decision in (
        {"kind": "designation", "system": "toy", "code": "T:3", "text": PHRASING, "decision": "approve"},
        {"kind": "denial", "system": "toy", "code": "T:3", "text": "Racing pulse", "decision": "approve"},
    ):
        assert client.post("/review/decisions", json=decision, headers=CURATOR).status_code == 201
    before = current_bundle(taught.bundles_dir)
    result = build_bundle(taught, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    assert result.built and result.directory != before  # the decisions are inputs: a new bundle
    bundle = Bundle(result.directory, taught)
    labels = {bundle.label_text[label]: label for label in bundle.concept_labels(bundle.concept_index("toy", "T:3"))}
    assert "Racing pulse" not in labels
    learned_label = labels[PHRASING]
    assert bundle.label_knowledge[learned_label] == "learned"
    assert bundle.label_origin[learned_label].startswith("learned from use: 3 choices, approved by alice on ")
    assert bundle.manifest.knowledge["learned"] == {"designations": 1, "labels": 1, "denials": 1}


def test_the_usage_set_is_the_approved_phrasings_run_without_what_users_taught(client: TestClient) -> None:
    chose(client, PHRASING, "T:3", rank=5, times=3)
    decision = {"kind": "designation", "system": "toy", "code": "T:3", "text": PHRASING, "decision": "approve"}
    client.post("/review/decisions", json=decision, headers=CURATOR)
    items = [{"query": PHRASING, "gold": ["T:3"], "system": "toy"}]
    assert client.get("/benchmarks/usage").json() == {"count": 1, "items": items}
    run = client.post("/benchmarks/usage/run", params={"system": "toy"}).json()
    assert (run["benchmark"], run["count"]) == ("usage", 1)
    # Left out, the overlay does not answer for the phrasing (with it, this query ranks T:3 first).
    [item] = run["items"]
    assert item["rank"] != 1
    empty = client.post("/benchmarks/usage/run", params={"system": "toyicd"})
    assert (empty.status_code, empty.json()["detail"]) == (422, "system: no approved phrasing of toyicd yet")


def test_events_older_than_the_retention_are_purged(toy_reader: StoreReader) -> None:
    store = EventStore(toy_reader.engine)
    now = datetime.now(UTC)
    for days in (100, 91, 89, 1):
        store.record(Event(Action.ABANDONED, Surface.WIDGET, f"query {days}"), at=now - timedelta(days=days))
    assert store.purge(90, now=now) == 2
    with toy_reader.engine.connect() as conn:
        assert sorted(conn.execute(select(FeedbackEventRow.query)).scalars()) == ["query 1", "query 89"]
