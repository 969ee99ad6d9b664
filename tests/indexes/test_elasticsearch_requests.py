"""The Elasticsearch backends without a cluster: the exact requests they send (mappings, bulk
lines, queries, alias switches) to a local stand-in, how they read answers, and how "cannot
answer" becomes BackendUnavailable. Ranking itself is the contract tests' job."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from indexer.bundle import Bundle
from indexer.elastic import BundleIndexes
from indexer.encoders import FakeEncoder
from indexer.lexical import Label, lexical_builder
from indexer.lexical.elasticsearch import ElasticLexicalIndex, query_body
from indexer.pipeline import BuildError, build_bundle
from indexer.remote import BackendUnavailable, WithFallback
from indexer.settings import ElasticsearchSettings, LexicalSettings, Settings, VectorSettings
from indexer.vector import build_vector_index
from indexer.vector.elasticsearch import ElasticVectorIndex, mappings
from tests.elastic_fake import FakeElasticsearch, Request

BUNDLE = "20261121T160000.000000Z-abcd1234"
LABELS_INDEX = "termsearch-labels-20261121t160000.000000z-abcd1234"
VECTORS_INDEX = "termsearch-vectors-20261121t160000.000000z-abcd1234"


@pytest.fixture
def remote(fake_es: FakeElasticsearch) -> BundleIndexes:
    return BundleIndexes.connect(ElasticsearchSettings(url=fake_es.url, replicas=1, bulk_chunk=2), BUNDLE)


def test_the_elasticsearch_backends_need_a_url() -> None:
    needs_url = r"the elasticsearch backend \(lexical and vector\) needs TERMSEARCH_ELASTICSEARCH__URL"
    with pytest.raises(ValidationError, match=needs_url):
        Settings(lexical={"backend": "elasticsearch"}, vector={"backend": "elasticsearch"}, _env_file=None)
    assert Settings(lexical={"backend": "elasticsearch"}, elasticsearch={"url": "http://es:9200"}, _env_file=None)


def test_labels_index_mapping_bulk_lines_and_manifest_entry(fake_es: FakeElasticsearch, remote, tmp_path: Path) -> None:
    labels = [Label(0, "Fast heart rate", "hpo", "HP:0001649", [0, 5]), Label(1, "Ménière disease", "hpo", "HP:1", [1])]
    labels.append(Label(2, "of the"))
    builder = lexical_builder(LexicalSettings(backend="elasticsearch", fallback_embedded=False), remote)
    entry = builder.build(tmp_path / "lexical", labels)

    assert entry == {"index": LABELS_INDEX, "alias": "termsearch-labels", "count": 3}
    assert not (tmp_path / "lexical").exists()
    assert [(r.method, r.path) for r in fake_es.requests] == [
        ("GET", "/"),
        ("PUT", f"/{LABELS_INDEX}"),
        ("PUT", f"/{LABELS_INDEX}/_bulk"),
        ("PUT", f"/{LABELS_INDEX}/_bulk"),
        ("PUT", f"/{LABELS_INDEX}/_settings"),
        ("POST", f"/{LABELS_INDEX}/_refresh"),
    ]
    create, first, second, restore = (fake_es.requests[i].body for i in (1, 2, 3, 4))
    assert create == {
        "settings": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1"},
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "label_id": {"type": "integer"},
                "system": {"type": "keyword"},
                "code": {"type": "keyword"},
                "label": {"type": "text", "analyzer": "standard"},
                "text": {"type": "text", "analyzer": "whitespace", "index_options": "freqs"},
                "prefix": {"type": "search_as_you_type", "analyzer": "whitespace"},
                "within": {"type": "integer"},
            },
        },
    }
    assert first + second == [
        {"index": {"_id": "0"}},
        {"label_id": 0, "system": "hpo", "code": "HP:0001649", "label": "Fast heart rate",
         "text": "fast heart rate", "prefix": "fast heart rate", "within": [0, 5]},
        {"index": {"_id": "1"}},
        {"label_id": 1, "system": "hpo", "code": "HP:1", "label": "Ménière disease",
         "text": "menier diseas", "prefix": "menier diseas", "within": [1]},
        {"index": {"_id": "2"}},
        {"label_id": 2, "system": "", "code": "", "label": "of the", "text": "", "prefix": "", "within": []},
    ]
    assert restore == {"number_of_replicas": 1, "refresh_interval": None}


def test_the_embedded_fallback_is_built_beside_the_cluster_index(remote, tmp_path: Path) -> None:
    builder = lexical_builder(LexicalSettings(backend="elasticsearch"), remote)
    entry = builder.build(tmp_path / "lexical", [Label(0, "Tachycardia")])
    assert entry["fallback"] == "tantivy"
    assert (tmp_path / "lexical" / "meta.json").is_file()


def test_lexical_query_bodies() -> None:
    match = {"match": {"text": {"query": "fast heart rate"}}}
    assert query_body("Fast heart rate, fast!", 10) == {
        "query": match, "size": 10, "_source": False, "track_total_hits": False
    }
    assert query_body("fast heart rate", 20_000, (2, 9)) == {
        "query": {"bool": {"must": [match], "filter": [{"range": {"label_id": {"gte": 2, "lt": 9}}}]}},
        "size": 10_000,
        "_source": False,
        "track_total_hits": False,
    }
    assert query_body("fast heart rate", 20, None, [3, 7])["query"] == {  # a subtree's labels
        "bool": {"must": [match], "filter": [{"terms": {"label_id": [3, 7]}}]}
    }
    assert query_body("fast heart rate", 20, (2, 9), within=4)["query"] == {  # a subtree by its root's row
        "bool": {"must": [match], "filter": [{"range": {"label_id": {"gte": 2, "lt": 9}}}, {"term": {"within": 4}}]}
    }
    assert query_body("of the ;;", 10) is None
    assert query_body("heart", 0) is None


def test_lexical_search_reads_label_ids_and_scores(fake_es: FakeElasticsearch, remote) -> None:
    fake_es.hits = [{"_index": "x", "_id": "7", "_score": 3.5}, {"_index": "x", "_id": "2", "_score": 1.25}]
    index = ElasticLexicalIndex(remote.client, "labels-x")
    fake_es.aliases["labels-x"] = set()
    assert index.search("heart", 5, (0, 10)) == [(7, 3.5), (2, 1.25)]
    assert fake_es.requests[-1] == Request("POST", "/labels-x/_search", query_body("heart", 5, (0, 10)))
    requests = len(fake_es.requests)
    assert index.search("the", 5) == []
    assert len(fake_es.requests) == requests  # nothing to ask
    fake_es.documents["labels-x"] = 12
    assert len(index) == 12  # counted by the cluster now (indexer verify), not taken from the manifest
    assert fake_es.requests[-1].path.startswith("/labels-x/_count")


def test_vector_mapping_bulk_lines_and_knn_query(fake_es: FakeElasticsearch, remote, tmp_path: Path) -> None:
    vectors = np.asarray([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    settings = VectorSettings(
        backend="elasticsearch", kind="hnsw", hnsw_m=16, hnsw_ef_search=64, fallback_embedded=False
    )
    index = build_vector_index(vectors, settings, remote, lineage=iter([[0], [1, 0], [2, 1, 0]]))

    assert fake_es.sent("PUT", VECTORS_INDEX)[0].body["mappings"] == {
        "dynamic": "strict",
        "properties": {
            "label_id": {"type": "integer"},
            "vector": {
                "type": "dense_vector",
                "dims": 2,
                "element_type": "float",
                "index": True,
                "similarity": "cosine",
                "index_options": {"type": "hnsw", "m": 16, "ef_construction": 200},
            },
            "within": {"type": "integer"},
        },
    }
    lines = [line for r in fake_es.sent("PUT", "_bulk") for line in r.body]
    assert lines[:4] == [
        {"index": {"_id": "0"}}, {"label_id": 0, "vector": [1.0, 0.0], "within": [0]},
        {"index": {"_id": "1"}}, {"label_id": 1, "vector": [pytest.approx(0.6), pytest.approx(0.8)], "within": [1, 0]},
    ]
    assert len(index) == 3
    assert index.keeps_lineage
    assert index.save(tmp_path) == {"index": VECTORS_INDEX, "alias": "termsearch-vectors", "count": 3, "lineage": True}
    assert list(tmp_path.iterdir()) == []

    fake_es.hits = [{"_id": "1", "_score": 0.9}, {"_id": "2", "_score": 0.5}]
    scores, ids = index.search(np.asarray([0.0, 1.0], dtype=np.float32), 2, (1, 3))
    assert fake_es.requests[-1].body == {
        "knn": {
            "field": "vector",
            "query_vector": [0.0, 1.0],
            "k": 2,
            "num_candidates": 64,
            "filter": {"range": {"label_id": {"gte": 1, "lt": 3}}},
        },
        "size": 2,
        "_source": False,
    }
    np.testing.assert_allclose(scores, [0.8, 0.0], atol=1e-6)  # (1 + cos) / 2 back to cosines
    assert ids.tolist() == [1, 2]

    index.search(np.asarray([0.0, 1.0], dtype=np.float32), 2, (1, 3), allowed=np.asarray([2], dtype=np.int64))
    assert fake_es.requests[-1].body["knn"]["filter"] == {  # a subtree's labels: filtered while searching
        "bool": {"filter": [{"range": {"label_id": {"gte": 1, "lt": 3}}}, {"terms": {"label_id": [2]}}]}
    }
    # A subtree with a root: one term on the root's row, whatever the number of its labels.
    index.search(np.asarray([0.0, 1.0], dtype=np.float32), 2, None, allowed=np.asarray([2], dtype=np.int64), within=1)
    assert fake_es.requests[-1].body["knn"]["filter"] == {"term": {"within": 1}}


def test_vectors_indexed_without_lineage_filter_a_subtree_by_its_labels(fake_es: FakeElasticsearch, remote) -> None:
    """Vectors indexed without their labels' lineage (the entry says so) are filtered by the ids."""
    index = build_vector_index(np.eye(2, dtype=np.float32), VectorSettings(backend="elasticsearch", fallback_embedded=False), remote)
    lines = [line for r in fake_es.sent("PUT", "_bulk") for line in r.body]
    assert lines[1] == {"label_id": 0, "vector": [1.0, 0.0]}
    assert not index.keeps_lineage
    fake_es.hits = []
    index.search(np.asarray([0.0, 1.0], dtype=np.float32), 2, None, allowed=np.asarray([1], dtype=np.int64), within=1)
    assert fake_es.requests[-1].body["knn"]["filter"] == {"terms": {"label_id": [1]}}


