"""A form item bound to a whole terminology (issue 41): LHC-Forms, for an item with an
``answerValueSet`` and no autocomplete control, asks ``$expand?url={system}?fhir_vs&_format=json``
once, without ``count`` or ``filter``, and takes ``expansion.contains`` as the item's whole answer
list (it never reads ``total`` or pages). A terminology larger than one page
(``TERMSEARCH_FHIR__MAX_COUNT``; 3 here) stays a 422 too-costly OperationOutcome, as HL7's suite
(``big-echo-no-limit``) expects, not a first page the form would offer as every answer; LHC-Forms
shows it on the item ("Unable to load the answer list for this question.") and renders the rest
of the form. The error is readable from another origin and names what works: paging with
``count`` and ``offset`` (``total`` and the paging parameters echoed), or searching with ``filter``
as the autocomplete control does."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.fhir.conftest import FHIR_JSON, TOY_VS, resource
from tests.toy import TOY

EXPAND = "/fhir/ValueSet/$expand"
FORM_ORIGIN = "http://forms.example.org"
CATALOG = ["T:0", "T:1", "T:2", "T:3", "T:5", "T:4", "T:7", "T:6"]  # catalog order, active first


def _codes(body: dict[str, Any]) -> list[str]:
    return [entry["code"] for entry in body["expansion"].get("contains", [])]


def _parameters(body: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(p["name"], next(v for k, v in p.items() if k.startswith("value"))) for p in body["expansion"]["parameter"]]


def test_the_unpaged_expansion_a_form_asks_for_is_a_too_costly_outcome_it_can_read(small_client: TestClient) -> None:
    # LHC-Forms' request, exactly: the url and _format=json, FHIR JSON accepted, from the form's origin
    response = small_client.get(
        EXPAND, params={"url": TOY_VS, "_format": "json"}, headers={"Accept": FHIR_JSON, "Origin": FORM_ORIGIN}
    )
    text = (
        f"{TOY_VS} has 8 codes, more than 3 at once; page it with count and offset, "
        "or search it with filter (as a form's autocomplete item does)"
    )
    assert resource(response, "OperationOutcome", 422) == {
        "resourceType": "OperationOutcome",
        "issue": [{"severity": "error", "code": "too-costly", "details": {"text": text}}],
    }
    assert response.headers["access-control-allow-origin"] == "*"  # a page on another origin reads it


def test_count_zero_gives_the_size_and_pages_concatenate_to_the_whole(small_client: TestClient) -> None:
    size = resource(small_client.get(EXPAND, params={"url": TOY_VS, "count": "0"}), "ValueSet")
    assert (size["expansion"]["total"], size["expansion"]["offset"], _codes(size)) == (8, 0, [])
    pages = [
        resource(small_client.get(EXPAND, params={"url": TOY_VS, "count": "3", "offset": str(at)}), "ValueSet")
        for at in (0, 3, 6)
    ]
    assert [page["expansion"]["total"] for page in pages] == [8, 8, 8]
    assert [page["expansion"]["offset"] for page in pages] == [0, 3, 6]
    assert [("count", 3), ("offset", 6)] == [(n, v) for n, v in _parameters(pages[2]) if n in ("count", "offset")]
    assert [code for page in pages for code in _codes(page)] == CATALOG


def test_the_autocomplete_controls_search_is_answered(small_client: TestClient) -> None:
    # what LHC-Forms asks as the user types in an item with the autocomplete control
    params = {"url": TOY_VS, "filter": "fast heart", "count": "3", "_format": "json"}
    body = resource(small_client.get(EXPAND, params=params, headers={"Origin": FORM_ORIGIN}), "ValueSet")
    assert _codes(body)[0] == "T:2"
    assert body["expansion"]["contains"][0]["system"] == TOY.uri


def test_a_terminology_within_one_page_is_expanded_whole(small_client: TestClient) -> None:
    subtree = f"{TOY.uri}?fhir_vs=isa/T:1"  # T:1, T:2, T:3, T:7: 4 codes, over 3
    assert small_client.get(EXPAND, params={"url": subtree}).status_code == 422
    body = resource(small_client.get(EXPAND, params={"url": f"{TOY.uri}?fhir_vs=isa/T:5"}), "ValueSet")
    assert (body["expansion"]["total"], _codes(body)) == (2, ["T:5", "T:4"])
    assert "offset" not in body["expansion"]  # the whole value set, not a page
