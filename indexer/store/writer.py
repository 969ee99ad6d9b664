"""Bulk loading of a source into the store: one transaction per system version, idempotent."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from itertools import islice

from sqlalchemy import Engine, insert, select, update

from indexer.records import Concept, Source
from indexer.store.models import (
    CodeSystem,
    CodeSystemVersion,
    ConceptRow,
    DefinitionRow,
    DesignationRow,
    RelationshipRow,
)

BATCH = 2000


@dataclass(frozen=True)
class LoadResult:
    system: str
    version: str
    version_id: int
    loaded: bool  # False when that version was already in the store (nothing changed)
    concepts: int
    designations: int
    definitions: int
    relationships: int


def load_source(
    engine: Engine, source: Source, on_progress: Callable[[int], None] | None = None
) -> LoadResult:
    """Write every concept of ``source``; a version already present is left untouched.

    Everything happens in one transaction, so a source that fails half-way (a malformed line)
    leaves the store exactly as it was.
    """
    info = source.info
    with engine.begin() as conn:
        system_id = conn.scalar(select(CodeSystem.id).where(CodeSystem.key == info.key))
        if system_id is None:
            system_id = conn.scalar(
                insert(CodeSystem).values(key=info.key, uri=info.uri, name=info.name).returning(CodeSystem.id)
            )
        existing = conn.execute(
            select(CodeSystemVersion).where(
                CodeSystemVersion.system_id == system_id, CodeSystemVersion.version == info.version
            )
        ).first()
        if existing is not None:
            return LoadResult(info.key, info.version, existing.id, False, existing.concept_count, 0, 0, 0)

        version_id = conn.scalar(
            insert(CodeSystemVersion)
            .values(system_id=system_id, version=info.version, loaded_at=datetime.now(UTC), concept_count=0)
            .returning(CodeSystemVersion.id)
        )
        counts = [0, 0, 0, 0]
        for batch in _batches(source, BATCH):
            ids = _insert_concepts(conn, version_id, batch)
            added = _insert_children(conn, batch, ids, version_id)
            counts = [total + n for total, n in zip(counts, (len(batch), *added), strict=True)]
            if on_progress:
                on_progress(len(batch))
        conn.execute(update(CodeSystemVersion).where(CodeSystemVersion.id == version_id).values(concept_count=counts[0]))
    return LoadResult(info.key, info.version, version_id, True, *counts)


def _batches(items: Iterable[Concept], size: int) -> Iterator[list[Concept]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _insert_concepts(conn, version_id: int, batch: list[Concept]) -> list[int]:  # noqa: ANN001
    rows = [
        {
            "version_id": version_id,
            "code": c.code,
            "display": c.display,
            "active": c.active,
            "properties": c.properties,
            "associations": c.associations,
            "xrefs": c.xrefs,
        }
        for c in batch
    ]
    result = conn.execute(insert(ConceptRow).returning(ConceptRow.id, sort_by_parameter_order=True), rows)
    return [row.id for row in result]


def _insert_children(conn, batch: list[Concept], ids: list[int], version_id: int) -> tuple[int, int, int]:  # noqa: ANN001
    """Insert designations, definitions and edges of a batch; return how many of each."""
    designations = [
        {"concept_id": cid, **asdict(d)} for c, cid in zip(batch, ids, strict=True) for d in c.designations
    ]
    definitions = [
        {"concept_id": cid, **asdict(d)} for c, cid in zip(batch, ids, strict=True) for d in c.definitions
    ]
    relationships = [
        {"version_id": version_id, "source_id": cid, "type": r.type, "label": r.label, "target_code": r.target}
        for c, cid in zip(batch, ids, strict=True)
        for r in c.relationships
    ]
    for table, rows in ((DesignationRow, designations), (DefinitionRow, definitions), (RelationshipRow, relationships)):
        if rows:
            conn.execute(insert(table), rows)
    return len(designations), len(definitions), len(relationships)
