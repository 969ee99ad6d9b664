"""POST /evaluate, the built-in benchmarks and the stored runs, over the toy bundle.

The metrics are checked against values computed by hand from fixed rankings (the search is
replaced), with the toy hierarchy's graded gains:

    T:0 Phenotypic abnormality
    ├── T:1 Abnormality of the cardiovascular system ── T:2 Tachycardia, T:3 Bradycardia, T:7 Heart murmur
    └── T:5 Abnormality of the ear ── T:4 Hearing impairment
"""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.search.scope import Scope
from app.search.values import Mode, Ranked, Ranking
from evaluation import benchmarks
from evaluation.benchmarks import BenchmarkSpec
from indexer.store import StoreReader

RANKINGS = {
    "fast heart rate": ["T:3", "T:2", "T:4", "T:1"],  # gold T:2 at rank 2
    "hearing loss": ["T:4", "T:5"],  # gold T:4 at rank 1
    "slow heart rate": [],  # gold T:3 not found
}
ITEMS = [
    {"query": "fast heart rate", "gold": ["T:2"]},
    {"query": "hearing loss", "gold": ["T:4"]},
    {"query": "slow heart rate", "gold": ["T:3"]},
]
# Gains for T:2: T:2 3, T:1 2 (parent), T:0 1 (grandparent), T:3 and T:7 1 (siblings), T:5 1 (uncle).
FAST = (1 + 3 / math.log2(3) + 2 / math.log2(5)) / (
    3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5) + 1 / math.log2(6) + 1 / math.log2(7)
)
# Gains for T:4: T:4 3, T:5 2 (parent), T:0 1 (grandparent), T:1 1 (uncle).
HEARING = (3 + 2 / math.log2(3)) / (3 + 2 / math.log2(3) + 1 / 2 + 1 / math.log2(5))


@pytest.fixture
def fixed(client: TestClient) -> list[tuple[str, list[str], Mode]]:
    """Replace the served search with :data:`RANKINGS`; records each call."""
    calls: list[tuple[str, list[str], Mode]] = []
    bundle = client.app.state.service.bundle

    def rank(query: str, scope: Scope, k: int, mode: Mode, min_confidence: float = 0.0) -> Ranking:
        calls.append((query, list(scope.systems), mode))
        rows = [bundle.concept_index("toy", code) for code in RANKINGS[query][:k]]
        return Ranking([Ranked(row, bundle.concept_labels(row).start, 1.0 / n, 0.5, ()) for n, row in enumerate(rows, 1)])

    client.app.state.service.rank = rank
    return calls


def test_metrics_match_hand_computed_values(client: TestClient, fixed: list) -> None:
    response = client.post("/evaluate", json={"system": "toy", "mode": "lexical", "items": ITEMS})
    assert response.status_code == 200, response.text
    run = response.json()
    assert {call[1][0] for call in fixed} == {"toy"} and {call[2] for call in fixed} == {Mode.LEXICAL}
    assert run["metrics"] == pytest.approx(
        {"hits@1": 1 / 3, "hits@5": 2 / 3, "hits@10": 2 / 3, "mrr": (1 / 2 + 1) / 3, "ndcg@10": (FAST + HEARING) / 3}
    )
    assert [item["rank"] for item in run["items"]] == [2, 1, None]
    assert [item["ndcg"] for item in run["items"]] == pytest.approx([FAST, HEARING, 0.0])
    # Overlap: "heart" of {fast, heart, rate} is in "Racing heart"; "hearing" of {hearing, loss} in
    # "Hearing impairment"; nothing of {slow, heart, rate} in "Bradycardia" (the label equal to
    # the query itself is left out).
    assert [item["overlap"] for item in run["items"]] == pytest.approx([1 / 3, 1 / 2, 0.0])
    assert run["overlap"] == {
        "0": {"count": 1, "hits": 0.0},
        "(0,0.25]": {"count": 0, "hits": None},
        "(0.25,0.5]": {"count": 2, "hits": 1.0},
        "(0.5,0.75]": {"count": 0, "hits": None},
        "(0.75,1]": {"count": 0, "hits": None},
    }
    assert (run["system"], run["mode"], run["k"], run["count"], run["benchmark"]) == ("toy", "lexical", 10, 3, None)
    assert run["model_id"] == "fake-hash-32" and run["bundle_id"] == client.app.state.service.bundle.id


