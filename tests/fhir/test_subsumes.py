"""CodeSystem/$subsumes (FHIR R4): the outcome by the toy systems' is-a links, from codes or
codings, at type and instance level; missing or contradictory parameters are 400s, an unknown
system, version or code a 404 naming it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import out, outcome, parameters, resource
from tests.toy import TOY, TOYICD

SUBSUMES = "/fhir/CodeSystem/$subsumes"
LOADED = "http://example.org/toy, http://example.org/toyicd"


@pytest.mark.parametrize(
    ("system", "a", "b", "expected"),
    [
        (TOY.uri, "T:2", "T:2", "equivalent"),
        (TOY.uri, "T:1", "T:2", "subsumes"),
        (TOY.uri, "T:0", "T:2", "subsumes"),  # a grandparent
        (TOY.uri, "T:2", "T:1", "subsumed-by"),
        (TOY.uri, "T:4", "T:0", "subsumed-by"),
        (TOY.uri, "T:2", "T:3", "not-subsumed"),  # siblings
        (TOY.uri, "T:4", "T:1", "not-subsumed"),  # part of T:5, not below T:1
        (TOY.uri, "T:6", "T:2", "not-subsumed"),  # inactive, in no hierarchy
        (TOYICD.uri, "I00-I99", "I21.0", "subsumes"),
        (TOYICD.uri, "I21.0", "I21", "subsumed-by"),
        (TOYICD.uri, "I10", "I21.0", "not-subsumed"),
    ],
)
def test_subsumes_answers_the_outcome_by_is_a(client: TestClient, system: str, a: str, b: str, expected: str) -> None:
    body = resource(client.get(SUBSUMES, params={"system": system, "codeA": a, "codeB": b}), "Parameters")
    assert body == {"resourceType": "Parameters", "parameter": [{"name": "outcome", "valueCode": expected}]}
    codings = {f"coding{side}": {"valueCoding": {"system": system, "code": code}} for side, code in (("A", a), ("B", b))}
    assert resource(client.post(SUBSUMES, json=parameters(codings)), "Parameters") == body
    key = "toy" if system == TOY.uri else "toyicd"
    instance = client.get(f"/fhir/CodeSystem/{key}/$subsumes", params={"codeA": a, "codeB": b})
    assert resource(instance, "Parameters") == body


def test_codings_without_a_system_are_of_the_system_named(client: TestClient) -> None:
    given = {
        "system": {"valueUri": TOY.uri}, "version": {"valueString": TOY.version},
        "codingA": {"valueCoding": {"code": "T:1"}}, "codeB": {"valueCode": "T:7"},
    }
    assert out(resource(client.post(SUBSUMES, json=parameters(given)), "Parameters"), "outcome") == ["subsumes"]
    posted = client.post("/fhir/CodeSystem/toy/$subsumes", json=parameters({
        "codingA": {"valueCoding": {"code": "T:7"}}, "codingB": {"valueCoding": {"code": "T:1", "version": TOY.version}}
    }))
    assert out(resource(posted, "Parameters"), "outcome") == ["subsumed-by"]


@pytest.mark.parametrize(
    ("params", "status", "code", "tx_code", "text"),
    [
        ({"system": TOY.uri, "codeA": "T:1"}, 400, "invalid", "invalid-data", "codeB: required (or codingB)"),
        ({"system": TOY.uri, "codeB": "T:1"}, 400, "invalid", "invalid-data", "codeA: required (or codingA)"),
        ({"codeA": "T:1", "codeB": "T:2"}, 400, "invalid", "invalid-data", "system: required (or codings with a system)"),
        ({"system": TOY.uri, "codeA": "T:1", "codeB": "T:2", "version": "1999"}, 404, "not-found", "not-found",
         f"version '1999' of {TOY.uri} is not loaded; loaded: {TOY.version}"),
        ({"system": "http://example.org/none", "codeA": "T:1", "codeB": "T:2"}, 404, "not-found", "not-found",
         f"code system 'http://example.org/none' is not loaded; loaded: {LOADED}"),
        ({"system": TOY.uri, "codeA": "T:1", "codeB": "T:99"}, 404, "code-invalid", "invalid-code",
         f"codeB: unknown code 'T:99' in {TOY.uri} version {TOY.version}"),
        ({"system": TOY.uri, "codeA": "I10", "codeB": "T:2"}, 404, "code-invalid", "invalid-code",
         f"codeA: unknown code 'I10' in {TOY.uri} version {TOY.version}"),
    ],
)
def test_subsumes_errors(client: TestClient, params: dict, status: int, code: str, tx_code: str, text: str) -> None:
    outcome(client.get(SUBSUMES, params=params), status, code, tx_code, text)


@pytest.mark.parametrize(
    ("given", "status", "code", "tx_code", "text"),
    [
        ({"codingA": {"valueCoding": {"system": TOY.uri, "code": "T:1"}},
          "codingB": {"valueCoding": {"system": TOYICD.uri, "code": "I10"}}}, 400, "invalid", "invalid-data",
         f"codingB.system: {TOYICD.uri} is not {TOY.uri}; subsumption is tested within one code system"),
        ({"system": {"valueUri": TOYICD.uri}, "codingA": {"valueCoding": {"system": TOY.uri, "code": "T:1"}},
          "codeB": {"valueCode": "I10"}}, 400, "invalid", "invalid-data",
         f"codingA.system: {TOY.uri} is not {TOYICD.uri}; subsumption is tested within one code system"),
        ({"codingA": {"valueCoding": {"system": TOY.uri, "code": "T:99"}},
          "codingB": {"valueCoding": {"system": TOY.uri, "code": "T:1"}}}, 404, "code-invalid", "invalid-code",
         f"codingA.code: unknown code 'T:99' in {TOY.uri} version {TOY.version}"),
        ({"codingA": {"valueCoding": {"system": TOY.uri, "code": "T:1", "version": "1999"}},
          "codingB": {"valueCoding": {"system": TOY.uri, "code": "T:2"}}}, 404, "not-found", "not-found",
         f"version '1999' of {TOY.uri} is not loaded; loaded: {TOY.version}"),
        ({"codingA": {"valueCoding": {"system": TOY.uri}}, "codeB": {"valueCode": "T:2"}}, 400, "invalid", "invalid-data",
         "codingA: expected a Coding with a code"),
    ],
)
def test_subsumes_coding_errors(client: TestClient, given: dict, status: int, code: str, tx_code: str, text: str) -> None:
    outcome(client.post(SUBSUMES, json=parameters(given)), status, code, tx_code, text)
