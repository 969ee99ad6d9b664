"""Dense vectors in Elasticsearch: a ``dense_vector`` field searched with kNN.

``kind`` picks the index_options: ``flat`` (exact) or ``hnsw`` (searched with
``num_candidates = max(k, hnsw_ef_search)``; ``auto`` is ``hnsw``), and ``quantize`` how the
cluster keeps them: ``none`` (float32, set explicitly, because Elasticsearch would otherwise
quantise), ``int8`` (``int8_flat``/``int8_hnsw``: a quarter of the memory) or ``bbq`` (better
binary quantisation, ``bbq_flat``/``bbq_hnsw``: 1/32). A quantised index re-scores
``oversample`` times the candidates asked from the float vectors (``rescore_vector``). Elasticsearch scores cosine similarity as ``(1 + cos) / 2``;
scores are converted back to cosines, as the embedded backends return.

Each document also holds its label's lineage (``within``: the catalog rows of its concept and
of every concept above it by is-a, as the lexical index's), so that a subtree of any size is one
``term`` filter on its root inside the kNN search, not a ``terms`` list of up to 65,536 label ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
from elasticsearch import Elasticsearch

from indexer.elastic import MAX_WINDOW, BundleIndexes, ElasticIndex, make_client
from indexer.remote import WithFallback
from indexer.settings import Settings, VectorSettings
from indexer.vector.base import IdRange, VectorIndex
from indexer.vector.numpy_flat import NumpyFlatIndex

ROLE = "vectors"


def mappings(dimension: int, settings: VectorSettings) -> dict[str, Any]:
    structure = "flat" if settings.kind == "flat" else "hnsw"
    options: dict[str, Any] = {"type": structure if settings.quantize == "none" else f"{settings.quantize}_{structure}"}
    if structure == "hnsw":
        options |= {"m": settings.hnsw_m, "ef_construction": 200}
    if settings.quantize != "none":
        options["rescore_vector"] = {"oversample": settings.oversample}
    vector = {
        "type": "dense_vector",
        "dims": dimension,
        "element_type": "float",
        "index": True,
        "similarity": "cosine",
        "index_options": options,
    }
    return {
        "dynamic": "strict",
        "properties": {"label_id": {"type": "integer"}, "vector": vector, "within": {"type": "integer"}},
    }


def knn_body(
    query: np.ndarray,
    k: int,
    candidates: int,
    id_range: IdRange | None = None,
    allowed: np.ndarray | None = None,
    within: int | None = None,
) -> dict[str, Any]:
    """The kNN request; a range and a subtree (its root's row ``within``, else its labels
    ``allowed``) are filters the cluster applies while it searches."""
    knn: dict[str, Any] = {
        "field": "vector",
        "query_vector": np.asarray(query, dtype=np.float32).reshape(-1).tolist(),
        "k": k,
        "num_candidates": candidates,
    }
    filters = [{"range": {"label_id": {"gte": id_range[0], "lt": id_range[1]}}}] if id_range is not None else []
    if within is not None:
        filters.append({"term": {"within": int(within)}})
    elif allowed is not None:
        filters.append({"terms": {"label_id": allowed.tolist()}})
    if filters:
        knn["filter"] = filters[0] if len(filters) == 1 else {"bool": {"filter": filters}}
    return {"knn": knn, "size": k, "_source": False}


class ElasticVectorIndex(ElasticIndex):
    """``entry`` is what the build recorded: index, alias, count, whether the documents hold
    their lineage (none given to the build: subtrees go as label ids), and the vector settings'
    ``kind``."""

    filter_limit = 65_536  # a terms query's default limit (index.max_terms_count)

    def __init__(self, client: Elasticsearch, entry: Mapping[str, Any], ef_search: int) -> None:
        super().__init__(client, entry["index"])
        self._entry = {key: entry[key] for key in ("index", "alias", "count")} | {"lineage": entry.get("lineage", False)}
        self.keeps_lineage = self._entry["lineage"]
        self._exact = entry["kind"] == "flat"
        self._ef_search = ef_search

    def __len__(self) -> int:
        return self._entry["count"]

    def search(
        self, query: np.ndarray, k: int, id_range: IdRange | None = None, allowed: np.ndarray | None = None, within: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, MAX_WINDOW)
        if k <= 0 or not len(self):
            return np.empty(0, np.float32), np.empty(0, np.int64)
        candidates = k if self._exact else min(max(k, self._ef_search), MAX_WINDOW)
        hits = self._search(knn_body(query, k, candidates, id_range, allowed, within if self.keeps_lineage else None))
        scores = np.asarray([2.0 * hit["_score"] - 1.0 for hit in hits], dtype=np.float32)
        return scores, np.asarray([int(hit["_id"]) for hit in hits], dtype=np.int64)

    def save(self, directory: Path) -> dict[str, Any]:
        return dict(self._entry)


class VectorsWithFallback(WithFallback[np.ndarray, tuple[np.ndarray, np.ndarray]]):
    """The cluster's index plus the bundle's numpy copy, which answers while the cluster cannot."""

    primary: ElasticVectorIndex
    fallback: NumpyFlatIndex

    def __len__(self) -> int:
        return len(self.primary)

    @property
    def filter_limit(self) -> int | None:
        return self.primary.filter_limit

    @property
    def keeps_lineage(self) -> bool:
        return self.primary.keeps_lineage

    def save(self, directory: Path) -> dict[str, Any]:
        return {**self.primary.save(directory), **self.fallback.save(directory), "fallback": self.fallback.backend}


def build_elastic(
    vectors: np.ndarray, settings: VectorSettings, remote: BundleIndexes, lineage: Iterable[Sequence[int]] | None = None
) -> VectorIndex:
    """``lineage``: each label's :attr:`~indexer.lexical.Label.within`, in label order (none:
    subtrees are filtered by their label ids)."""
    documents = (
        (i, {"label_id": i, "vector": row.tolist()} | ({"within": list(rows)} if rows is not None else {}))
        for i, (row, rows) in enumerate(zip(vectors, repeat(None, len(vectors)) if lineage is None else lineage, strict=True))
    )
    entry = remote.load(ROLE, mappings(vectors.shape[1], settings), documents) | {"lineage": lineage is not None}
    index = ElasticVectorIndex(remote.client, {**entry, "kind": settings.resolved_kind(len(vectors))}, settings.hnsw_ef_search)
    if not settings.fallback_embedded:
        return index
    return VectorsWithFallback(index, NumpyFlatIndex(vectors), remote.settings.recheck_seconds)


def open_elastic(entry: Mapping[str, Any], directory: Path, settings: Settings) -> VectorIndex:
    """The bundle's index, wrapped with its embedded fallback when it has one and it is wanted."""
    from indexer.vector import open_vector_index

    index = ElasticVectorIndex(make_client(settings.elasticsearch), entry, settings.vector.hnsw_ef_search)
    fallback = entry.get("fallback") if settings.vector.fallback_embedded else None
    if fallback is None:
        return index
    embedded = open_vector_index({"backend": fallback}, directory, settings)
    return VectorsWithFallback(index, embedded, settings.elasticsearch.recheck_seconds)
