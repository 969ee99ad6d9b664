"""GET /concepts/{system}/{code}/similar: multi-label concept → concept search over the toy bundle."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.search.scope import Scope
from app.search.similar import concept_labels
from app.search.values import Mode


def _similar(client: TestClient, code: str = "T:2", **params: str) -> dict:
    response = client.get(f"/concepts/toy/{code}/similar", params=params)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_scores_are_the_max_over_the_concepts_labels(client: TestClient, mode: str) -> None:
    body = _similar(client, target_system="toy,toyicd", mode=mode, k="20")
    assert body["target_systems"] == ["toy", "toyicd"] and body["mode"] == mode
    assert body["results"], "something is similar"
    # Each label ranked by the core in the same scope (the concept itself left out, which
    # /search cannot say), as /search would rank it.
    service = client.app.state.service
    scope = Scope(("toy", "toyicd"), exclude=frozenset({service.bundle.concept_index("toy", "T:2")}))
    per_label = [
        {
            (row.system, row.code): {"score": row.score, "matched_term": row.matched_term}
            for row in service.results(service.rank(label, scope, 100, Mode(mode)))
        }
        for label in concept_labels(service, service.bundle.concept_index("toy", "T:2"))
    ]
    for row in body["results"]:
        key = (row["system"], row["code"])
        best = max((rows[key] for rows in per_label if key in rows), key=lambda r: r["score"])
        assert row["score"] == pytest.approx(best["score"])
        assert row["matched_term"] == best["matched_term"]
    assert [r["rank"] for r in body["results"]] == list(range(1, len(body["results"]) + 1))
    assert [r["score"] for r in body["results"]] == sorted((r["score"] for r in body["results"]), reverse=True)


def test_the_concept_itself_is_never_returned(client: TestClient) -> None:
    body = _similar(client, mode="dense", k="20")
    assert body["target_systems"] == ["toy"]  # the concept's own system by default
    codes = [row["code"] for row in body["results"]]
    assert "T:2" not in codes
    assert len(codes) == 6  # every other active toy concept


def test_across_systems_a_phenotype_finds_its_diagnosis(client: TestClient) -> None:
    for mode in ("dense", "lexical", "hybrid"):
        first = _similar(client, target_system="toyicd", mode=mode, k="3")["results"][0]
        assert (first["system"], first["code"]) == ("toyicd", "R00.0"), mode


def test_a_lay_synonym_alone_can_carry_the_match(client: TestClient) -> None:
    # "Fast heart rate" (a synonym, not the display) is what finds "Slow heart rate" of T:3.
    rows = _similar(client, mode="lexical", k="5")["results"]
    assert rows[0]["code"] == "T:3" and rows[0]["matched_term"] == "Slow heart rate"


@pytest.mark.parametrize(
    ("path", "params", "status", "param", "detail"),
    [
        ("/concepts/nope/T:2/similar", {}, 404, "system", "system: unknown code system 'nope'; loaded: toy, toyicd"),
        ("/concepts/toy/T:99/similar", {}, 404, "code", "code: 'T:99' is not a code of toy 2025-01-16"),
        (
            "/concepts/toy/T:2/similar",
            {"target_system": "toy,nope"},
            422,
            "target_system",
            "target_system: unknown code system 'nope'; loaded: toy, toyicd",
        ),
        ("/concepts/toy/T:2/similar", {"k": "0"}, 422, "k", "k: must be between 1 and 100 (got 0)"),
        (
            "/concepts/toy/T:2/similar",
            {"mode": "fuzzy"},
            422,
            "mode",
            "mode: Input should be 'dense', 'lexical' or 'hybrid'",
        ),
    ],
)
def test_bad_input_gets_a_problem(client: TestClient, path: str, params: dict, status: int, param: str, detail: str) -> None:
    response = client.get(path, params=params)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {
        "type": "/problems/not-found" if status == 404 else "/problems/invalid-parameter",
        "title": "Not found" if status == 404 else "Invalid parameter",
        "status": status,
        "detail": detail,
        "param": param,
    }
