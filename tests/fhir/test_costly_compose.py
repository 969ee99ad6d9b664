"""Bounded work for a value set's compose (issue 36): its cost is checked before any work,
regular expressions run on RE2, stored value sets are upserted under concurrent writers, and a
request already answered 503 stores nothing."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.fhir.stored import ValueSetStore
from app.ops import limits
from app.ops.limits import RequestCancelled
from indexer.store import make_engine, migrate
from tests.fhir.conftest import TOYICD_VS, outcome, resource
from tests.toy import TOY

CARDIO = {"resourceType": "ValueSet", "url": "http://example.org/vs/cardio", "version": "1", "status": "active"}


def _expand(client: TestClient, compose: dict[str, Any]) -> Any:
    body = {"resourceType": "Parameters", "parameter": [{"name": "valueSet", "resource": {**CARDIO, "compose": compose}}]}
    return client.post("/fhir/ValueSet/$expand", json=body)


def _regex(pattern: str) -> dict[str, Any]:
    return {"include": [{"system": TOY.uri, "filter": [{"property": "code", "op": "regex", "value": pattern}]}]}


def test_a_compose_importing_one_value_set_thousands_of_times_is_refused_before_any_work(client: TestClient) -> None:
    compose = {"include": [{"valueSet": [TOYICD_VS] * 20_000}]}
    outcome(
        _expand(client, compose),
        422,
        "too-costly",
        None,
        "valueSet.compose: 20000 imports, more than the 32 a compose may have (fhir.max_compose_imports)",
    )


@pytest.mark.parametrize(
    ("compose", "text"),
    [
        (
            {"include": [{"system": TOY.uri}] * 201},
            "valueSet.compose: 201 parts, more than the 200 a compose may have (fhir.max_compose_parts)",
        ),
        (
            {"include": [{"system": TOY.uri, "filter": [{"property": "concept", "op": "is-a", "value": "T:1"}] * 201}]},
            "valueSet.compose: 201 filters, more than the 200 a compose may have (fhir.max_compose_filters)",
        ),
        (
            {"include": [{"system": TOY.uri, "concept": [{"code": "T:1"}] * 20_001}]},
            "valueSet.compose: 20001 concepts, more than the 20000 a compose may have (fhir.max_compose_concepts)",
        ),
        (
            _regex("T" * 257),
            "valueSet.compose.include[0].filter[0].value: a regex of 257 characters, more than 256 (fhir.max_regex_length)",
        ),
    ],
)
def test_each_limit_of_a_compose_is_named(client: TestClient, compose: dict[str, Any], text: str) -> None:
    outcome(_expand(client, compose), 422, "too-costly", None, text)


def test_imports_within_the_limit_are_worked_out_once_each(client: TestClient) -> None:
    body = resource(_expand(client, {"include": [{"valueSet": [TOYICD_VS] * 32}]}), "ValueSet")
    assert (
        body["expansion"]["total"]
        == resource(client.get("/fhir/ValueSet/$expand", params={"url": TOYICD_VS}), "ValueSet")["expansion"]["total"]
    )


def test_regex_filters_run_on_re2(client: TestClient) -> None:
    body = resource(_expand(client, _regex("(.*.*)*!")), "ValueSet")  # catastrophic for backtracking engines
    assert body["expansion"]["total"] == 0
    body = resource(_expand(client, _regex("T:[45]")), "ValueSet")
    assert sorted(entry["code"] for entry in body["expansion"]["contains"]) == ["T:4", "T:5"]
    refused = resource(_expand(client, _regex(r"(T):\1")), "OperationOutcome", 400)  # a backreference: not RE2
    assert refused["issue"][0]["details"]["text"].startswith(
        "valueSet.compose.include[0].filter[0].value: not a regular expression RE2 accepts (invalid escape sequence"
    )


def test_a_stored_value_set_too_costly_to_expand_is_never_stored(client: TestClient) -> None:
    body = {**CARDIO, "id": "costly", "compose": {"include": [{"valueSet": [TOYICD_VS] * 33}]}}
    resource(client.put("/fhir/ValueSet/costly", json=body), "OperationOutcome", 422)
    resource(client.get("/fhir/ValueSet/costly"), "OperationOutcome", 404)


def test_a_write_whose_request_timed_out_is_not_stored(store_url: str) -> None:
    migrate(store_url)
    store = ValueSetStore(make_engine(store_url))
    cancelled = threading.Event()
    cancelled.set()
    token = limits._CURRENT.set(cancelled)
    try:
        with pytest.raises(RequestCancelled):
            store.put({**CARDIO, "id": "late", "compose": {}})
    finally:
        limits._CURRENT.reset(token)
    assert store.search(CARDIO["url"], None) == []


def test_concurrent_writers_of_one_id_upsert_one_consistent_resource(store_url: str) -> None:
    migrate(store_url)
    store = ValueSetStore(make_engine(store_url))
    versions = [{**CARDIO, "id": "shared", "version": str(n), "compose": {}} for n in range(40)]
    with ThreadPoolExecutor(8) as pool:
        created = list(pool.map(store.put, versions))
    assert created.count(True) == 1
    [stored] = store.search(CARDIO["url"], None)
    assert stored == store.get("shared") and stored in versions