@pytest.mark.parametrize(
    ("kind", "quantize", "options"),
    [
        ("auto", "int8", {"type": "int8_hnsw", "m": 32, "ef_construction": 200, "rescore_vector": {"oversample": 3.0}}),
        ("hnsw", "bbq", {"type": "bbq_hnsw", "m": 32, "ef_construction": 200, "rescore_vector": {"oversample": 3.0}}),
        ("flat", "int8", {"type": "int8_flat", "rescore_vector": {"oversample": 3.0}}),
        ("auto", "none", {"type": "hnsw", "m": 32, "ef_construction": 200}),
    ],
)
def test_quantised_vectors_are_rescored_from_the_floats(kind: str, quantize: str, options: dict) -> None:
    """int8 keeps a quarter of the float vectors' memory, bbq 1/32 (UMLS-sized bundles); the
    cluster re-scores ``oversample`` times the candidates asked from the floats."""
    settings = VectorSettings(backend="elasticsearch", kind=kind, quantize=quantize)
    assert mappings(384, settings)["properties"]["vector"]["index_options"] == options


def test_quantisation_and_ivfpq_belong_to_their_own_backends() -> None:
    with pytest.raises(ValueError, match="kind ivfpq is a FAISS index"):
        VectorSettings(backend="elasticsearch", kind="ivfpq")
    with pytest.raises(ValueError, match="quantize applies to the elasticsearch backend"):
        VectorSettings(backend="faiss", quantize="int8")


