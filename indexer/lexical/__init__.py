"""Lexical (BM25) backends behind one protocol, and the shared text normaliser."""

from pathlib import Path

from indexer.lexical.base import IdRange, LexicalBuilder, LexicalIndex
from indexer.lexical.tantivy_index import TantivyBuilder, TantivyIndex

BUILDERS: dict[str, type[LexicalBuilder]] = {"tantivy": TantivyBuilder}
INDEXES: dict[str, type] = {"tantivy": TantivyIndex}


def open_lexical(backend: str, directory: Path) -> LexicalIndex:
    return INDEXES[backend](directory)


__all__ = ["BUILDERS", "IdRange", "LexicalBuilder", "LexicalIndex", "open_lexical"]
