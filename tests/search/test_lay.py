"""Lay "cannot X" wordings, and the ranking core searching them."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.search.lay import gerund, rewrites
from tests.api.conftest import built, client  # noqa: F401 - the toy bundle and an app serving it


@pytest.mark.parametrize(
    ("verb", "expected"),
    [("hear", "hearing"), ("breathe", "breathing"), ("see", "seeing"), ("die", "dying"), ("walking", "walking")],
)
def test_gerund(verb: str, expected: str) -> None:
    assert gerund(verb) == expected


def test_cannot_wordings_are_read_as_an_impairment() -> None:
    assert rewrites("can't hear well") == ["hearing impairment", "inability to hear", "difficulty hearing"]
    assert rewrites("Trouble sleeping") == ["sleeping impairment", "inability to sleep", "difficulty sleeping"]
    assert rewrites("unable to walk") == ["walking impairment", "inability to walk", "difficulty walking"]
    assert rewrites("hearing loss") == [] and rewrites("cannot") == []


def test_the_core_finds_the_impairment_and_says_how(client: TestClient) -> None:  # noqa: F811
    first = client.get("/search", params={"q": "can't hear", "system": "toy", "k": 1}).json()["results"][0]
    assert first["code"] == "T:4"  # Hearing impairment
    assert first["why"]["origin"] == "lay wording read as 'hearing impairment'"