def test_flat_vectors_are_searched_exactly_and_keep_an_embedded_copy(fake_es, remote, tmp_path: Path) -> None:
    vectors = np.eye(3, dtype=np.float32)
    index = build_vector_index(vectors, VectorSettings(backend="elasticsearch", kind="flat"), remote)
    assert fake_es.sent("PUT", VECTORS_INDEX)[0].body["mappings"]["properties"]["vector"]["index_options"] == {
        "type": "flat"
    }
    entry = index.save(tmp_path)
    assert entry == {
        "index": VECTORS_INDEX, "alias": "termsearch-vectors", "count": 3, "lineage": False, "fallback": "numpy-flat"
    }
    assert (tmp_path / "vectors.npy").is_file()
    fake_es.hits = []
    index.search(vectors[0], 7)
    assert fake_es.requests[-1].body["knn"]["num_candidates"] == 7


def test_publish_switches_aliases_in_one_call_and_deletes_unrecorded_indexes(fake_es, remote) -> None:
    fake_es.aliases.update({
        "termsearch-labels-old1": {"termsearch-labels"},
        "termsearch-labels-old0": set(),
        "termsearch-vectors-old1": {"termsearch-vectors"},
        "someone-elses-index": {"termsearch-labels-x"},
    })
    remote.load("labels", {"properties": {}}, [])
    remote.publish(keep={"termsearch-labels-old1", LABELS_INDEX})

    (switch,) = fake_es.sent("POST", "/_aliases")
    assert switch.body == {"actions": [
        {"remove": {"index": "termsearch-labels-old1", "alias": "termsearch-labels"}},
        {"add": {"index": LABELS_INDEX, "alias": "termsearch-labels"}},
    ]}
    assert fake_es.sent("GET", "/_alias")[0].path == "/termsearch-labels-*,termsearch-vectors-*/_alias"
    assert [r.path for r in fake_es.sent("DELETE")] == ["/termsearch-labels-old0,termsearch-vectors-old1"]
    assert fake_es.aliases == {
        "termsearch-labels-old1": set(),
        LABELS_INDEX: {"termsearch-labels"},
        "someone-elses-index": {"termsearch-labels-x"},
    }


