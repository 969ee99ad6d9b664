"""ValueSet/$expand: semantic and prefix filters, paging, implicit subtree value sets, the
echoed expansion parameters, and every error as an OperationOutcome."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.fhir.expand import MATCHED_TERM
from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from tests.fhir.conftest import TOY_VS, TOYICD_VS, outcome, parameters, resource
from tests.toy import TOY, toy_concepts

EXPAND = "/fhir/ValueSet/$expand"


def expand(client: TestClient, **params: Any) -> dict[str, Any]:
    return resource(client.get(EXPAND, params=params), "ValueSet")


def codes(body: dict[str, Any]) -> list[str]:
    return [entry["code"] for entry in body["expansion"].get("contains", [])]


def echoed(body: dict[str, Any]) -> dict[str, Any]:
    return {p["name"]: next(v for k, v in p.items() if k.startswith("value")) for p in body["expansion"]["parameter"]}


def toy_subtree(root: str) -> set[str]:
    children: dict[str, list[str]] = defaultdict(list)
    for concept in toy_concepts():
        for parent in concept.parents:
            children[parent].append(concept.code)
    found, todo = set(), [root]
    while todo:
        code = todo.pop()
        found.add(code)
        todo += children[code]
    return found


@pytest.mark.parametrize(("typed", "code"), [("tachyc", "T:2"), ("tachycardia", "T:2"), ("hearing lo", "T:4")])
def test_partly_typed_words_match_as_prefixes(client: TestClient, typed: str, code: str) -> None:
    body = expand(client, url=TOY_VS, filter=typed, count=5)
    assert codes(body)[0] == code


def test_lay_words_find_the_concept_and_name_the_matched_label(client: TestClient) -> None:
    first = expand(client, url=TOY_VS, filter="hearing loss", count=3)["expansion"]["contains"][0]
    assert (first["code"], first["display"]) == ("T:4", "Hearing impairment")
    assert {"url": MATCHED_TERM, "valueString": "Hearing loss"} in first["extension"]
    assert first["system"] == TOY.uri and "version" not in first  # one version per system: used-codesystem's


def test_expansion_metadata_and_echoed_parameters(client: TestClient) -> None:
    params = {"url": TOY_VS, "filter": "heart", "count": 2, "offset": 1, "activeOnly": "true",
              "includeDesignations": "false", "displayLanguage": "en", "min_confidence": 0}
    expansion = expand(client, **params)["expansion"]
    assert expansion["identifier"].startswith("urn:uuid:")
    assert expansion["timestamp"].endswith("+00:00")
    assert (expansion["offset"], len(expansion["contains"])) == (1, 2)
    assert expansion["total"] >= 3
    assert echoed({"expansion": expansion}) == {  # the url is the value set's own, not echoed
        "filter": "heart", "count": 2, "offset": 1, "activeOnly": True,
        "includeDesignations": False, "displayLanguage": "en", "min_confidence": 0.0,
        "used-codesystem": f"{TOY.uri}|{TOY.version}",
    }


def test_post_parameters_answers_like_get(client: TestClient) -> None:
    given = {"url": {"valueUri": TOY_VS}, "filter": {"valueString": "fast heart"}, "count": {"valueInteger": 4}}
    body = parameters(given)
    posted = resource(client.post(EXPAND, json=body), "ValueSet")
    assert codes(posted) == codes(expand(client, url=TOY_VS, filter="fast heart", count=4))
    assert codes(posted)[0] == "T:2"


@pytest.mark.parametrize("offset", [2**31 - 1, 2**31])
def test_get_and_post_agree_on_the_largest_offset(client: TestClient, offset: int) -> None:
    got = client.get(EXPAND, params={"url": TOY_VS, "offset": str(offset)})
    posted = client.post(EXPAND, json=parameters({"url": {"valueUri": TOY_VS}, "offset": {"valueInteger": offset}}))
    assert got.status_code == posted.status_code == (200 if offset < 2**31 else 400)


@pytest.mark.parametrize("typed", [None, "heart"])
def test_pages_concatenate_to_the_whole_expansion(client: TestClient, typed: str | None) -> None:
    base = {"url": TOY_VS} | ({"filter": typed, "min_confidence": 0} if typed else {})
    whole = expand(client, **base)
    total = whole["expansion"]["total"]
    assert total == len(codes(whole)) > 3
    pages = [expand(client, **base, count=3, offset=offset) for offset in range(0, total + 3, 3)]
    assert [code for page in pages for code in codes(page)] == codes(whole)
    assert {page["expansion"]["total"] for page in pages} == {total}
    assert codes(pages[-1]) == []  # past the end: an empty page, not an error


def test_filtered_expansion_is_at_most_the_filter_depth(small_client: TestClient) -> None:
    body = expand(small_client, url=TOY_VS, filter="abnormality", count=3, min_confidence=0)
    assert body["expansion"]["total"] == 4


def test_a_filter_filters_by_confidence(client: TestClient) -> None:
    """Only concepts at or above the confidence threshold are listed, and total counts them, but
    for a concept whose label holds every word of the filter: a text filter lists what names it."""
    assert expand(client, url=TOY_VS, filter="xxxqqq")["expansion"]["total"] == 0
    every = expand(client, url=TOY_VS, filter="heart", min_confidence=0)["expansion"]["contains"]
    naming = {c.code for c in toy_concepts() if any(re.search(r"\bheart\b", d.text, re.I) for d in c.designations)}
    assert naming and {e["code"] for e in every} - naming  # the ranking finds more than the codes named so
    assert set(codes(expand(client, url=TOY_VS, filter="heart", min_confidence=1))) == naming
    both = set(codes(expand(client, url=TOY_VS, filter="heart rate", min_confidence=1)))
    assert both == {"T:2", "T:3"}  # Fast heart rate, Slow heart rate; not Heart murmur (every word, not any)
    confidences = {e["code"]: next(x["valueDecimal"] for x in e["extension"] if x["url"].endswith("confidence")) for e in every}
    threshold = sorted(confidences.values())[-2]  # two rows reach it (shown rounded to 4 places)
    confident = expand(client, url=TOY_VS, filter="heart", min_confidence=threshold - 5e-5)["expansion"]
    kept = {code for code, c in confidences.items() if c >= threshold} | naming
    assert confident["total"] == len(kept) and {e["code"] for e in confident["contains"]} == kept


def test_unfiltered_expansion_lists_every_code_in_catalog_order(client: TestClient) -> None:
    listed = codes(expand(client, url=TOY_VS))
    concepts = toy_concepts()
    active = [c.code for c in concepts if c.active]
    assert listed == active + [c.code for c in concepts if not c.active]
    assert codes(expand(client, url=TOY_VS, activeOnly="true")) == active


def test_chapters_and_blocks_are_listed_as_abstract_or_left_out_on_request(client: TestClient) -> None:
    contains = expand(client, url=TOYICD_VS)["expansion"]["contains"]
    assert [e["code"] for e in contains if e.get("abstract")] == ["I00-I99"]  # the chapter
    assert all("abstract" not in e for e in contains if e["code"] != "I00-I99")
    for name, value in (("excludeNotForUI", True), ("abstract", False)):
        body = expand(client, url=TOYICD_VS, **{name: str(value).lower()})
        assert codes(body) == [e["code"] for e in contains if e["code"] != "I00-I99"]
        assert body["expansion"]["total"] == len(contains) - 1
        assert echoed(body)[name] is value
    filtered = expand(client, url=TOYICD_VS, filter="circulatory system diseases", min_confidence=0)
    assert "I00-I99" not in codes(filtered)  # a filter never offers them


def test_implicit_subtree_value_set_restricts_results(client: TestClient) -> None:
    subtree = toy_subtree("T:1")
    url = f"{TOY.uri}?fhir_vs=isa/T:1"
    assert set(codes(expand(client, url=url))) == subtree
    everywhere = codes(expand(client, url=TOY_VS, filter="abnormality of the ear", count=10, min_confidence=0))
    within = codes(expand(client, url=url, filter="abnormality of the ear", count=10, min_confidence=0))
    assert not set(everywhere) <= subtree  # the filter alone finds codes outside the subtree
    assert within and set(within) <= subtree
    assert within == [code for code in everywhere if code in subtree]


def test_inactive_codes_are_flagged_and_left_out_with_active_only(client: TestClient) -> None:
    contains = expand(client, url=TOY_VS, filter="rapid pulse", count=10)["expansion"]["contains"]
    inactive = [entry["code"] for entry in contains if entry.get("inactive")]
    assert inactive == ["T:6"]
    assert "T:6" not in codes(expand(client, url=TOY_VS, filter="rapid pulse", count=10, activeOnly="true"))


def test_designations_on_request(client: TestClient) -> None:
    plain = expand(client, url=TOY_VS, filter="tachycardia", count=1)["expansion"]["contains"][0]
    assert "designation" not in plain
    entry = expand(client, url=TOY_VS, filter="tachycardia", count=1, includeDesignations="true")
    designations = entry["expansion"]["contains"][0]["designation"]
    assert [d["value"] for d in designations] == ["Fast heart rate", "Racing heart"]  # the display is the display
    assert {d["language"] for d in designations} == {"en"}
    sources = sorted(client.app.state.service.bundle.knowledge_sources)
    supplements = [("useSupplement", f"urn:termsearch:supplement:{source}") for source in sources]
    params = [("url", TOY_VS), ("filter", "tachycardia"), ("count", "1"), ("includeDesignations", "true"), *supplements]
    entry = resource(client.get(EXPAND, params=params), "ValueSet")["expansion"]["contains"][0]
    bundle = client.app.state.service.bundle
    lent = [d.text for d in bundle.knowledge_labels(bundle.concept_index("toy", "T:2"))]
    assert [d["value"] for d in entry["designation"]] == ["Fast heart rate", "Racing heart", *lent] and lent


def test_other_systems_value_set_holds_only_its_codes(client: TestClient) -> None:
    body = expand(client, url=TOYICD_VS, filter="tachycardia", count=3)
    assert {entry["system"] for entry in body["expansion"]["contains"]} == {"http://example.org/toyicd"}
    assert codes(body)[0] == "R00.0"


INVALID = ("invalid", "invalid-data")


@pytest.mark.parametrize(
    ("params", "status", "codes_", "text"),
    [
        ({}, 400, INVALID, "url: required"),
        ({"url": "http://example.org/toy"}, 404, ("not-found", "not-found"),
         "value set 'http://example.org/toy' is unknown; known: http://example.org/toy?fhir_vs, "
         "http://example.org/toyicd?fhir_vs, {system}?fhir_vs=isa/{code} for a subtree, and "
         "http://example.org/toyicd?fhir_vs=billable for the billable codes"),
        ({"url": f"{TOY.uri}?fhir_vs=isa/T:99"}, 404, ("not-found", "not-found"),
         f"value set '{TOY.uri}?fhir_vs=isa/T:99': code 'T:99' is not in {TOY.uri} version {TOY.version}"),
        ({"url": TOY_VS, "count": "-1"}, 400, INVALID, "count: expected an integer from 0 to 2147483647 (got '-1')"),
        ({"url": TOY_VS, "offset": "ten"}, 400, INVALID, "offset: expected an integer from 0 to 2147483647 (got 'ten')"),
        ({"url": TOY_VS, "offset": "2147483648"}, 400, INVALID,
         "offset: expected an integer from 0 to 2147483647 (got '2147483648')"),
        ({"url": TOY_VS, "activeOnly": "yes"}, 400, INVALID, "activeOnly: expected true or false (got 'yes')"),
        ({"url": TOY_VS, "displayLanguage": "english!"}, 400, ("processing", "invalid-display"),
         "displayLanguage: expected a language tag such as en or en-US, or a list of them (got 'english!')"),
        ({"url": TOY_VS, "filter": "x" * 513}, 400, INVALID, "filter: longer than 512 characters (513)"),
        ({"url": [TOY_VS, TOYICD_VS]}, 400, INVALID, "url: given 2 times, allowed once"),
        ({"url": TOY_VS, "filter": "heart", "min_confidence": "high"}, 400, INVALID,
         "min_confidence: expected a decimal (got 'high')"),
        ({"url": TOY_VS, "filter": "heart", "min_confidence": "2"}, 400, INVALID,
         "min_confidence: must be between 0 and 1 (got 2.0)"),
    ],
)
def test_bad_requests_are_operation_outcomes(
    client: TestClient, params: dict, status: int, codes_: tuple[str, str], text: str
) -> None:
    outcome(client.get(EXPAND, params=params), status, *codes_, text)


def test_unpaged_expansion_over_the_limit_is_too_costly(small_client: TestClient) -> None:
    text = (f"{TOY_VS} has 8 codes, more than 3 at once; page it with count and offset, "
            "or search it with filter (as a form's autocomplete item does)")
    outcome(small_client.get(EXPAND, params={"url": TOY_VS}), 422, "too-costly", None, text)
    text = "count: at most 3 codes per page (got 4)"  # a count above the limit only matters when there are that many
    outcome(small_client.get(EXPAND, params={"url": TOY_VS, "count": "4"}), 422, "too-costly", None, text)
    assert resource(small_client.get(EXPAND, params={"url": f"{TOY.uri}?fhir_vs=isa/T:3", "count": "4"}), "ValueSet")
    assert len(codes(expand(small_client, url=TOY_VS, count=3, offset=6))) == 2


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"{not json", "body: not valid JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
        (b'{"resourceType": "ValueSet"}', "body: expected a Parameters resource"),
        (b'{"resourceType": "Parameters", "parameter": [{"valueString": "x"}]}', "body: parameter 0 has no name"),
        (b'{"resourceType": "Parameters", "parameter": [{"name": "url"}]}', "url: expected exactly one value[x]"),
        (b'{"resourceType": "Parameters", "parameter": [{"name": "url", "valueUri": "%s"}, '
         b'{"name": "count", "valueInteger": true}]}' % TOY_VS.encode(),
         "count: valueInteger must be a 32-bit integer (got true)"),
    ],
)
def test_bad_post_bodies_are_operation_outcomes(client: TestClient, body: bytes, text: str) -> None:
    response = client.post(EXPAND, content=body, headers={"content-type": "application/fhir+json"})
    outcome(response, 400, *INVALID, text)


def test_routing_errors_under_fhir_are_operation_outcomes_elsewhere_problems(client: TestClient) -> None:
    outcome(client.get("/fhir/ValueSet/$nothing"), 404, "not-found", "not-found", "no route serves this path")
    refused = client.put(EXPAND)
    outcome(refused, 405, "not-supported", "invalid-data", "PUT is not allowed here; allowed: GET, HEAD, POST")
    assert refused.headers["allow"] == "GET, HEAD, POST"
    problem = client.get("/search", params={"q": ""})
    assert problem.headers["content-type"] == "application/problem+json"
    assert problem.json()["type"] == "/problems/invalid-parameter"


def test_no_bundle_is_a_503_operation_outcome(settings: Settings) -> None:
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        body = resource(client.get(EXPAND, params={"url": TOY_VS}), "OperationOutcome", 503)
    assert [(i["severity"], i["code"]) for i in body["issue"]] == [("fatal", "transient")]
    assert body["issue"][0]["details"]["text"].startswith("no search bundle is loaded")


def test_exclude_nested_is_honoured_and_echoed(client: TestClient) -> None:
    body = resource(client.get(EXPAND, params={"url": TOY_VS, "excludeNested": "true"}), "ValueSet")
    assert {"name": "excludeNested", "valueBoolean": True} in body["expansion"]["parameter"]
    assert all("contains" not in entry for entry in body["expansion"]["contains"])  # flat
    outcome(client.get(EXPAND, params={"url": TOY_VS, "excludeNested": "maybe"}), 400, "invalid", "invalid-data",
            "excludeNested: expected true or false (got 'maybe')")


def test_accept_language_stands_for_display_language(client: TestClient) -> None:
    """A browser's header is the display language unless the request names one; a malformed
    header is ignored, never a 400."""
    params = {"url": TOY_VS, "filter": "tachycardia", "count": 1}
    for header in ("de-CH, de;q=0.9, en;q=0.5", "not a language !!"):
        body = resource(client.get(EXPAND, params=params, headers={"Accept-Language": header}), "ValueSet")
        assert body["expansion"]["contains"][0]["display"] == "Tachycardia"  # no German label: the default
    echoed = expand(client, **params, displayLanguage="en")["expansion"]["parameter"]
    assert {"name": "displayLanguage", "valueCode": "en"} in echoed


def test_the_autocomplete_never_goes_blank_while_a_word_is_unfinished(client: TestClient) -> None:
    """Below the threshold, an unfinished word's completions are still listed (with their
    confidence); a fragment that begins no word and follows none lists nothing."""

    def expand(text: str) -> dict:
        params = {"url": TOY_VS, "filter": text, "min_confidence": "0.999"}
        return resource(client.get("/fhir/ValueSet/$expand", params=params), "ValueSet")["expansion"]

    typing = expand("tachyc")
    assert typing["total"] == len(typing["contains"]) > 0
    assert typing["contains"][0]["code"] == "T:2"
    assert all(_confidence(entry) < 0.999 for entry in typing["contains"])
    assert expand("xqzvw").get("contains") is None


def _confidence(entry: dict) -> float:
    return next(e["valueDecimal"] for e in entry["extension"] if e["url"] == "urn:termsearch:fhir:confidence")
