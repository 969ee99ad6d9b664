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
    assert {key: value for key, value in first.items() if key not in ("score", "confidence", "why")} == {
        "rank": 1,
        "system": "toy",
        "code": "T:2",
        "display": "Tachycardia",
        "kind": None,
        "billable": None,
        "inactive": False,
        "matched_term": "Fast heart rate",
    }
    assert 0.0 <= first["confidence"] <= 1.0
    why = first["why"]
    assert (why["matched_term"], why["matched_type"], why["origin"], why["code"]) == ("Fast heart rate", "layperson", None, False)
    assert why["words"] == 1.0
    assert why["cosine"] > 0.9 if mode != "lexical" else why["cosine"] == 0.0  # lexical mode encodes nothing
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
        ({"q": "a", "min_confidence": "1.5"}, "min_confidence", "min_confidence: must be between 0 and 1 (got 1.5)"),
        ({"q": "a", "min_confidence": "-0.1"}, "min_confidence", "min_confidence: must be between 0 and 1 (got -0.1)"),
        ({"q": "a", "ancestor": "NOPE"}, "ancestor", "ancestor: 'NOPE' is not a code of toy, toyicd; name one system"),
        ({"q": "a", "kind": "chapterz"}, "kind", "kind: unknown kind 'chapterz'; known: category, chapter, code"),
        ({"q": "a", "billable": "maybe"}, "billable", "billable: Input should be a valid boolean, unable to interpret input"),
    ],
)
def test_bad_input_gets_problem_naming_parameter(client: TestClient, params: dict, param: str, detail: str) -> None:
    response = client.get("/search", params=params)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {**PROBLEM, "detail": detail, "param": param}


def test_query_of_512_characters_is_accepted(client: TestClient) -> None:
    assert client.get("/search", params={"q": "heart " * 85 + "ab"}).status_code == 200


@pytest.mark.parametrize("typed", ["I21.0", "i210", "I210", " i21.0 "])
def test_a_typed_code_returns_that_concept_first(client: TestClient, typed: str) -> None:
    for mode in ("hybrid", "dense", "lexical"):
        row = client.get("/search", params={"q": typed, "mode": mode}).json()["results"][0]
        assert (row["code"], row["why"]["code"], row["why"]["matched_type"]) == ("I21.0", True, "code")


def test_obo_style_codes_in_any_usual_form(client: TestClient) -> None:
    for typed in ("T:2", "t_2", "T2"):
        assert _codes(client.get("/search", params={"q": typed, "system": "toy"}).json())[0] == "T:2"


def test_chapters_only_on_request(client: TestClient) -> None:
    params = {"q": "diseases of the circulatory system", "system": "toyicd", "k": 10}
    assert "I00-I99" not in _codes(client.get("/search", params=params).json())
    asked = client.get("/search", params={**params, "kind": "chapter"}).json()
    assert _codes(asked) == ["I00-I99"] and asked["results"][0]["kind"] == "chapter"


def test_billable_filter_and_flags(client: TestClient) -> None:
    rows = client.get("/search", params={"q": "myocardial infarction", "system": "toyicd", "billable": "true"}).json()
    assert "I21" not in _codes(rows) and "I21.0" in _codes(rows)
    assert all(row["billable"] is True for row in rows["results"])


def test_ancestor_keeps_the_subtree(client: TestClient) -> None:
    params = {"q": "heart", "system": "toy", "ancestor": "T:1", "k": 20}
    codes = _codes(client.get("/search", params=params).json())
    assert codes and set(codes) <= {"T:1", "T:2", "T:3", "T:7"}
    assert "T:4" not in codes


def test_a_lexical_subtree_search_keeps_bm25_order_of_the_subtree(client: TestClient) -> None:
    """The lexical index keeps to the subtree by its labels' lineage, with their own scores."""
    every = _codes(client.get("/search", params={"q": "heart", "system": "toy", "mode": "lexical", "k": 20}).json())
    inside = _codes(client.get("/search", params={"q": "heart", "system": "toy", "mode": "lexical", "k": 20, "ancestor": "T:1"}).json())
    assert inside and inside == [code for code in every if code in {"T:1", "T:2", "T:3", "T:7"}]


def test_misspelled_word_is_found_and_corrected(client: TestClient) -> None:
    body = client.get("/search", params={"q": "tachycrdia", "system": "toy"}).json()
    assert _codes(body)[0] == "T:2" and body["suggestion"] == "tachycardia"
    lexical = client.get("/search", params={"q": "tachycrdia", "system": "toy", "mode": "lexical"}).json()
    assert lexical["results"] == [] and lexical["suggestion"] == "tachycardia"


def test_min_confidence_leaves_out_weak_rows(client: TestClient) -> None:
    every = client.get("/search", params={"q": "fast heart rate", "system": "toy", "k": 20}).json()["results"]
    strong = client.get("/search", params={"q": "fast heart rate", "system": "toy", "k": 20, "min_confidence": 0.5}).json()
    assert [r["code"] for r in strong["results"]] == [r["code"] for r in every if r["confidence"] >= 0.5]
    assert len(strong["results"]) < len(every)