def test_a_build_refuses_a_server_of_another_major_version_or_none(fake_es, settings, toy_reader) -> None:
    settings = settings.model_copy(update={
        "lexical": LexicalSettings(backend="elasticsearch"), "elasticsearch": ElasticsearchSettings(url=fake_es.url)
    })
    fake_es.version = "8.19.0"
    with pytest.raises(BuildError, match=r"server 8\.19\.0 and Python client 9\.\S+ differ in major version"):
        build_bundle(settings, toy_reader, FakeEncoder(32), ["toy"], show_progress=False)
    fake_es.stop()
    with pytest.raises(BuildError, match=r"cannot build the Elasticsearch indexes: Elasticsearch is unreachable"):
        build_bundle(settings, toy_reader, FakeEncoder(32), ["toy"], show_progress=False)


def test_a_cluster_that_cannot_answer_raises_backend_unavailable(fake_es: FakeElasticsearch, remote) -> None:
    index = ElasticLexicalIndex(remote.client, "missing")
    with pytest.raises(BackendUnavailable, match=r"index missing: Elasticsearch answered 404"):
        index.search("heart", 3)
    with pytest.raises(BackendUnavailable, match="index missing: not in Elasticsearch"):
        index.ping()
    fake_es.stop()
    with pytest.raises(BackendUnavailable, match=r"index missing: Elasticsearch is unreachable \(ConnectionError\)"):
        index.search("heart", 3)
    vectors = ElasticVectorIndex(remote.client, {"index": "v", "alias": "a", "count": 1, "kind": "flat"}, 10)
    with pytest.raises(BackendUnavailable, match="unreachable"):
        vectors.search(np.ones(2, np.float32), 3)


