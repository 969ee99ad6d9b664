"""POST /match over the toy bundle: scores against an independent computation, subtrees, the
JSON, SSSOM (validated by sssom-py) and FHIR ConceptMap (validated by fhir.resources R4B)
answers, and every error body."""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Iterator

import numpy as np
import pytest
from fastapi.testclient import TestClient
from fhir.resources.R4B.conceptmap import ConceptMap
from sssom.parsers import parse_sssom_table
from sssom.util import MappingSetDataFrame
from sssom.validators import validate

from app.main import create_app
from app.matching.matcher import Matcher, token_sort_similarity
from app.matching.request import MatchMode, Source, Target
from app.settings import MatchSettings, Settings
from indexer.encoders import FakeEncoder
from tests.toy import toy_concepts

TSV = "text/tab-separated-values"
FHIR = "application/fhir+json"
SOURCES = [
    {"id": "L1", "labels": ["fast heart beat", "racing pulse"]},
    {"id": "L2", "labels": ["hearing loss"]},
    {"id": "L3", "labels": ["zzzz qqqq"]},  # like nothing in the toy systems
]
ACTIVE_TOY = {c.code: c.labels() for c in toy_concepts() if c.active}


def _match(client: TestClient, accept: str = "application/json", **body: object) -> dict | str:
    response = client.post("/match", json=body, headers={"accept": accept})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(accept)
    return response.text if accept == TSV else response.json()


def _sssom(tsv: str, caplog: pytest.LogCaptureFixture) -> MappingSetDataFrame:
    """Read by sssom-py and validated: JSON schema, complete prefix map, strict CURIEs, and no
    non-standard metadata or redefined built-in prefix (sssom-py 0.4.21's ``strict=True``
    inverts its metadata check, so its warnings are read from the log instead). The one warning
    allowed: sssom-py 0.4.21 keeps no extension slot (``rank``, declared in
    ``extension_definitions`` as SSSOM 1.0 asks) when it builds its mapping objects."""
    with caplog.at_level(logging.WARNING):
        msdf = parse_sssom_table(io.StringIO(tsv), propagate=False)
        validate(msdf, fail_on_error=True)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert all(w.startswith("No attr for rank [") for w in warnings), warnings
    assert msdf.metadata["extension_definitions"][0]["slot_name"] == "rank"
    return msdf


def _table(tsv: str) -> list[dict[str, str]]:
    """The SSSOM/TSV's rows as written, every column kept."""
    return list(csv.DictReader((line for line in tsv.splitlines() if not line.startswith("#")), delimiter="\t"))


def _cosine_best(labels: list[str], codes: dict[str, list[str]]) -> dict[str, tuple[float, str, str]]:
    """Independently: each target concept's best (cosine, source label, target label)."""
    encoder = FakeEncoder(32)
    best = {}
    for code, targets in codes.items():
        scores = encoder.encode(labels) @ encoder.encode(targets).T
        i, j = np.unravel_index(int(np.argmax(scores)), scores.shape)
        best[code] = (float(scores[i, j]), labels[i], targets[j])
    return best


def test_hybrid_candidates_come_in_confidence_order_as_search_gives_them(client: TestClient) -> None:
    body = _match(client, target_system="toy", concepts=SOURCES, k=3)
    assert body["mode"] == "hybrid"
    for source, result in zip(SOURCES, body["results"], strict=True):
        scores = [c["score"] for c in result["candidates"]]
        assert scores == pytest.approx([c["confidence"] for c in result["candidates"]], abs=1e-4)
        assert scores == sorted(scores, reverse=True)
        searched = client.get("/search", params={"q": source["labels"][0], "system": "toy", "k": 3}).json()["results"]
        assert result["candidates"][0]["code"] == searched[0]["code"] or len(source["labels"]) > 1


def test_dense_candidates_are_the_best_label_pairs(client: TestClient) -> None:
    body = _match(client, target_system="toy", concepts=SOURCES, k=3, mode="dense")
    assert (body["mode"], body["target"]["key"], body["sources"], body["k"]) == ("dense", "toy", 3, 3)
    assert body["model_id"] == "fake-hash-32" and body["bundle_id"]
    assert [r["id"] for r in body["results"]] == ["L1", "L2", "L3"]
    for source, result in zip(SOURCES, body["results"], strict=True):
        expected = _cosine_best(source["labels"], ACTIVE_TOY)
        ranked = sorted(expected, key=lambda code: -expected[code][0])[:3]
        assert [c["code"] for c in result["candidates"]] == ranked
        for candidate in result["candidates"]:
            score, source_term, matched_term = expected[candidate["code"]]
            assert candidate["score"] == pytest.approx(max(score, 0.0), abs=1e-6)
            assert (candidate["source_term"], candidate["matched_term"]) == (source_term, matched_term)
        assert result["label"] == source["labels"][0]
    assert body["results"][0]["candidates"][0]["code"] == "T:2"
    assert body["results"][1]["candidates"][0]["code"] == "T:4"


