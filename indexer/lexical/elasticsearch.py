"""BM25 in Elasticsearch over exactly the tokens the embedded index uses.

Each label is stored with ``text``: its ``normalise.tokens`` joined by spaces, in a field with
the whitespace analyser, so Elasticsearch computes BM25 on our tokens and queries are
normalised the same way. ``prefix`` holds the same tokens as ``search_as_you_type`` (edge
n-grams and shingles) for autocomplete; ``label`` (standard analyser over the raw text),
``system`` and ``code`` are for operators. Label id ranges become a range filter on ``label_id``,
a subtree a term filter on ``within`` (the catalog rows of the label's concept and its ancestors).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from indexer.elastic import MAX_WINDOW, BundleIndexes, ElasticIndex, make_client
from indexer.lexical import INDEXES
from indexer.lexical.base import IdRange, Label, LexicalIndex
from indexer.lexical.normalise import tokens
from indexer.lexical.tantivy_index import TantivyBuilder
from indexer.remote import WithFallback
from indexer.settings import Settings

ROLE = "labels"

MAPPINGS: dict[str, Any] = {
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
}


def document(label: Label) -> dict[str, Any]:
    normalised = " ".join(tokens(label.text))
    return {
        "label_id": label.id,
        "system": label.system,
        "code": label.code,
        "label": label.text,
        "text": normalised,
        "prefix": normalised,
        "within": list(label.within),
    }


def query_body(
    query: str, k: int, id_range: IdRange | None = None, allowed: Sequence[int] | None = None, within: int | None = None
) -> dict[str, Any] | None:
    """The search request; None for a query without tokens (nothing can match)."""
    terms = " ".join(dict.fromkeys(tokens(query)))
    if not terms or k <= 0:
        return None
    clause: dict[str, Any] = {"match": {"text": {"query": terms}}}
    filters: list[dict[str, Any]] = []
    if id_range is not None:
        filters.append({"range": {"label_id": {"gte": id_range[0], "lt": id_range[1]}}})
    if allowed is not None:
        filters.append({"terms": {"label_id": [int(i) for i in allowed]}})
    if within is not None:
        filters.append({"term": {"within": int(within)}})
    if filters:
        clause = {"bool": {"must": [clause], "filter": filters}}
    return {"query": clause, "size": min(k, MAX_WINDOW), "_source": False, "track_total_hits": False}


class ElasticLexicalBuilder:
    backend = ElasticIndex.backend

    def __init__(self, indexes: BundleIndexes, fallback: TantivyBuilder | None) -> None:
        self._indexes = indexes
        self._fallback = fallback

    def build(self, directory: Path, labels: Iterable[Label]) -> dict[str, Any]:
        """One pass over ``labels``: each goes to the cluster and, when wanted, to the embedded
        fallback (no label is held: at UMLS size they and their lineage are gigabytes)."""
        if self._fallback is None:
            return self._indexes.load(ROLE, MAPPINGS, ((label.id, document(label)) for label in labels))
        with self._fallback.writer(directory) as add:
            entry = self._indexes.load(ROLE, MAPPINGS, _documents_also_added(labels, add))
        return entry | {"fallback": self._fallback.backend}


def _documents_also_added(labels: Iterable[Label], add: Callable[[Label], None]) -> Iterator[tuple[int, dict[str, Any]]]:
    for label in labels:
        add(label)
        yield label.id, document(label)


class ElasticLexicalIndex(ElasticIndex):
    def search(
        self, query: str, k: int, id_range: IdRange | None = None, allowed: Sequence[int] | None = None, within: int | None = None
    ) -> list[tuple[int, float]]:
        body = query_body(query, k, id_range, allowed, within)
        if body is None:
            return []
        return [(int(hit["_id"]), float(hit["_score"])) for hit in self._search(body)]


def open_elastic(entry: Mapping[str, Any], directory: Path, settings: Settings) -> LexicalIndex:
    """The bundle's index, wrapped with its embedded fallback when it has one and it is wanted."""
    primary = ElasticLexicalIndex(make_client(settings.elasticsearch), entry["index"])
    fallback = entry.get("fallback") if settings.lexical.fallback_embedded else None
    if fallback is None:
        return primary
    return WithFallback(primary, INDEXES[fallback](directory), settings.elasticsearch.recheck_seconds)
