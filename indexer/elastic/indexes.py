"""A bundle's indexes in Elasticsearch: ``{prefix}-{role}-{bundle id}``, one per role, each role
reachable under the alias ``{prefix}-{role}``.

The app queries the index its bundle recorded (label ids are bundle-specific); the aliases are
for operators and other consumers. Publishing a bundle switches every alias in one ``_aliases``
call (atomic) and deletes the indexes that no bundle on disk records, so the previous bundle's
index lives until the next build.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from elasticsearch import Elasticsearch
from elasticsearch.helpers import streaming_bulk

from indexer.elastic.client import check_version, make_client
from indexer.settings import ElasticsearchSettings

ROLES = ("labels", "vectors")


class BundleIndexes:
    def __init__(self, client: Elasticsearch, settings: ElasticsearchSettings, bundle_id: str) -> None:
        self.client = client
        self.settings = settings
        self.bundle_id = bundle_id
        self.loaded: dict[str, str] = {}  # role -> index written by this build

    @classmethod
    def connect(cls, settings: ElasticsearchSettings, bundle_id: str) -> BundleIndexes:
        """For a build: long timeouts, retried requests, and a server of the client's major version."""
        client = make_client(settings).options(
            request_timeout=settings.index_timeout, max_retries=settings.bulk_retries, retry_on_timeout=True
        )
        check_version(client)
        return cls(client, settings, bundle_id)

    def alias(self, role: str) -> str:
        return f"{self.settings.index_prefix}-{role}"

    def name(self, role: str) -> str:
        return f"{self.alias(role)}-{self.bundle_id.lower()}"

    def load(
        self, role: str, mappings: Mapping[str, Any], documents: Iterable[tuple[int, dict[str, Any]]]
    ) -> dict[str, Any]:
        """Create the role's index and bulk-index ``(label id, document)`` pairs; return the manifest fields.

        Replicas and refreshes are off while loading and restored after. Rejected items (429)
        are retried with backoff; any other failure raises, leaving the previous bundle serving.
        """
        index = self.name(role)
        self.client.indices.create(
            index=index,
            settings={"number_of_shards": self.settings.shards, "number_of_replicas": 0, "refresh_interval": "-1"},
            mappings=mappings,
        )
        actions = ({"_id": str(label_id), "_source": document} for label_id, document in documents)
        bulk = streaming_bulk(
            self.client,
            actions,
            index=index,
            chunk_size=self.settings.bulk_chunk,
            max_retries=self.settings.bulk_retries,
            initial_backoff=1,
            max_backoff=30,
        )
        count = sum(1 for _ in bulk)  # raise_on_error: every item yielded succeeded
        self.client.indices.put_settings(
            index=index, settings={"number_of_replicas": self.settings.replicas, "refresh_interval": None}
        )
        self.client.indices.refresh(index=index)
        self.loaded[role] = index
        return {"index": index, "alias": self.alias(role), "count": count}

    def publish(self, keep: Collection[str]) -> None:
        """Point each loaded role's alias at this bundle's index, then delete our indexes not in ``keep``."""
        ours = self.client.indices.get_alias(index=",".join(f"{self.alias(role)}-*" for role in ROLES)).body
        actions: list[dict[str, Any]] = []
        for role, index in self.loaded.items():
            alias = self.alias(role)
            actions += [
                {"remove": {"index": name, "alias": alias}}
                for name in sorted(ours)
                if name != index and alias in ours[name].get("aliases", {})
            ]
            actions.append({"add": {"index": index, "alias": alias}})
        self.client.indices.update_aliases(actions=actions)
        stale = sorted(set(ours) - set(keep) - set(self.loaded.values()))
        if stale:
            self.client.indices.delete(index=",".join(stale))
