"""The real cluster the contract tests also run against, when ELASTICSEARCH_URL names one."""

from __future__ import annotations

import os

import pytest

ELASTICSEARCH_URL = os.environ.get("ELASTICSEARCH_URL", "")
needs_elasticsearch = pytest.mark.skipif(
    not ELASTICSEARCH_URL, reason="ELASTICSEARCH_URL is not set: no Elasticsearch cluster to run the contract against"
)
