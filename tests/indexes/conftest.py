from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from indexer.settings import ElasticsearchSettings
from tests.indexes.cluster import ELASTICSEARCH_URL


@pytest.fixture
def elastic_indexes() -> Iterator:
    """A bundle's indexes on the real cluster under a throw-away prefix, deleted afterwards."""
    from indexer.elastic import BundleIndexes

    settings = ElasticsearchSettings(url=ELASTICSEARCH_URL, index_prefix=f"termsearch-test-{uuid.uuid4().hex[:8]}")
    indexes = BundleIndexes.connect(settings, "contract")
    yield indexes
    if indexes.loaded:
        indexes.client.indices.delete(index=",".join(indexes.loaded.values()))
