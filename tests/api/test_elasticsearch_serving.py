"""Serving a bundle whose indexes live in Elasticsearch: answers from the cluster, from the
embedded fallback while it is unreachable, or a 503 problem without one; /ready says which."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from indexer.encoders import FakeEncoder
from indexer.pipeline import build_bundle
from indexer.settings import ElasticsearchSettings, LexicalSettings, VectorSettings
from indexer.store import StoreReader
from tests.elastic_fake import FakeElasticsearch


@pytest.fixture
def elastic(settings: Settings, toy_reader: StoreReader, fake_es: FakeElasticsearch) -> Settings:
    """Settings whose current bundle has both indexes in the stand-in cluster, with embedded copies."""
    settings = settings.model_copy(update={
        "lexical": LexicalSettings(backend="elasticsearch"),
        "vector": VectorSettings(backend="elasticsearch"),
        "elasticsearch": ElasticsearchSettings(url=fake_es.url, recheck_seconds=0),
    })
    build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False)
    return settings


def _serve(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, encoder=FakeEncoder(32))) as client:
        yield client


@pytest.fixture
def client(elastic: Settings) -> Iterator[TestClient]:
    yield from _serve(elastic)


@pytest.fixture
def client_without_fallback(elastic: Settings) -> Iterator[TestClient]:
    """The same bundle, served with its embedded copies unwanted."""
    off = {"fallback_embedded": False}
    yield from _serve(elastic.model_copy(update={
        "lexical": elastic.lexical.model_copy(update=off), "vector": elastic.vector.model_copy(update=off)
    }))


def _search(client: TestClient, mode: str, q: str = "fast heart rate") -> httpx.Response:
    return client.get("/search", params={"q": q, "system": "toy", "mode": mode})


def test_lexical_answers_come_from_the_cluster(client: TestClient, fake_es: FakeElasticsearch) -> None:
    bundle = client.app.state.service.bundle
    slow = bundle.label_text.index("Slow heart rate")
    fake_es.hits = [{"_id": str(slow), "_score": 4.0}]
    body = _search(client, "lexical").json()
    assert [(r["code"], r["matched_term"], r["score"]) for r in body["results"]] == [("T:3", "Slow heart rate", 4.0)]
    sent = fake_es.requests[-1]
    toy = bundle.systems["toy"]
    assert sent.path == f"/{bundle.manifest.lexical.index}/_search"
    assert sent.body["query"]["bool"]["filter"] == [{"range": {"label_id": {"gte": toy.start, "lt": toy.active_stop}}}]
    ready = client.get("/ready").json()
    assert (ready["ready"], ready["degraded"]) == (True, False)
    assert ready["checks"]["lexical"] == {"backend": "elasticsearch", "up": True, "fallback": "tantivy"}
    assert ready["checks"]["vector"] == {"backend": "elasticsearch", "up": True, "fallback": "numpy-flat"}


def test_a_subtree_is_one_lineage_term_in_both_searches(
    client: TestClient, fake_es: FakeElasticsearch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kNN and BM25 keep to the subtree inside the cluster, by its root's catalog row, not by ids
    (which are then never worked out: at UMLS size a subtree can hold millions of labels)."""
    bundle = client.app.state.service.bundle
    listed: list[object] = []
    monkeypatch.setattr(bundle, "labels_admitted", lambda mask: listed.append(mask))
    fast = bundle.label_text.index("Fast heart rate")
    fake_es.hits = [{"_id": str(fast), "_score": 0.9}]
    response = client.get("/search", params={"q": "heart racing", "system": "toy", "ancestor": "T:1", "mode": "hybrid"})
    assert response.status_code == 200
    assert response.json()["results"][0]["code"] == "T:2"
    root = bundle.rows_by_code("T:1")[0]
    sent = fake_es.sent("POST", "_search")
    knn = [r.body["knn"] for r in sent if r.path == f"/{bundle.manifest.vector.index}/_search"]
    bm25 = [r.body["query"] for r in sent if r.path == f"/{bundle.manifest.lexical.index}/_search"]
    # The dense channel's search (the ranking core then asks for its candidates' cosines, unfiltered).
    assert {"term": {"within": root}} in knn[0]["filter"]["bool"]["filter"]
    assert {"term": {"within": root}} in bm25[0]["bool"]["filter"]
    assert listed == []


def test_both_indexes_hold_each_labels_lineage(client: TestClient, fake_es: FakeElasticsearch) -> None:
    """Both indexes hold each label's lineage: its concept and all its ancestors, as catalog rows."""
    bundle = client.app.state.service.bundle
    label = bundle.label_text.index("Fast heart rate")
    row = int(bundle.label_concept[label])
    expected = sorted({row, *bundle.rows_by_code("T:1"), *bundle.concepts.parents.closure(np.asarray([row]))[0].tolist()})
    for role in ("vector", "lexical"):
        index = bundle.manifest.indexes[role].index
        documents = [line for r in fake_es.sent("PUT", "_bulk") if index in r.path for line in r.body[1::2]]
        assert len(documents) == len(bundle.label_text)
        assert next(d["within"] for d in documents if d["label_id"] == label) == expected


@pytest.mark.parametrize("mode", ["lexical", "dense", "hybrid"])
def test_unreachable_cluster_falls_back_to_the_embedded_indexes(client, fake_es, mode: str) -> None:
    fake_es.stop()
    response = _search(client, mode)
    assert response.status_code == 200
    first = response.json()["results"][0]
    assert (first["code"], first["matched_term"]) == ("T:2", "Fast heart rate")


def test_ready_reports_the_cluster_down_and_the_fallback_serving(client, fake_es) -> None:
    fake_es.stop()
    response = client.get("/ready")
    assert response.status_code == 200
    body = response.json()
    assert (body["ready"], body["degraded"]) == (True, True)
    index = client.app.state.service.bundle.manifest.lexical.index
    assert body["checks"]["lexical"] == {
        "backend": "elasticsearch",
        "up": False,
        "error": f"index {index}: Elasticsearch is unreachable (ConnectionError)",
        "fallback": "tantivy",
    }
    assert body["checks"]["vector"]["up"] is False
    assert body["checks"]["store"] == {"up": True}


def test_without_fallback_an_unreachable_cluster_is_a_503_problem(client_without_fallback, fake_es) -> None:
    fake_es.stop()
    manifest = client_without_fallback.app.state.service.bundle.manifest
    for mode, role in (("lexical", "lexical"), ("dense", "vector"), ("hybrid", "vector")):
        response = _search(client_without_fallback, mode)
        assert response.status_code == 503
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json() == {
            "type": "/problems/backend-unavailable",
            "title": "Search backend unavailable",
            "status": 503,
            "detail": f"index {manifest.indexes[role].index}: Elasticsearch is unreachable (ConnectionError)",
        }
    ready = client_without_fallback.get("/ready")
    assert ready.status_code == 503
    assert ready.json()["ready"] is False
    assert "fallback" not in ready.json()["checks"]["lexical"]


def test_a_bundle_in_elasticsearch_needs_the_url_to_be_served(elastic: Settings) -> None:
    unconfigured = elastic.model_copy(update={"elasticsearch": ElasticsearchSettings()})
    with TestClient(create_app(unconfigured, encoder=FakeEncoder(32))) as client:
        ready = client.get("/ready").json()
    assert ready["checks"]["bundle"]["up"] is False
    assert ready["checks"]["bundle"]["error"].endswith(
        "its lexical and vector index is in Elasticsearch; set TERMSEARCH_ELASTICSEARCH__URL"
    )