def test_min_score_leaves_weak_candidates_out(client: TestClient) -> None:
    body = _match(client, target_system="toy", concepts=SOURCES, k=5, min_score=0.5, mode="dense")
    assert all(c["score"] >= 0.5 for r in body["results"] for c in r["candidates"])
    assert body["results"][2]["candidates"] == [] and body["matched"] == 2


def test_min_confidence_leaves_out_candidates_the_core_doubts(client: TestClient) -> None:
    every = _match(client, target_system="toy", concepts=SOURCES, k=5, mode="dense")
    threshold = sorted(c["confidence"] for r in every["results"] for c in r["candidates"])[-3] - 5e-5  # shown rounded
    body = _match(client, target_system="toy", concepts=SOURCES, k=5, min_confidence=threshold, mode="dense")
    kept = [c for r in body["results"] for c in r["candidates"]]
    assert len(kept) == 3 and all(c["confidence"] >= threshold for c in kept)
    response = client.post("/match", json={"target_system": "toy", "concepts": SOURCES, "min_confidence": 1.5})
    assert response.status_code == 422 and "min_confidence" in response.text


def test_lexical_scores_are_token_sort_similarities(client: TestClient) -> None:
    body = _match(client, target_system="toy", concepts=SOURCES, k=3, mode="lexical")
    first = body["results"][0]["candidates"]
    assert first[0]["code"] == "T:2"
    for result in body["results"]:
        for candidate in result["candidates"]:
            assert candidate["score"] == pytest.approx(token_sort_similarity(candidate["source_term"], candidate["matched_term"]))
        scores = [c["score"] for c in result["candidates"]]
        assert scores == sorted(scores, reverse=True)
    assert body["results"][2]["candidates"] == []  # BM25 finds no shared word


def test_matrix_path_equals_label_by_label_search(client: TestClient) -> None:
    """The batched matrix product (numpy backend) and the per-label path (other backends) agree."""
    service = client.app.state.service
    sources = [Source(s["id"], tuple(s["labels"])) for s in SOURCES]
    target = Target("toy", None)
    batched = Matcher(service).match(sources, target, 4, 0.0, MatchMode.DENSE)

    class NoMatrix:  # a vector backend that can only search
        def __init__(self, inner: object) -> None:
            self.search = inner.search  # type: ignore[attr-defined]

    vectors = service.bundle.vectors
    service.bundle.vectors = NoMatrix(vectors)
    try:
        by_label = Matcher(service).match(sources, target, 4, 0.0, MatchMode.DENSE)
    finally:
        service.bundle.vectors = vectors
    for a, b in zip(batched, by_label, strict=True):
        assert [c.code for c in a.candidates] == [c.code for c in b.candidates]
        assert [c.score for c in a.candidates] == pytest.approx([c.score for c in b.candidates], abs=1e-6)


def test_whole_system_source_never_matches_itself(client: TestClient) -> None:
    body = _match(client, target_system="toy", source_system="toy", k=3)
    ids = [r["id"] for r in body["results"]]
    assert ids == [code for code in ACTIVE_TOY]  # every active concept, catalog order
    for result in body["results"]:
        assert result["id"] not in [c["code"] for c in result["candidates"]]
        assert len(result["candidates"]) == 3


def test_a_target_that_states_billability_is_matched_to_billable_codes_unless_asked(client: TestClient) -> None:
    """I21 (a category, not billable) is never a candidate in toyicd by default; its billable
    child I21.0 is. With billable_only false every code may be; HPO-like targets state nothing."""
    sources = [{"id": "L1", "labels": ["acute myocardial infarction"]}]
    default = _match(client, target_system="toyicd", concepts=sources, k=10)
    codes = {c["code"] for c in default["results"][0]["candidates"]}
    assert "I21" not in codes and "I21.0" in codes
    assert all(c["billable"] for c in default["results"][0]["candidates"])
    every = _match(client, target_system="toyicd", concepts=sources, k=10, billable_only=False)
    assert "I21" in {c["code"] for c in every["results"][0]["candidates"]}
    toy = _match(client, target_system="toy", concepts=sources, k=3)
    assert len(toy["results"][0]["candidates"]) == 3


