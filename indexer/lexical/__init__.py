"""Lexical (BM25) backends behind one protocol, and the shared text normaliser.

Embedded backends build into the bundle directory; ``elasticsearch`` indexes into the cluster
and may also build the embedded one as its fallback. Its module (and the optional client) is
imported only when a build or a bundle uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.lexical.base import IdRange, Label, LexicalBuilder, LexicalIndex
from indexer.lexical.tantivy_index import TantivyBuilder, TantivyIndex
from indexer.settings import LexicalSettings, Settings

if TYPE_CHECKING:
    from indexer.elastic import BundleIndexes

BUILDERS: dict[str, type[LexicalBuilder]] = {"tantivy": TantivyBuilder}
INDEXES: dict[str, type[LexicalIndex]] = {"tantivy": TantivyIndex}


def lexical_builder(settings: LexicalSettings, remote: BundleIndexes | None = None) -> LexicalBuilder:
    """The builder for ``settings.backend``; ``remote`` holds the bundle's Elasticsearch indexes."""
    if settings.backend != "elasticsearch":
        return BUILDERS[settings.backend]()
    from indexer.lexical.elasticsearch import ElasticLexicalBuilder

    if remote is None:
        raise ValueError("the elasticsearch lexical backend builds into a bundle's Elasticsearch indexes")
    return ElasticLexicalBuilder(remote, TantivyBuilder() if settings.fallback_embedded else None)  # its fallback


def open_lexical(entry: Mapping[str, Any], directory: Path, settings: Settings) -> LexicalIndex:
    """Open the index a bundle recorded (``entry`` is its manifest's ``lexical`` section)."""
    if entry["backend"] != "elasticsearch":
        return INDEXES[entry["backend"]](directory)
    from indexer.lexical.elasticsearch import open_elastic

    return open_elastic(entry, directory, settings)


__all__ = [
    "BUILDERS",
    "IdRange",
    "Label",
    "LexicalBuilder",
    "LexicalIndex",
    "TantivyBuilder",
    "TantivyIndex",
    "lexical_builder",
    "open_lexical",
]
