"""HL7's terminology-ecosystem test suite on the real HPO + ICD-10-CM server (tests/fhir/tx_ecosystem):
each of the suite's tests is run as adapted, or skipped with the reason it does not apply; a known
failure is a strict xfail, so fixing it fails the run until its mark is removed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from fhir.resources.R4B import get_fhir_model_class

from tests.fhir.tx_ecosystem.compare import differences
from tests.fhir.tx_ecosystem.suite import ENDPOINTS, Case, cases, request_body, run
from tests.real_data import real_client

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    yield from real_client()


def _param(case: Case) -> object:
    marks = []
    if case.not_applicable:
        marks.append(pytest.mark.skip(reason=f"not applicable: {case.not_applicable}"))
    elif case.fails:
        marks.append(pytest.mark.xfail(reason=case.fails, strict=True))
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in cases()])
def test_hl7_tx_ecosystem(client: TestClient, case: Case) -> None:
    assert run(case, client) == []


def test_every_answer_is_valid_r4b(client: TestClient) -> None:
    """The suite's answers, whatever their verdict, parse as R4B resources."""
    for case in cases():
        if case.adapted and case.operation not in ("metadata", "term-caps"):
            _, path = ENDPOINTS[case.operation]
            body = client.post(path, json=request_body(case)).json()
            get_fhir_model_class(body["resourceType"]).model_validate(body)


def test_the_adaptation_accounts_for_every_test_of_the_suite() -> None:
    assert len(cases()) == 920
    assert [case.id for case in cases() if not case.adapted and not case.not_applicable] == []
    assert all(case.response is not None and case.response.exists() for case in cases() if case.adapted)


def test_an_issue_may_carry_location_beside_expression_where_a_test_leaves_it_out() -> None:
    expected = {"severity": "error", "code": "invalid", "expression": ["Coding.code"]}
    assert differences(expected, {**expected, "location": ["Coding.code"]}) == []
    assert differences({"severity": "error", "code": "invalid"}, {"severity": "error", "code": "invalid", "location": ["x"]}) == [
        ".location: not expected"  # without an expression, location is no stand-in
    ]
    assert differences({"name": "x"}, {"name": "x", "location": ["x"]}) == [".location: not expected"]  # only in an issue
