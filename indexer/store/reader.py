"""Read API over the store, used by the indexer pipeline, the app and training."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, Text, cast, func, select

from indexer.records import IS_A, Concept, Definition, Designation, Relationship
from indexer.store.models import (
    CodeSystem,
    CodeSystemVersion,
    ConceptRow,
    DefinitionRow,
    DesignationRow,
    KnowledgeSourceRow,
    RelationshipRow,
)

CHUNK = 5000


@dataclass(frozen=True)
class SystemVersion:
    key: str
    uri: str
    name: str
    version: str
    version_id: int
    concept_count: int
    loaded_at: datetime


@dataclass(frozen=True)
class ConceptRef:
    code: str
    display: str


@dataclass(frozen=True)
class KnowledgeSource:
    """A knowledge source loaded into the store (a local supplement, ...)."""

    name: str
    kind: str
    path: str  # the file it was loaded from
    sha256: str  # of that file
    terms: int  # designations it added
    loaded_at: datetime


@dataclass
class ConceptDetail:
    system: SystemVersion
    concept: Concept
    parents: list[ConceptRef] = field(default_factory=list)
    children: list[ConceptRef] = field(default_factory=list)


class StoreReader:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def systems(self) -> list[SystemVersion]:
        """The newest loaded version of every code system."""
        newest = (
            select(CodeSystemVersion.system_id, func.max(CodeSystemVersion.id).label("version_id"))
            .group_by(CodeSystemVersion.system_id)
            .subquery()
        )
        query = (
            select(
                CodeSystem.key,
                CodeSystem.uri,
                CodeSystem.name,
                CodeSystemVersion.version,
                CodeSystemVersion.id,
                CodeSystemVersion.concept_count,
                CodeSystemVersion.loaded_at,
            )
            .join(newest, newest.c.system_id == CodeSystem.id)
            .join(CodeSystemVersion, CodeSystemVersion.id == newest.c.version_id)
            .order_by(CodeSystem.key)
        )
        with self.engine.connect() as conn:
            return [SystemVersion(*row) for row in conn.execute(query)]

    def knowledge_sources(self) -> list[KnowledgeSource]:
        """Every loaded knowledge source, by name."""
        query = select(
            KnowledgeSourceRow.name,
            KnowledgeSourceRow.kind,
            KnowledgeSourceRow.path,
            KnowledgeSourceRow.sha256,
            KnowledgeSourceRow.terms,
            KnowledgeSourceRow.loaded_at,
        ).order_by(KnowledgeSourceRow.name)
        with self.engine.connect() as conn:
            return [KnowledgeSource(*row) for row in conn.execute(query)]

    def system(self, key: str) -> SystemVersion | None:
        return next((s for s in self.systems() if s.key == key), None)

    def concept(self, system: SystemVersion, code: str) -> ConceptDetail | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(ConceptRow).where(ConceptRow.version_id == system.version_id, ConceptRow.code == code)
            ).first()
            if row is None:
                return None
            concept = next(self._assemble(conn, [row]))
            children = conn.execute(
                select(ConceptRow.code, ConceptRow.display)
                .join(RelationshipRow, RelationshipRow.source_id == ConceptRow.id)
                .where(
                    RelationshipRow.version_id == system.version_id,
                    RelationshipRow.type == IS_A,
                    RelationshipRow.target_code == code,
                )
                .order_by(ConceptRow.code)
            ).all()
            parents = self._displays(conn, system.version_id, concept.parents)
        return ConceptDetail(system, concept, parents, [ConceptRef(c, d) for c, d in children])

    def associated_to(self, system: SystemVersion, code: str) -> list[tuple[str, str]]:
        """(code, association) of the inactive concepts whose historical associations name
        ``code`` (``replaced_by``, ``same_as``...): the reverse of an association, for
        ``$translate reverse``. A scan of the version's inactive concepts, narrowed in SQL."""
        quoted = json.dumps(code)
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(ConceptRow.code, ConceptRow.associations).where(
                    ConceptRow.version_id == system.version_id,
                    ConceptRow.active.is_(False),
                    cast(ConceptRow.associations, Text).contains(quoted, autoescape=True),
                )
            ).all()
        return [(found, name) for found, associations in rows for name, codes in (associations or {}).items() if code in codes]

    def descendants(self, system: SystemVersion, code: str) -> set[str]:
        """Codes of every concept below ``code`` by is_a (not ``code`` itself), in one
        recursive query."""
        child = (
            select(ConceptRow.code)
            .join(RelationshipRow, RelationshipRow.source_id == ConceptRow.id)
            .where(RelationshipRow.version_id == system.version_id, RelationshipRow.type == IS_A)
        )
        below = child.where(RelationshipRow.target_code == code).cte("below", recursive=True)
        below = below.union(child.where(RelationshipRow.target_code == below.c.code))
        with self.engine.connect() as conn:
            return set(conn.scalars(select(below.c.code)))

    def spread_displays(self, count: int, keys: Collection[str] | None = None) -> list[str]:
        """At most ``count`` concept displays spread evenly over the systems (every loaded one when
        ``keys`` is None), in load order: real labels for an encoder export's parity check."""
        systems = [s for s in self.systems() if keys is None or s.key in keys]
        if not systems:
            return []
        per_system = count // len(systems) + 1
        texts: list[str] = []
        with self.engine.connect() as conn:
            for system in systems:
                step = max(1, system.concept_count // per_system)
                displays = conn.scalars(
                    select(ConceptRow.display).where(ConceptRow.version_id == system.version_id).order_by(ConceptRow.id)
                )
                texts.extend(itertools.islice(displays, 0, step * per_system, step))
        return texts[:count]

    def iter_concepts(self, system: SystemVersion) -> Iterator[Concept]:
        """Stream every concept of a version as records, in load order, a chunk at a time."""
        last_id = 0
        while True:
            with self.engine.connect() as conn:
                rows = conn.execute(
                    select(ConceptRow)
                    .where(ConceptRow.version_id == system.version_id, ConceptRow.id > last_id)
                    .order_by(ConceptRow.id)
                    .limit(CHUNK)
                ).all()
                if not rows:
                    return
                yield from self._assemble(conn, rows)
            last_id = rows[-1].id

    @staticmethod
    def _assemble(conn, rows: list[Any]) -> Iterator[Concept]:  # noqa: ANN001
        lo, hi = rows[0].id, rows[-1].id
        designations = _by_concept(conn, DesignationRow, lo, hi)
        definitions = _by_concept(conn, DefinitionRow, lo, hi)
        relationships: dict[int, list[Any]] = defaultdict(list)
        for r in conn.execute(
            select(RelationshipRow)
            .where(RelationshipRow.source_id.between(lo, hi))
            .order_by(RelationshipRow.id)
        ):
            relationships[r.source_id].append(r)
        for row in rows:
            yield Concept(
                code=row.code,
                display=row.display,
                active=row.active,
                designations=[
                    Designation(d.text, d.use, d.language, d.scope, d.type, d.active, d.origin, d.knowledge) for d in designations[row.id]
                ],
                definitions=[Definition(d.text, d.source, d.language) for d in definitions[row.id]],
                relationships=[Relationship(r.type, r.target_code, r.label) for r in relationships[row.id]],
                associations=row.associations or {},
                xrefs=row.xrefs or [],
                properties=row.properties or {},
            )

    @staticmethod
    def _displays(conn, version_id: int, codes: list[str]) -> list[ConceptRef]:  # noqa: ANN001
        if not codes:
            return []
        found = dict(
            conn.execute(
                select(ConceptRow.code, ConceptRow.display).where(
                    ConceptRow.version_id == version_id, ConceptRow.code.in_(codes)
                )
            ).all()
        )
        return [ConceptRef(code, found.get(code, code)) for code in codes]


def _by_concept(conn, table: type, lo: int, hi: int) -> dict[int, list[Any]]:  # noqa: ANN001
    grouped: dict[int, list[Any]] = defaultdict(list)
    for row in conn.execute(select(table).where(table.concept_id.between(lo, hi)).order_by(table.id)):
        grouped[row.concept_id].append(row)
    return grouped
