"""ConceptMap/$translate (stored mappings and semantic candidates) and /fhir/metadata."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.fhir.expand import SCORE
from app.fhir.translate import XREF_SYSTEMS
from app.main import create_app
from app.settings import FhirSettings, Settings
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.store import StoreReader
from tests.fhir.conftest import out, outcome, resource
from tests.toy import TOY, TOYICD, toy_concepts

TRANSLATE = "/fhir/ConceptMap/$translate"
TOY_CONCEPTS = {concept.code: concept for concept in toy_concepts()}


def matches(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(equivalence, system, code) of each match, in order."""
    found = []
    for parts in out(body, "match"):
        named = {p["name"]: p for p in parts}
        concept = named["concept"]["valueCoding"]
        found.append((named["equivalence"]["valueCode"], concept["system"], concept["code"]))
    return found


def test_stored_xrefs_come_first_then_semantic_candidates(client: TestClient) -> None:
    body = resource(client.get(TRANSLATE, params={"system": TOY.uri, "code": "T:2"}), "Parameters")
    assert out(body, "result") == [True] and out(body, "message") == []
    found = matches(body)
    prefix, _, code = TOY_CONCEPTS["T:2"].xrefs[0].partition(":")
    assert found[0] == ("relatedto", XREF_SYSTEMS[prefix], code)  # an OBO xref states no relationship
    semantic = found[1:]
    assert semantic and {(eq, system) for eq, system, _ in semantic} == {("relatedto", TOYICD.uri)}
    scores = [m["extension"][0] for m in body["parameter"] if m["name"] == "match" and "extension" in m]
    assert [s["url"] for s in scores] == [SCORE] * len(semantic)
    assert [s["valueDecimal"] for s in scores] == sorted((s["valueDecimal"] for s in scores), reverse=True)


def test_semantic_candidates_alone_never_make_a_translation(client: TestClient) -> None:
    params = {"system": TOY.uri, "code": "T:2", "targetsystem": TOYICD.uri}
    body = resource(client.get(TRANSLATE, params=params), "Parameters")
    found = matches(body)
    assert found and {eq for eq, _, _ in found} == {"relatedto"}
    assert out(body, "result") == [False]
    assert out(body, "message") == [
        f"no stored mapping or alignment for {TOY.uri}#T:2; {len(found)} unreviewed semantic candidates"
    ]