class _Primary:
    backend = "elasticsearch"

    def __init__(self) -> None:
        self.calls = 0
        self.down = True

    def search(self, query: str, k: int, id_range=None) -> list[tuple[int, float]]:
        self.calls += 1
        if self.down:
            raise BackendUnavailable("index x: Elasticsearch is unreachable (ConnectionError)")
        return [(1, 2.0)]


class _Embedded:
    backend = "tantivy"

    def search(self, query: str, k: int, id_range=None) -> list[tuple[int, float]]:
        return [(9, 1.0)]


def test_fallback_answers_while_the_primary_is_down_and_rechecks_later(monkeypatch, caplog) -> None:
    now = [100.0]
    monkeypatch.setattr("indexer.remote.time.monotonic", lambda: now[0])
    primary = _Primary()
    index = WithFallback(primary, _Embedded(), recheck_seconds=5)
    assert index.search("q", 3) == [(9, 1.0)]
    assert index.search("q", 3) == [(9, 1.0)]
    assert primary.calls == 1  # not asked again within recheck_seconds
    assert "answering from the embedded tantivy index" in caplog.text
    now[0] += 6
    primary.down = False
    assert index.search("q", 3) == [(1, 2.0)]
    assert primary.calls == 2


def test_a_build_records_its_indexes_and_the_next_builds_retire_the_old_ones(fake_es, settings, toy_reader) -> None:
    settings = settings.model_copy(update={
        "lexical": LexicalSettings(backend="elasticsearch"),
        "vector": VectorSettings(backend="elasticsearch"),
        "elasticsearch": ElasticsearchSettings(url=fake_es.url),
    })
    built = [build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], force=True, show_progress=False)
             for _ in range(3)]
    manifest = Bundle(built[-1].directory, settings).manifest
    labels, vectors = (f"termsearch-{role}-{built[-1].bundle_id.lower()}" for role in ("labels", "vectors"))
    assert manifest.lexical.model_dump() == {
        "backend": "elasticsearch", "index": labels, "alias": "termsearch-labels", "count": manifest.counts.labels,
        "fallback": "tantivy",
    }
    assert manifest.vector.index == vectors and manifest.vector.fallback == "numpy-flat"
    # Each label's vector document holds the lineage its lexical document holds.
    documents = {role: {} for role in (labels, vectors)}
    for request in fake_es.sent("PUT", "_bulk"):
        role = request.path.split("/")[1]
        for action, document in zip(request.body[::2], request.body[1::2], strict=True):
            documents.get(role, {})[action["index"]["_id"]] = document["within"]
    assert manifest.vector.lineage is True
    assert documents[vectors] == documents[labels] and len(documents[vectors]) == manifest.counts.labels
    assert any(len(within) > 1 for within in documents[vectors].values())
    # The current and the previous bundle's indexes remain (the bundles on disk); the first's are gone.
    previous = built[1].bundle_id.lower()
    assert fake_es.aliases == {
        f"termsearch-labels-{previous}": set(),
        f"termsearch-vectors-{previous}": set(),
        labels: {"termsearch-labels"},
        vectors: {"termsearch-vectors"},
    }
    first = built[0].bundle_id.lower()
    assert [r.path for r in fake_es.sent("DELETE")] == [f"/termsearch-labels-{first},termsearch-vectors-{first}"]
