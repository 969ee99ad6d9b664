"""GET /search over the toy bundle: ranking per mode, grouping, filters and every error body."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

PROBLEM = {"type": "/problems/invalid-parameter", "title": "Invalid parameter", "status": 422}


def _codes(body: dict) -> list[str]:
    return [row["code"] for row in body["results"]]


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_lay_synonym_finds_concept_in_every_mode(client: TestClient, mode: str) -> None:
    response = client.get("/search", params={"q": "fast heart rate", "system": "toy", "mode": mode})
    assert response.status_code == 200
    body = response.json()
    assert (body["query"], body["mode"]) == ("fast heart rate", mode)
    first = body["results"][0]
    assert first == {
        "rank": 1,
        "system": "toy",
        "code": "T:2",
        "display": "Tachycardia",
        "score": first["score"],
        "matched_term": "Fast heart rate",
    }
    assert [row["rank"] for row in body["results"]] == list(range(1, len(body["results"]) + 1))
    scores = [row["score"] for row in body["results"]]
    assert scores == sorted(scores, reverse=True)
    assert body["took_ms"] >= 0


def test_one_row_per_concept(client: TestClient) -> None:
    # "heart" appears in three labels of T:2... and in other concepts; each concept is listed once.
    codes = _codes(client.get("/search", params={"q": "heart", "k": 20, "mode": "lexical"}).json())
    assert len(codes) == len(set(codes))
    assert {"T:2", "T:3", "T:7"} <= set(codes)


def test_system_filter_and_all_systems(client: TestClient) -> None:
    only_icd = client.get("/search", params={"q": "tachycardia", "system": "toyicd", "mode": "lexical"}).json()
    assert _codes(only_icd) == ["R00.0"]
    both = client.get("/search", params={"q": "tachycardia", "mode": "lexical"}).json()
    assert {row["system"] for row in both["results"]} == {"toy", "toyicd"}
    listed = client.get("/search", params={"q": "tachycardia", "system": "toy,toyicd", "mode": "lexical"}).json()
    assert _codes(listed) == _codes(both)


def test_k_limits_rows(client: TestClient) -> None:
    body = client.get("/search", params={"q": "abnormality", "k": 2, "system": "toy", "mode": "dense"}).json()
    assert len(body["results"]) == 2


def test_inactive_concepts_only_on_request(client: TestClient) -> None:
    params = {"q": "rapid pulse", "system": "toy", "mode": "lexical", "k": 20}
    assert "T:6" not in _codes(client.get("/search", params=params).json())
    with_inactive = client.get("/search", params={**params, "include_inactive": "true"}).json()
    assert _codes(with_inactive)[0] == "T:6"


@pytest.mark.parametrize(
    ("params", "param", "detail"),
    [
        ({"q": ""}, "q", "q: must not be empty"),
        ({"q": "   "}, "q", "q: must not be empty"),
        ({}, "q", "q: Field required"),
        ({"q": "x" * 513}, "q", "q: longer than 512 characters (513)"),
        ({"q": "a", "system": "nope"}, "system", "system: unknown code system 'nope'; loaded: toy, toyicd"),
        ({"q": "a", "mode": "fuzzy"}, "mode", "mode: Input should be 'dense', 'lexical' or 'hybrid'"),
        ({"q": "a", "k": "0"}, "k", "k: must be between 1 and 100 (got 0)"),
        ({"q": "a", "k": "101"}, "k", "k: must be between 1 and 100 (got 101)"),
        ({"q": "a", "k": "ten"}, "k", "k: Input should be a valid integer, unable to parse string as an integer"),
    ],
)
def test_bad_input_gets_problem_naming_parameter(client: TestClient, params: dict, param: str, detail: str) -> None:
    response = client.get("/search", params=params)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {**PROBLEM, "detail": detail, "param": param}


def test_query_of_512_characters_is_accepted(client: TestClient) -> None:
    assert client.get("/search", params={"q": "heart " * 85 + "ab"}).status_code == 200
