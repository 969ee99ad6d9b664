"""One contract, every vector backend: exact answers match brute force, ranges and given labels
filter while searching, files round-trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.settings import Settings, VectorSettings
from indexer.vector import build_vector_index, open_vector_index
from tests.indexes.cluster import needs_elasticsearch

BACKENDS = {
    "numpy-flat": VectorSettings(backend="numpy"),
    "faiss-flat": VectorSettings(backend="faiss", kind="flat"),
    "faiss-hnsw": VectorSettings(backend="faiss", kind="hnsw", hnsw_exact_below=100),
    # Random vectors in 24 dimensions have no clusters to find and code coarsely (6 bytes): here
    # probes all 51 lists and re-ranks all they hold from its float16 copy, so that the contract checks
    # its filters and files; how much it finds of real vectors is tests/indexes/test_recall.py's.
    "faiss-ivfpq": VectorSettings(backend="faiss", kind="ivfpq", hnsw_exact_below=100, ivf_nprobe=51, ivf_rerank=2000),
    # Exact kNN, without the embedded fallback, so that every answer comes from the cluster.
    "elasticsearch": VectorSettings(backend="elasticsearch", kind="flat", fallback_embedded=False),
}


# IVF-PQ scores from float16 vectors: labels whose scores differ by less may swap places.
TOLERANCE = {backend: 1e-3 if backend == "faiss-ivfpq" else 1e-5 for backend in BACKENDS}


def _assert_ranked_as(vectors: np.ndarray, query: np.ndarray, ids: np.ndarray, scores: np.ndarray,
                      expected: np.ndarray, tolerance: float) -> None:
    """``ids`` are the labels ``expected`` lists, in its order, but for labels whose exact scores
    differ by less than ``tolerance``; ``scores`` are their scores."""
    exact = vectors @ query
    assert len(ids) == len(expected)
    np.testing.assert_allclose(exact[ids], exact[expected], atol=tolerance)
    np.testing.assert_allclose(scores, exact[ids], atol=tolerance)
    assert {int(i) for i in ids if exact[i] > exact[expected[-1]] + tolerance} <= {int(i) for i in expected}


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(2000, 24)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _brute_force(vectors: np.ndarray, query: np.ndarray, k: int, start: int = 0, stop: int | None = None):
    stop = len(vectors) if stop is None else stop
    scores = vectors[start:stop] @ query
    order = np.argsort(-scores, kind="stable")[:k]
    return scores[order], order + start


@pytest.fixture(params=[b if b != "elasticsearch" else pytest.param(b, marks=needs_elasticsearch) for b in BACKENDS])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def index_settings(backend: str, request: pytest.FixtureRequest) -> Settings:
    settings = Settings(vector=BACKENDS[backend], _env_file=None)
    if backend == "elasticsearch":
        settings = settings.model_copy(update={"elasticsearch": request.getfixturevalue("elastic_indexes").settings})
    return settings


@pytest.fixture
def build(backend: str, request: pytest.FixtureRequest):  # noqa: ANN201
    remote = request.getfixturevalue("elastic_indexes") if backend == "elasticsearch" else None
    return lambda vectors, lineage=None: build_vector_index(vectors, BACKENDS[backend], remote, lineage=lineage)


def test_top_k_matches_brute_force(backend: str, build, vectors: np.ndarray) -> None:
    index = build(vectors)
    assert index.backend == backend
    assert len(index) == 2000
    for row in (0, 17, 1999):
        scores, ids = index.search(vectors[row], 10)
        expected_scores, expected_ids = _brute_force(vectors, vectors[row], 10)
        assert ids[0] == row
        _assert_ranked_as(vectors, vectors[row], ids, scores, expected_ids, TOLERANCE[backend])


def test_id_range_restricts_results(backend: str, build, vectors: np.ndarray) -> None:
    index = build(vectors)
    scores, ids = index.search(vectors[5], 20, (1000, 1500))
    assert all(1000 <= i < 1500 for i in ids)
    expected = _brute_force(vectors, vectors[5], 20, 1000, 1500)[1]
    _assert_ranked_as(vectors, vectors[5], ids, scores, expected, TOLERANCE[backend])
    assert 5 not in ids


@pytest.mark.parametrize("step", [7, 2])  # 285 labels (scored exactly by HNSW) and 1000 (searched in the graph)
def test_allowed_labels_restrict_results_while_searching(backend: str, build, vectors: np.ndarray, step: int) -> None:
    """A subtree's labels are passed to the search: its answers are the best of them, as brute
    force over them alone finds, never another label."""
    index = build(vectors)
    allowed = np.arange(3, 2000, step, dtype=np.int64)
    for row in (3, 500, 1234):
        scores, ids = index.search(vectors[row], 10, None, allowed=allowed)
        exact = vectors[allowed] @ vectors[row]
        order = np.argsort(-exact, kind="stable")[:10]
        assert set(ids.tolist()) <= set(allowed.tolist())
        _assert_ranked_as(vectors, vectors[row], ids, scores, allowed[order], TOLERANCE[backend])
    _, ids = index.search(vectors[3], 50, (1000, 1100), allowed=allowed)
    assert sorted(ids) == [i for i in allowed.tolist() if 1000 <= i < 1100]


def test_a_subtree_given_by_its_root_and_labels_keeps_to_them(backend: str, build, vectors: np.ndarray) -> None:
    """Labels whose lineage holds the root's row (3 roots, every third label under each): an
    index that keeps lineage filters by the root, the others by the labels; the answers agree."""
    index = build(vectors, lineage=([i, len(vectors) + i % 3] for i in range(len(vectors))))
    allowed = np.arange(1, len(vectors), 3, dtype=np.int64)
    for row in (1, 2, 700):
        scores, ids = index.search(vectors[row], 10, None, allowed=allowed, within=len(vectors) + 1)
        order = np.argsort(-(vectors[allowed] @ vectors[row]), kind="stable")[:10]
        _assert_ranked_as(vectors, vectors[row], ids, scores, allowed[order], TOLERANCE[backend])
    assert index.keeps_lineage == (backend == "elasticsearch")


def test_k_larger_than_range_returns_whole_range(build, vectors: np.ndarray) -> None:
    index = build(vectors)
    _, ids = index.search(vectors[0], 50, (10, 13))
    assert sorted(ids) == [10, 11, 12]
    assert len(index.search(vectors[0], 0)[1]) == 0


def test_save_and_open_round_trip(
    backend: str, build, index_settings: Settings, vectors: np.ndarray, tmp_path: Path
) -> None:
    index = build(vectors)
    entry = {**index_settings.vector.model_dump(), "backend": index.backend, **index.save(tmp_path)}
    reopened = open_vector_index(entry, tmp_path, index_settings)
    assert reopened.backend == backend
    assert list(reopened.search(vectors[42], 5)[1]) == list(_brute_force(vectors, vectors[42], 5)[1])


def test_an_embedded_index_exposes_every_vector_for_exact_rescoring(backend: str, build, vectors: np.ndarray) -> None:
    """The ranking core scores each candidate's labels from ``matrix``; a remote index has none
    (the core then asks it for the labels' scores)."""
    index = build(vectors)
    if backend == "elasticsearch":
        pytest.skip("a remote index keeps its vectors on the cluster")
    np.testing.assert_allclose(np.asarray(index.matrix, dtype=np.float32), vectors, atol=TOLERANCE[backend])
