"""Recall@k against brute force, as a build measures it for the manifest."""

from __future__ import annotations

import numpy as np

from indexer.settings import VectorSettings
from indexer.vector import build_vector_index
from indexer.vector.recall import recall_at_k


def _unit(rows: int, dimension: int = 16) -> np.ndarray:
    matrix = np.random.default_rng(3).normal(size=(rows, dimension)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_an_exact_index_has_full_recall() -> None:
    vectors = _unit(500)
    assert recall_at_k(build_vector_index(vectors, VectorSettings(backend="numpy")), vectors) == 1.0


def test_an_index_that_misses_answers_shows_it() -> None:
    """An index that answers from half of the vectors only finds what lies in that half."""
    vectors = _unit(400)
    exact = build_vector_index(vectors, VectorSettings(backend="numpy"))

    class HalfBlind:
        backend = "half"

        def __len__(self) -> int:
            return len(vectors)

        def search(self, query, k, id_range=None, allowed=None):  # noqa: ANN001, ANN202
            return exact.search(query, k, (0, 200))

    recall = recall_at_k(HalfBlind(), vectors, sample=400)
    assert 0.3 < recall < 0.7


def test_ivfpq_finds_the_nearest_labels_of_clustered_vectors() -> None:
    """Label vectors cluster by meaning; IVF-PQ, re-ranking 256 candidates from 4-bit codes and
    the best 128 of them from its float16 copy, finds nearly all of the exact top 10 while
    probing 48 of its 282 lists. (These clusters are tight: each vector's nearest ten differ by
    hundredths of cosine, where 4-bit codes err by about 0.004; on the HPO + ICD-10-CM vectors
    the two steps lose nothing, bench/RESULTS.md.) The manifest records the same measure for
    every build."""
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(60, 48)).astype(np.float32)
    vectors = centres[rng.integers(0, 60, 20_000)] + 0.35 * rng.normal(size=(20_000, 48)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    settings = VectorSettings(kind="ivfpq", hnsw_exact_below=100, ivf_nprobe=48, ivf_rerank=256, ivf_refine=128)
    index = build_vector_index(vectors, settings)
    assert index.backend == "faiss-ivfpq"
    assert recall_at_k(index, vectors) >= 0.92
    # Every candidate re-scored from float16 finds a little more; too few from it, much less.
    assert recall_at_k(build_vector_index(vectors, settings.model_copy(update={"ivf_refine": 256})), vectors) >= 0.95
    assert recall_at_k(build_vector_index(vectors, settings.model_copy(update={"ivf_refine": 16})), vectors) < 0.7


def test_ivfpq_scores_its_4bit_codes_as_faiss_decodes_them(tmp_path) -> None:  # noqa: ANN001
    """The re-rank's first step scores rows from their 4-bit codes without decoding them: the
    same inner products as FAISS's decoder gives (odd dimensions too: a code's last nibble unused)."""
    import faiss

    from indexer.vector.faiss_ivfpq import CODEC, CODES, IvfPqIndex

    for dimension in (16, 15):
        vectors = _unit(300, dimension)
        index = IvfPqIndex.build(vectors, VectorSettings(backend="faiss", kind="ivfpq"), tmp_path)
        codes = np.load(tmp_path / CODES)
        decoded = faiss.read_index(str(tmp_path / CODEC)).sa_decode(codes)
        for query in vectors[:5]:
            np.testing.assert_allclose(index.approximate(codes, query), decoded @ query, atol=1e-5)