def test_runs_are_stored_and_listed_newest_first(client: TestClient, fixed: list) -> None:
    first = client.post("/evaluate", json={"system": "toy", "mode": "dense", "items": ITEMS}).json()
    second = client.post("/evaluate", json={"system": "toy", "mode": "hybrid", "k": 5, "items": ITEMS[:2]}).json()
    listed = client.get("/evaluations").json()
    assert [run["id"] for run in listed] == [second["id"], first["id"]]
    assert "items" not in listed[0]
    assert {k: v for k, v in listed[1].items()} == {k: v for k, v in first.items() if k != "items"}
    stored = client.get(f"/evaluations/{first['id']}").json()
    assert stored == first  # the whole run round-trips through the store
    assert second["metrics"]["hits@5"] == 1.0 and "hits@10" not in second["metrics"]


def _run_benchmark(client: TestClient, name: str, **params: Any) -> dict:
    """Start the benchmark's job (202 at once), wait for it, and read its stored run."""
    response = client.post(f"/benchmarks/{name}/run", params=params)
    assert response.status_code == 202, response.text
    job = response.json()
    assert (job["benchmark"], job["status"]) == (name, "queued")
    assert response.headers["location"] == f"/benchmarks/jobs/{job['id']}"
    deadline = time.monotonic() + 60
    while job["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.05)
        job = client.get(response.headers["location"]).json()
    assert job["status"] == "done", job
    assert job["progress"]["done"] == job["progress"]["total"] > 0
    assert client.get("/benchmarks/jobs").json()[0]["id"] == job["id"]
    return client.get(f"/evaluations/{job['run_id']}").json()


def test_a_benchmark_runs_on_the_store_and_is_recorded(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = BenchmarkSpec("toy-lay", "toy", "toy layperson synonyms", "layperson")
    monkeypatch.setitem(benchmarks.BENCHMARKS, spec.name, spec)
    listed = {b["name"]: b for b in client.get("/benchmarks").json()}
    assert listed["toy-lay"]["available"] is True and listed["hpo-lay"]["available"] is False
    run = _run_benchmark(client, "toy-lay", mode="lexical", run_name="lexical baseline")
    assert run["name"] == "lexical baseline"
    # every layperson synonym of the toy system, each asked for its own concept
    assert [(i["query"], i["gold"][0]) for i in run["items"]] == [
        ("Fast heart rate", "T:2"), ("Slow heart rate", "T:3"), ("Hearing loss", "T:4"), ("Whooshing heart sound", "T:7"),
    ]
    assert (run["benchmark"], run["mode"], run["count"]) == ("toy-lay", "lexical", 4)
    assert client.get("/evaluations").json()[0]["benchmark"] == "toy-lay"
    # Each query's own label is left out of the search: "Fast heart rate" cannot find itself,
    # and BM25 finds Slow heart rate by its words ("heart rate") before Tachycardia.
    ranks = {i["query"]: i["rank"] for i in run["items"]}
    assert ranks["Fast heart rate"] != 1 and ranks["Slow heart rate"] != 1
    assert ranks["Hearing loss"] == 1  # by its other name, "Hearing impairment"
    assert run["metrics"]["hits@1"] < 1.0


def test_leaf_to_parent_searches_only_the_candidates(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = BenchmarkSpec("toy-l2p", "toy", "toy leaves → parents", None)
    monkeypatch.setitem(benchmarks.BENCHMARKS, spec.name, spec)
    run = _run_benchmark(client, "toy-l2p", mode="dense", k=3)
    non_leaves = {"T:0", "T:1", "T:5"}
    assert {i["query"] for i in run["items"]} == {"Tachycardia", "Bradycardia", "Heart murmur", "Hearing impairment"}
    assert all(set(i["results"]) <= non_leaves for i in run["items"])


def _invalid(detail: str, param: str) -> dict:
    return {"type": "/problems/invalid-parameter", "title": "Invalid parameter", "status": 422, "detail": detail, "param": param}


def test_unknown_gold_codes_are_reported_back(client: TestClient) -> None:
    items = [*ITEMS, {"query": "a", "gold": ["T:99", "T:2"]}, {"query": "b", "gold": ["I10"]}]
    response = client.post("/evaluate", json={"system": "toy", "items": items})
    assert response.status_code == 422
    assert response.json() == {
        **_invalid(
            "items.3.gold: not codes of toy 2025-01-16: 'T:99'; 1 more item(s) name unknown codes (see unknown_gold)",
            "items.3.gold",
        ),
        "unknown_gold": [{"item": 3, "codes": ["T:99"]}, {"item": 4, "codes": ["I10"]}],
    }
    assert client.get("/evaluations").json() == []  # nothing was run or stored


@pytest.mark.parametrize(
    ("body", "detail", "param"),
    [
        ({"system": "nope", "items": ITEMS}, "system: unknown code system 'nope'; loaded: toy, toyicd", "system"),
        ({"system": "toy", "items": []}, "items: must not be empty", "items"),
        ({"system": "toy", "items": [{"query": " ", "gold": ["T:2"]}]}, "items.0.query: must not be empty", "items.0.query"),
        ({"system": "toy", "items": [{"query": "x", "gold": []}]}, "items.0.gold: must not be empty", "items.0.gold"),
        ({"system": "toy", "k": 0, "items": ITEMS}, "k: must be between 1 and 100 (got 0)", "k"),
        ({"system": "toy", "mode": "fuzzy", "items": ITEMS}, "mode: Input should be 'dense', 'lexical' or 'hybrid'", "mode"),
        ({"system": "toy"}, "items: Field required", "items"),
    ],
)
def test_bad_evaluate_requests(client: TestClient, body: dict, detail: str, param: str) -> None:
    response = client.post("/evaluate", json=body)
    assert response.status_code == 422
    assert response.json() == _invalid(detail, param)


def test_unknown_benchmarks_runs_and_systems(client: TestClient) -> None:
    not_found = client.post("/benchmarks/nope/run")
    assert not_found.status_code == 404
    assert not_found.json() == {
        "type": "/problems/not-found",
        "title": "Not found",
        "status": 404,
        "detail": "name: unknown benchmark 'nope'; built in: hpo-lay, hpo-synonyms, hpo-leaf-to-parent, icd10cm-inclusion",
        "param": "name",
    }
    unloaded = client.post("/benchmarks/hpo-lay/run")
    assert unloaded.status_code == 422
    assert unloaded.json() == _invalid("name: benchmark 'hpo-lay' runs on hpo, which is not loaded; loaded: toy, toyicd", "name")
    assert client.get("/benchmarks/jobs/nope").json()["detail"] == "job_id: no benchmark job 'nope'"
    missing = client.get("/evaluations/42")
    assert missing.status_code == 404 and missing.json()["detail"] == "run_id: no evaluation run 42"


def test_runs_can_be_named(client: TestClient, fixed: list) -> None:
    named = client.post("/evaluate", json={"system": "toy", "items": ITEMS, "run_name": "after the MeSH source"}).json()
    assert named["name"] == "after the MeSH source"
    assert client.get("/evaluations").json()[0]["name"] == "after the MeSH source"
    blank = client.post("/evaluate", json={"system": "toy", "items": ITEMS, "run_name": "  "})
    assert (blank.status_code, blank.json()["detail"]) == (422, "run_name: must not be blank")
    long = client.post("/evaluate", json={"system": "toy", "items": ITEMS, "run_name": "x" * 101})
    assert (long.status_code, long.json()["detail"]) == (422, "run_name: longer than 100 characters (101)")


def test_a_gold_set_uploaded_as_csv_runs_as_the_same_items_would(client: TestClient, fixed: list) -> None:
    text = 'query,gold\nfast heart rate,T:2\n"hearing loss",T:4|T:5\n\nslow heart rate,T:3\n'
    params = {"system": "toy", "mode": "lexical", "run_name": "uploaded"}
    uploaded = client.post("/evaluate/csv", params=params, content=text, headers={"content-type": "text/csv; charset=utf-8"})
    assert uploaded.status_code == 200, uploaded.text
    run = uploaded.json()
    assert [(i["query"], i["gold"]) for i in run["items"]] == [
        ("fast heart rate", ["T:2"]), ("hearing loss", ["T:4", "T:5"]), ("slow heart rate", ["T:3"]),
    ]
    assert run["name"] == "uploaded" and run["count"] == 3
    same = [{**item, "gold": ["T:4", "T:5"]} if item["query"] == "hearing loss" else item for item in ITEMS]
    as_json = client.post("/evaluate", json={"system": "toy", "mode": "lexical", "items": same}).json()
    assert run["metrics"] == as_json["metrics"]


@pytest.mark.parametrize(
    ("text", "content_type", "status", "detail"),
    [
        ("q,g\nx,T:2\n", "text/csv", 422, "body: line 1: expected the header query,gold (got 'q,g')"),
        ("query,gold\nfast heart rate\n", "text/csv", 422, "body: line 2: expected 2 fields (query, gold), found 1"),
        ("query,gold\nfast,T:2\n ,T:3\n", "text/csv", 422, "body: line 3: a query and at least one gold code are required"),
        ("query,gold\nfast,T:2\n", "application/json", 415, "content-type: expected text/csv (got 'application/json')"),
        ("query,gold\n" + "x" * 131_073 + ",T:2\n", "text/csv", 422,
         "body: line 2: not CSV this endpoint reads (field larger than field limit (131072))"),
    ],
)
def test_a_malformed_csv_upload_names_its_line(client: TestClient, text: str, content_type: str, status: int, detail: str) -> None:
    response = client.post("/evaluate/csv", params={"system": "toy"}, content=text, headers={"content-type": content_type})
    assert (response.status_code, response.json()["detail"]) == (status, detail)


def test_benchmark_runs_wait_in_a_bounded_queue(toy_reader: StoreReader) -> None:
    from app.errors import RateLimited
    from app.evaluations.jobs import BenchmarkJobs

    jobs = BenchmarkJobs(lambda: None, toy_reader, {})  # not started: every run stays queued
    jobs.submit("hpo-synonyms", Mode.HYBRID, 10, None, max_queued=2)
    jobs.submit("hpo-synonyms", Mode.HYBRID, 10, None, max_queued=2)
    with pytest.raises(RateLimited) as refused:
        jobs.submit("hpo-synonyms", Mode.HYBRID, 10, None, max_queued=2)
    assert refused.value.detail == (
        "2 benchmark runs are queued, at most 2 (match.max_queued_jobs); try again once one has finished"
    )
    assert refused.value.headers == {"Retry-After": "30"}


def test_a_run_failed_by_the_store_says_so_without_naming_its_host(toy_reader: StoreReader) -> None:
    from sqlalchemy.exc import OperationalError

    from app.evaluations.jobs import BenchmarkJobs

    def unreachable() -> None:
        raise OperationalError("SELECT 1", {}, Exception('connection to server at "db.internal" (10.0.0.5), port 5432 failed'))

    jobs = BenchmarkJobs(unreachable, toy_reader, {})  # type: ignore[arg-type]
    job = jobs.submit("hpo-synonyms", Mode.HYBRID, 10, None, max_queued=2)
    jobs.start()
    try:
        deadline = time.monotonic() + 10
        while (stored := jobs.get(job.id)) is not None and stored.finished_at is None and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        jobs.stop()
    assert stored is not None and stored.status == "failed"
    assert stored.error == f"the store failed during the run (logged under job {job.id}); submit it again"
