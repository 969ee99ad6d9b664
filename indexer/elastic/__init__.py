"""Elasticsearch, shared by the ``elasticsearch`` lexical and vector backends: the client, error
translation, and a bundle's indexes (creation, bulk loading, the atomic alias switch).

Needs the optional ``elasticsearch`` extra; the registries import this package only when a
bundle or a build uses the backend.
"""

from indexer.elastic.client import MAX_WINDOW, ElasticIndex, ServerMismatch, make_client
from indexer.elastic.indexes import BundleIndexes

__all__ = ["MAX_WINDOW", "BundleIndexes", "ElasticIndex", "ServerMismatch", "make_client"]