def test_subtrees_on_both_sides(client: TestClient) -> None:
    body = _match(client, target_system="toy", target_ancestor="T:1", source_system="toyicd", source_ancestor="I21", k=10)
    assert [r["id"] for r in body["results"]] == ["I21", "I21.0"]
    cardiovascular = {"T:1", "T:2", "T:3", "T:7"}
    for result in body["results"]:
        assert {c["code"] for c in result["candidates"]} == cardiovascular  # the whole subtree, nothing else
    lexical = _match(client, target_system="toy", target_ancestor="T:5", concepts=SOURCES, mode="lexical", k=10)
    assert {c["code"] for r in lexical["results"] for c in r["candidates"]} <= {"T:5", "T:4"}


def test_sssom_is_valid_and_carries_every_source(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    for mode, justification in (("dense", "semapv:SemanticSimilarityThresholdMatching"), ("lexical", "semapv:LexicalMatching")):
        tsv = _match(client, TSV, target_system="toy", concepts=SOURCES, k=2, min_score=0.3, mode=mode)
        as_json = _match(client, target_system="toy", concepts=SOURCES, k=2, min_score=0.3, mode=mode)
        msdf = _sssom(tsv, caplog)
        assert msdf.metadata["mapping_tool"] == "termsearch" and msdf.metadata["mapping_tool_version"]
        df = msdf.df
        assert set(df["mapping_justification"]) == {justification}
        expected = {
            (f"local:{r['id']}", f"T:{c['code'].split(':')[1]}", c["rank"], round(c["confidence"], 6), round(c["score"], 6))
            for r in as_json["results"]
            for c in r["candidates"]
        }
        # sssom-py drops the extension slot and the empty reviewer columns: read the table itself too
        table = [row for row in _table(tsv) if row["object_id"] != "sssom:NoTermFound"]
        columns = ((r["subject_id"], r["object_id"], r["rank"], r["confidence"], r["similarity_score"]) for r in table)
        assert {(s, o, int(r), round(float(c), 6), round(float(x), 6)) for s, o, r, c, x in columns} == expected
        found = df[df["object_id"] != "sssom:NoTermFound"]
        assert found["confidence"].between(0, 1).all() and found["similarity_score"].between(0, 1).all()
        # Only a confident top candidate is asserted; the others are candidates for review.
        for row in table:
            close = row["rank"] == "1" and float(row["confidence"]) >= Settings().search.confidence_threshold
            assert row["predicate_id"] == ("skos:closeMatch" if close else "skos:relatedMatch")
            assert row["reviewer_id"] == row["reviewer_label"] == ""
        empty = {f"local:{r['id']}" for r in as_json["results"] if not r["candidates"]}
        assert "local:L3" in empty
        assert set(df.loc[df["object_id"] == "sssom:NoTermFound", "subject_id"]) == empty
        assert msdf.converter.expand("local:L1") == "urn:termsearch:local:L1"
        assert msdf.converter.expand("T:2") == "http://purl.obolibrary.org/obo/T_2"


def test_sssom_of_a_whole_system_uses_its_curies(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    tsv = _match(client, TSV, target_system="toy", source_system="toyicd", k=1)
    msdf = _sssom(tsv, caplog)
    assert set(msdf.df["subject_id"]) == {"TOYICD:I00-I99", "TOYICD:I10", "TOYICD:I21", "TOYICD:I21.0", "TOYICD:R00.0"}
    assert msdf.converter.expand("TOYICD:I10") == "http://example.org/toyicd/I10"
    assert msdf.metadata["subject_source_version"] == "2026"


def test_conceptmap_is_valid_fhir(client: TestClient) -> None:
    response = client.post(
        "/match", json={"target_system": "toyicd", "concepts": SOURCES, "k": 2, "min_score": 0.4}, headers={"accept": FHIR}
    )
    assert response.status_code == 200 and response.headers["content-type"] == FHIR
    resource = ConceptMap.model_validate(response.json())
    as_json = _match(client, target_system="toyicd", concepts=SOURCES, k=2, min_score=0.4)
    (group,) = resource.group
    assert (group.source, group.target) == ("urn:termsearch:local:", "http://example.org/toyicd")
    for element, result in zip(group.element, as_json["results"], strict=True):
        assert element.code == result["id"]
        if result["candidates"]:
            assert [t.code for t in element.target] == [c["code"] for c in result["candidates"]]
            assert {t.equivalence for t in element.target} == {"relatedto"}
            assert [float(t.extension[0].valueDecimal) for t in element.target] == pytest.approx([c["score"] for c in result["candidates"]], abs=1e-6)
        else:
            assert [(t.code, t.equivalence) for t in element.target] == [(None, "unmatched")]
    assert any(not r["candidates"] for r in as_json["results"])


@pytest.fixture
def small_limits(built: Settings) -> Iterator[TestClient]:
    built.match = MatchSettings(max_sync_sources=2, max_job_sources=3, max_labels_per_source=2, max_k=6)
    with TestClient(create_app(built, encoder=FakeEncoder(32))) as client:
        yield client


def _problem(detail: str, param: str) -> dict:
    return {"type": "/problems/invalid-parameter", "title": "Invalid parameter", "status": 422, "detail": detail, "param": param}


ONE = [{"id": "a", "labels": ["heart"]}]


@pytest.mark.parametrize(
    ("body", "detail", "param"),
    [
        ({"target_system": "nope", "concepts": ONE}, "target_system: unknown code system 'nope'; loaded: toy, toyicd", "target_system"),
        ({"target_system": "toy", "source_system": "nope"}, "source_system: unknown code system 'nope'; loaded: toy, toyicd", "source_system"),
        ({"target_system": "toy", "target_ancestor": "T:99", "concepts": ONE}, "target_ancestor: 'T:99' is not a code of toy 2025-01-16", "target_ancestor"),
        ({"target_system": "toy", "source_system": "toyicd", "source_ancestor": "T:1"}, "source_ancestor: 'T:1' is not a code of toyicd 2026", "source_ancestor"),
        ({"target_system": "toy"}, "concepts: give either concepts or source_system", "concepts"),
        ({"target_system": "toy", "concepts": ONE, "source_system": "toyicd"}, "concepts: give either concepts or source_system", "concepts"),
        ({"target_system": "toy", "concepts": []}, "concepts: must not be empty", "concepts"),
        ({"target_system": "toy", "concepts": [{"id": "a", "labels": []}]}, "concepts.0.labels: must not be empty", "concepts.0.labels"),
        ({"target_system": "toy", "concepts": [*ONE, {"id": "b", "labels": ["x", " "]}]}, "concepts.1.labels.1: must not be empty", "concepts.1.labels.1"),
        ({"target_system": "toy", "concepts": [{"id": "a", "labels": ["x", "y", "z"]}]}, "concepts.0.labels: more than 2 labels (3)", "concepts.0.labels"),
        ({"target_system": "toy", "concepts": [*ONE, *ONE]}, "concepts.1.id: duplicate id 'a'", "concepts.1.id"),
        ({"target_system": "toy", "concepts": [{"id": " ", "labels": ["x"]}]}, "concepts.0.id: must not be empty", "concepts.0.id"),
        ({"target_system": "toy", "concepts": ONE, "k": 7}, "k: must be between 1 and 6 (got 7)", "k"),
        ({"target_system": "toy", "concepts": ONE, "min_score": 1.5}, "min_score: must be between 0 and 1 (got 1.5)", "min_score"),
        ({"target_system": "toy", "concepts": ONE, "mode": "fused"}, "mode: Input should be 'hybrid', 'dense' or 'lexical'", "mode"),
        (
            {"target_system": "toy", "concepts": [{"id": str(i), "labels": ["x"]} for i in range(3)]},
            "concepts: 3 sources, more than 2 (larger batches run as a job: POST /match/jobs)",
            "concepts",
        ),
        (
            {"target_system": "toy", "source_system": "toyicd"},
            "source_system: 5 sources, more than 2 (larger batches run as a job: POST /match/jobs)",
            "source_system",
        ),
    ],
)
def test_bad_requests_get_a_problem(small_limits: TestClient, body: dict, detail: str, param: str) -> None:
    response = small_limits.post("/match", json=body)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == _problem(detail, param)


def test_a_job_over_its_limit_is_refused(small_limits: TestClient) -> None:
    response = small_limits.post("/match/jobs", json={"target_system": "toy", "source_system": "toyicd"})
    assert response.status_code == 422
    assert response.json() == _problem("source_system: 5 sources, more than 3", "source_system")


def test_no_tabular_cell_runs_as_a_spreadsheet_formula(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    """Ids and labels that start as a formula (=, +, -, @) are written with a leading quote
    (OWASP's advice on CSV injection), in SSSOM/TSV as in the review sheet."""
    hostile = [{"id": "=HYPERLINK(\"http://x\")", "labels": ["@SUM(1+1) fast heart rate"]}, {"id": "-2+3", "labels": ["+hearing loss"]}]
    tsv = _match(client, TSV, target_system="toy", concepts=hostile, k=1)
    rows = [line.split("\t") for line in tsv.splitlines() if not line.startswith("#")]
    cells = [cell for row in rows for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    assert "'@SUM(1+1) fast heart rate" in cells and "'+hearing loss" in cells


def test_safe_cell() -> None:
    from app.matching.cells import safe_cell

    assert [safe_cell(v) for v in ("=1+1", "+1", "-1", "@x", "\tx", "\rx", "fast", "")] == [
        "'=1+1", "'+1", "'-1", "'@x", "'\tx", "'\rx", "fast", "",
    ]  # fmt: skip
