"""A bundle's ``manifest.json``: :class:`BundleManifest`, read and written by
:func:`indexer.bundle.read_manifest` and :func:`indexer.bundle.write_manifest`.

Its JSON holds the keys the build set (``model_dump(exclude_unset=True)``), so an optional
field a build did not record is absent, as it was when the manifest was a plain dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

# 5: files with their sizes; 6: catalog columns, vocabulary; 7: n-gram matrices as arrays; 8: lexical lineage;
# 9: IVF-PQ 4-bit re-rank codes, vector lineage (Elasticsearch); 10: each concept's prior (catalog/prior.npy)
FORMAT_VERSION = 10


@dataclass(frozen=True)
class SystemRange:
    """Where a code system's labels sit in the label table: active concepts first."""

    key: str
    uri: str
    name: str
    version: str
    start: int
    active_stop: int  # labels of inactive concepts follow, up to ``stop``
    stop: int
    concepts: int

    def label_range(self, include_inactive: bool) -> tuple[int, int]:
        return (self.start, self.stop if include_inactive else self.active_stop)


class FileRecord(BaseModel):
    """A bundle file's size (checked at open) and sha256 (checked by ``indexer verify``)."""

    size: int
    sha256: str


class EncoderRecord(BaseModel):
    """The encoder the labels were embedded with; queries must be encoded by the same one."""

    id: str
    sha256: str
    dimension: int
    precision: str = "int8"  # bundles from before precisions were recorded were all embedded in int8
    bundled_model: bool  # the bundle holds a copy of the model directory (``model/``)


class Counts(BaseModel):
    concepts: int
    labels: int


class IndexEntry(BaseModel):
    """The ``lexical`` section (and the base of ``vector``): the backend and, for Elasticsearch,
    the cluster index, its alias, the documents it holds and the embedded fallback's backend."""

    backend: str
    index: str | None = None
    alias: str | None = None
    count: int | None = None
    fallback: str | None = None


class VectorEntry(IndexEntry):
    """The ``vector`` section: besides :class:`IndexEntry`'s fields, the kind built, the recall
    measured against the exact scan (embedded backends) and whether the cluster's documents hold
    their lineage; the vector settings the build ran with (and the backend's own numbers, e.g.
    IVF-PQ's ``nlist``) ride along as further keys, passed to ``open_vector_index``."""

    model_config = ConfigDict(extra="allow")

    kind: str
    recall_at_10: float | None = None
    lineage: bool = False


class BundleManifest(BaseModel):
    """What a build made and from what; :func:`~indexer.bundle.write_manifest` sets ``format_version`` and ``files``."""

    format_version: int = FORMAT_VERSION
    bundle_id: str
    created_at: datetime
    inputs_hash: str  # of everything the build read: a build with the same inputs is not repeated
    encoder: EncoderRecord
    dimension: int
    systems: list[SystemRange]
    vector: VectorEntry
    lexical: IndexEntry
    counts: Counts
    knowledge: dict[str, Any]  # each knowledge source's summary (rows, labels, unresolved...)
    build_seconds: dict[str, float]  # by build stage
    build_peak_mib: dict[str, int]  # the build's peak RSS when each stage ended
    files: dict[str, FileRecord] = {}  # by path relative to the bundle directory, the manifest aside

    @property
    def indexes(self) -> dict[str, IndexEntry]:
        """The ``lexical`` and ``vector`` sections, by role."""
        return {"lexical": self.lexical, "vector": self.vector}

    def record(self) -> dict[str, Any]:
        """The manifest as JSON values, with the keys the build set."""
        return self.model_dump(mode="json", exclude_unset=True)
