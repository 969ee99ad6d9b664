"""What a FHIR client asks of the answer's format, and of the parameters it sends (issue 41):
FHIR JSON only (``_format=xml`` or an XML-only ``Accept`` is 406 with an OperationOutcome), and
an unknown parameter refused under ``Prefer: handling=strict``, ignored otherwise (the spec's
default, which HL7's own test suite relies on: it sends ``uuid``)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.fhir.conftest import TOY_VS
from tests.fhir.conftest import outcome as exactly
from tests.toy import TOY

EXPAND = "/fhir/ValueSet/$expand"


def outcome(response) -> tuple[int, str, str]:  # noqa: ANN001
    issue = response.json()["issue"][0]
    return response.status_code, issue["code"], issue["details"]["text"]


@pytest.mark.parametrize("fmt", ["json", "application/fhir+json", "application/json"])
def test_json_formats_are_served(client: TestClient, fmt: str) -> None:
    response = client.get(EXPAND, params={"url": TOY_VS, "filter": "fast heart", "_format": fmt})
    assert response.status_code == 200 and response.json()["resourceType"] == "ValueSet"


def test_xml_is_not_acceptable(client: TestClient) -> None:
    asked = client.get(EXPAND, params={"url": TOY_VS, "_format": "xml"})
    detail = "_format: 'xml' is not served; this server answers FHIR JSON only (_format=json)"
    assert outcome(asked) == (406, "not-supported", detail)
    assert asked.headers["content-type"].startswith("application/fhir+json")
    accepted = client.get(EXPAND, params={"url": TOY_VS}, headers={"Accept": "application/fhir+xml"})
    assert outcome(accepted)[:2] == (406, "not-supported")
    body = {"resourceType": "Parameters", "parameter": [{"name": "url", "valueUri": TOY_VS}]}
    posted = client.post(EXPAND + "?_format=xml", json=body)
    assert outcome(posted)[0] == 406


def test_an_unknown_parameter_is_refused_when_the_client_asks_for_strict_handling(client: TestClient) -> None:
    params = {"url": TOY_VS, "filter": "fast heart", "frobnicate": "yes"}
    assert client.get(EXPAND, params=params).status_code == 200  # lenient: ignored
    strict = client.get(EXPAND, params=params, headers={"Prefer": "handling=strict"})
    status, code, text = outcome(strict)
    assert (status, code) == (400, "invalid")
    assert text.startswith("frobnicate: not a parameter of ValueSet/$expand (its parameters: url, valueSet,")
    given = [{"name": "url", "valueUri": TOY_VS}, {"name": "frobnicate", "valueString": "x"}]
    body = {"resourceType": "Parameters", "parameter": given}
    posted = client.post(EXPAND, json=body, headers={"Prefer": "handling=strict"})
    assert outcome(posted)[0] == 400
    pretty = {"url": TOY_VS, "filter": "fast", "_pretty": "true"}
    general = client.get(EXPAND, params=pretty, headers={"Prefer": "handling=strict"})
    assert general.status_code == 200


def test_a_version_checked_for_that_is_not_the_one_used_is_a_version_error(client: TestClient) -> None:
    answer = client.get(EXPAND, params={"url": TOY_VS, "check-system-version": f"{TOY.uri}|9999"})
    text = f"check-system-version: the value set uses {TOY.uri} version '{TOY.version}', not '9999'"
    exactly(answer, 400, "invalid", "version-error", text)
