"""Concept store: SQLAlchemy models, bulk writer and the read API."""

from indexer.store.db import make_engine, migrate
from indexer.store.reader import ConceptDetail, ConceptRef, KnowledgeSource, StoreReader, SystemVersion
from indexer.store.writer import LoadResult, load_source

__all__ = [
    "ConceptDetail",
    "ConceptRef",
    "KnowledgeSource",
    "LoadResult",
    "StoreReader",
    "SystemVersion",
    "load_source",
    "make_engine",
    "migrate",
]