def test_an_alignment_makes_a_translation(built: Settings, toy_reader: StoreReader) -> None:
    built.knowledge.align = [("toy", "toyicd")]
    build_bundle(built, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    params = {"system": TOY.uri, "code": "T:2", "targetsystem": TOYICD.uri}
    with TestClient(create_app(built, encoder=FakeEncoder(32))) as client:
        body = resource(client.get(TRANSLATE, params=params), "Parameters")
    assert out(body, "result") == [True] and out(body, "message") == []
    assert matches(body)[0] == ("equivalent", TOYICD.uri, "R00.0")
    assert {eq for eq, _, _ in matches(body)[1:]} == {"relatedto"}


def test_target_system_keeps_only_its_codes_and_never_the_source(client: TestClient) -> None:
    params = {"system": TOY.uri, "code": "T:6", "targetsystem": TOY.uri}
    found = matches(resource(client.get(TRANSLATE, params=params), "Parameters"))
    assert found[0] == ("equivalent", TOY.uri, "T:2")  # T:6 replaced_by T:2
    assert {system for _, system, _ in found} == {TOY.uri}
    assert "T:6" not in [code for _, _, code in found]
    assert len(found) == len({code for _, _, code in found})


def test_reverse_lists_the_concepts_that_map_to_the_code(client: TestClient) -> None:
    """T:6 (inactive) is replaced_by T:2: translating T:2 in reverse finds T:6, equivalent; T:2's
    own xref (a mapping it states one way) is not listed; semantic candidates stay unreviewed."""
    params = {"system": TOY.uri, "code": "T:2", "reverse": "true"}
    body = resource(client.get(TRANSLATE, params=params), "Parameters")
    found = matches(body)
    assert found[0] == ("equivalent", TOY.uri, "T:6") and out(body, "result") == [True]
    assert not any(system == XREF_SYSTEMS["UMLS"] for _, system, _ in found)
    assert {eq for eq, _, _ in found[1:]} <= {"relatedto"}
    forward = matches(resource(client.get(TRANSLATE, params={**params, "reverse": "false"}), "Parameters"))
    assert ("equivalent", TOY.uri, "T:6") not in forward


def test_target_subtree_value_set_restricts_candidates(client: TestClient) -> None:
    params = {"system": TOYICD.uri, "code": "R00.0", "target": f"{TOY.uri}?fhir_vs=isa/T:5"}
    found = matches(resource(client.get(TRANSLATE, params=params), "Parameters"))
    assert {code for _, _, code in found} == {"T:5", "T:4"}


def test_a_concept_map_given_translates_alone_both_ways(client: TestClient) -> None:
    concept_map = {
        "resourceType": "ConceptMap", "url": "http://example.org/cm", "version": "2",
        "group": [{"source": TOY.uri, "target": TOYICD.uri, "element": [
            {"code": "T:2", "target": [{"code": "R00.0", "equivalence": "equivalent"}]},
            {"code": "T:3", "target": [{"code": "R00.0", "equivalence": "disjoint"}]},
        ]}],
    }

    def translated(code: str, system: str, reverse: bool) -> tuple[bool, list[tuple[str, str, str]]]:
        given = {"code": {"valueCode": code}, "system": {"valueUri": system}, "reverse": {"valueBoolean": reverse}}
        body = {"resourceType": "Parameters", "parameter": [
            *({"name": n, **v} for n, v in given.items()), {"name": "tx-resource", "resource": concept_map}]}
        answer = resource(client.post("/fhir/ConceptMap/$translate", json=body), "Parameters")
        named = {p["name"]: p for p in answer["parameter"]}
        matches = [{q["name"]: q for q in p["part"]} for p in answer["parameter"] if p["name"] == "match"]
        found = [(m["concept"]["valueCoding"]["code"], m["equivalence"]["valueCode"], m["source"]["valueUri"]) for m in matches]
        return named["result"]["valueBoolean"], found

    assert translated("T:2", TOY.uri, False) == (True, [("R00.0", "equivalent", "http://example.org/cm|2")])
    assert translated("T:3", TOY.uri, False) == (False, [("R00.0", "disjoint", "http://example.org/cm|2")])
    assert translated("R00.0", TOYICD.uri, True) == (
        True, [("T:2", "equivalent", "http://example.org/cm|2"), ("T:3", "disjoint", "http://example.org/cm|2")]
    )


@pytest.mark.parametrize(
    "r5",
    [
        {"sourceSystem": TOY.uri, "sourceCode": "T:6", "targetSystem": TOY.uri},  # as HL7's test suite writes it
        {"system": TOY.uri, "sourceCode": "T:6", "targetSystem": TOY.uri},  # as R5's OperationDefinition does
        {"sourceSystem": TOY.uri, "code": "T:6", "targetsystem": TOY.uri, "targetSystem": TOY.uri},  # both names, one value
    ],
)
def test_r5_parameter_names_translate_as_the_r4_ones(client: TestClient, r5: dict[str, str]) -> None:
    r4 = resource(client.get(TRANSLATE, params={"system": TOY.uri, "code": "T:6", "targetsystem": TOY.uri}), "Parameters")
    assert matches(r4)[0] == ("equivalent", TOY.uri, "T:2")
    assert resource(client.get(TRANSLATE, params=r5), "Parameters") == r4
    posted = {"resourceType": "Parameters", "parameter": [
        {"name": "sourceCoding", "valueCoding": {"system": TOY.uri, "code": "T:6"}}, {"name": "targetSystem", "valueUri": TOY.uri}
    ]}
    assert resource(client.post(TRANSLATE, json=posted), "Parameters") == r4
    scope = resource(client.get(TRANSLATE, params={"sourceSystem": TOYICD.uri, "sourceCode": "R00.0",
                                                   "targetScope": f"{TOY.uri}?fhir_vs=isa/T:5"}), "Parameters")
    assert {code for _, _, code in matches(scope)} == {"T:5", "T:4"}


@pytest.mark.parametrize("name", ["codeableConcept", "sourceCodeableConcept"])
def test_a_codeable_concept_translates_its_first_coding_of_a_loaded_system(client: TestClient, name: str) -> None:
    concept = {"coding": [{"system": "http://example.org/none", "code": "x"}, {"system": TOY.uri, "code": "T:6"}]}
    body = {"resourceType": "Parameters", "parameter": [
        {"name": name, "valueCodeableConcept": concept}, {"name": "targetsystem", "valueUri": TOY.uri}
    ]}
    assert matches(resource(client.post(TRANSLATE, json=body), "Parameters"))[0] == ("equivalent", TOY.uri, "T:2")
    unknown = {"resourceType": "Parameters", "parameter": [
        {"name": name, "valueCodeableConcept": {"coding": [{"system": "http://example.org/none", "code": "x"}]}}
    ]}
    text = "code system 'http://example.org/none' is not loaded; loaded: http://example.org/toy, http://example.org/toyicd"
    outcome(client.post(TRANSLATE, json=unknown), 404, "not-found", "not-found", text)


def test_a_concept_map_translates_by_r5_names_as_hl7s_test_suite_asks(client: TestClient) -> None:
    concept_map = {
        "resourceType": "ConceptMap", "url": "http://example.org/cm", "version": "2",
        "group": [{"source": TOY.uri, "target": TOYICD.uri, "element": [
            {"code": "T:2", "target": [{"code": "R00.0", "equivalence": "equivalent"}]}]}],
    }
    body = {"resourceType": "Parameters", "parameter": [
        {"name": "sourceSystem", "valueUri": TOY.uri}, {"name": "sourceCode", "valueCode": "T:2"},
        {"name": "targetSystem", "valueUri": TOYICD.uri}, {"name": "tx-resource", "resource": concept_map},
    ]}
    answer = resource(client.post(TRANSLATE, json=body), "Parameters")
    assert out(answer, "result") == [True] and matches(answer) == [("equivalent", TOYICD.uri, "R00.0")]


@pytest.mark.parametrize(
    ("params", "text"),
    [
        ({"system": TOY.uri, "sourceSystem": TOYICD.uri, "code": "T:2"},
         "system and sourceSystem: one parameter by two names, with different values; give one"),
        ({"system": TOY.uri, "code": "T:2", "sourceCode": "T:3"},
         "code and sourceCode: one parameter by two names, with different values; give one"),
        ({"sourceSystem": TOY.uri, "sourceCode": "T:2", "targetsystem": TOY.uri, "targetSystem": TOYICD.uri},
         "targetsystem and targetSystem: one parameter by two names, with different values; give one"),
        ({"sourceSystem": TOY.uri}, "code and system: required (or coding, or codeableConcept)"),
    ],
)
def test_an_r4_and_an_r5_name_of_one_parameter_must_agree(client: TestClient, params: dict, text: str) -> None:
    outcome(client.get(TRANSLATE, params=params), 400, "invalid", "invalid-data", text)


@pytest.mark.parametrize(
    ("params", "status", "code", "tx_code", "text"),
    [
        ({"system": TOY.uri}, 400, "invalid", "invalid-data", "code and system: required (or coding, or codeableConcept)"),
        ({"system": TOY.uri, "code": "T:99"}, 404, "code-invalid", "invalid-code",
         f"code 'T:99' is not in {TOY.uri} version {TOY.version}"),
        ({"url": "http://example.org/cm", "system": TOY.uri, "code": "T:2"}, 404, "not-found", "not-found",
         "no ConceptMap is stored here: give one as tx-resource, or translate with system and code"),
    ],
)
def test_translate_errors(client: TestClient, params: dict, status: int, code: str, tx_code: str, text: str) -> None:
    outcome(client.get(TRANSLATE, params=params), status, code, tx_code, text)


def test_capability_statement_lists_the_operations(client: TestClient) -> None:
    body = resource(client.get("/fhir/metadata"), "CapabilityStatement")
    operations = {(r["type"], o["name"]) for r in body["rest"][0]["resource"] for o in r["operation"]}
    assert operations == {
        ("CodeSystem", "lookup"), ("CodeSystem", "validate-code"), ("CodeSystem", "subsumes"), ("ValueSet", "expand"),
        ("ValueSet", "validate-code"), ("ValueSet", "batch-validate"), ("ConceptMap", "translate"),
    }
    assert body["fhirVersion"] == "4.0.1"
    assert (body["url"], body["version"], body["name"], body["title"]) == (
        "urn:termsearch:fhir:CapabilityStatement", "0.1.0", "TermsearchCapabilityStatement", "termsearch FHIR terminology server"
    )
    assert body["implementation"] == {"description": "termsearch semantic terminology server"}  # never the Host header


def test_metadata_names_the_configured_base_url_never_the_host(built: Settings) -> None:
    settings = built.model_copy(update={"fhir": FhirSettings(base_url="https://tx.example.org/fhir")})
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        statement = resource(client.get("/fhir/metadata", headers={"Host": "evil.example"}), "CapabilityStatement")
        terminology = resource(
            client.get("/fhir/metadata", params={"mode": "terminology"}, headers={"Host": "evil.example"}),
            "TerminologyCapabilities",
        )
    assert statement["url"] == "https://tx.example.org/fhir/metadata"
    assert terminology["url"] == "https://tx.example.org/fhir/metadata?mode=terminology"
    assert statement["implementation"]["url"] == terminology["implementation"]["url"] == "https://tx.example.org/fhir"


def test_terminology_capabilities_list_systems_and_expansion_parameters(client: TestClient) -> None:
    body = resource(client.get("/fhir/metadata", params={"mode": "terminology"}), "TerminologyCapabilities")
    assert body["kind"] == "instance"  # so implementation is present (tcp-3)
    assert body["implementation"] == {"description": "termsearch semantic terminology server"}
    assert (body["url"], body["version"], body["name"]) == (
        "urn:termsearch:fhir:TerminologyCapabilities", "0.1.0", "TermsearchTerminologyCapabilities"
    )
    assert [(cs["uri"], cs["version"][0]["code"]) for cs in body["codeSystem"]] == [
        (TOY.uri, TOY.version), (TOYICD.uri, TOYICD.version)
    ]
    assert "semantic" in body["expansion"]["textFilter"].lower()


def test_unknown_metadata_mode_is_an_operation_outcome(client: TestClient) -> None:
    text = "mode: Input should be 'full', 'normative' or 'terminology'"
    outcome(client.get("/fhir/metadata", params={"mode": "everything"}), 400, "invalid", "invalid-data", text)


@pytest.mark.parametrize(
    ("group", "text"),
    [
        (None, "tx-resource: ConceptMap http://example.org/cm needs its groups"),
        ([{"source": TOY.uri, "element": "T:2"}], "tx-resource: ConceptMap http://example.org/cm.group[0].element must be a list of objects"),
        ([{"source": TOY.uri, "element": [{"code": "T:2", "target": ["R00.0"]}]}],
         "tx-resource: ConceptMap http://example.org/cm.group[0].element[0].target must be a list of objects"),
        ([{"source": TOY.uri, "element": [{"code": "T:2", "target": [{"code": 7}]}]}],
         "tx-resource: ConceptMap http://example.org/cm.group[0].element[0].target[0].code must be a string"),
    ],
)
def test_a_malformed_concept_map_is_refused_naming_the_element(client: TestClient, group: Any, text: str) -> None:
    concept_map = {"resourceType": "ConceptMap", "url": "http://example.org/cm"} | ({"group": group} if group else {})
    body = {"resourceType": "Parameters", "parameter": [
        {"name": "code", "valueCode": "T:2"}, {"name": "system", "valueUri": TOY.uri},
        {"name": "tx-resource", "resource": concept_map}]}
    outcome(client.post("/fhir/ConceptMap/$translate", json=body), 400, "invalid", "invalid-data", text)
