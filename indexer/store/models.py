"""Concept store schema (SQLAlchemy 2.0): the indexer's tables and the declarative ``Base`` that
the app's tables (``app/tables.py``) share; alembic's history (``alembic/``) creates them all."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Index, Integer, String, Text, TypeDecorator, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class CodeSystem(Base):
    __tablename__ = "code_system"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    uri: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))

    versions: Mapped[list[CodeSystemVersion]] = relationship(back_populates="system")


class CodeSystemVersion(Base):
    __tablename__ = "code_system_version"
    __table_args__ = (UniqueConstraint("system_id", "version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    system_id: Mapped[int] = mapped_column(ForeignKey("code_system.id", ondelete="CASCADE"))
    version: Mapped[str] = mapped_column(String(128))
    loaded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    concept_count: Mapped[int] = mapped_column(Integer)

    system: Mapped[CodeSystem] = relationship(back_populates="versions")


class ConceptRow(Base):
    __tablename__ = "concept"
    __table_args__ = (UniqueConstraint("version_id", "code"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("code_system_version.id", ondelete="CASCADE"))
    code: Mapped[str] = mapped_column(String(64))
    display: Mapped[str] = mapped_column(Text)
    active: Mapped[bool] = mapped_column(Boolean)
    properties: Mapped[dict[str, Any]] = mapped_column(JSON)
    associations: Mapped[dict[str, list[str]]] = mapped_column(JSON)
    xrefs: Mapped[list[str]] = mapped_column(JSON)


class DesignationRow(Base):
    __tablename__ = "designation"
    __table_args__ = (Index("ix_designation_concept", "concept_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    concept_id: Mapped[int] = mapped_column(ForeignKey("concept.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)
    use: Mapped[str] = mapped_column(String(32))
    language: Mapped[str] = mapped_column(String(16))
    scope: Mapped[str | None] = mapped_column(String(32))
    type: Mapped[str | None] = mapped_column(String(64))
    active: Mapped[bool] = mapped_column(Boolean)
    # Where a designation the terminology does not state came from (``Designation.origin``), and
    # the knowledge source that added it (``abbreviations``, ``alignments``, ``supplement:NAME``),
    # by which it is removed again; both None for the release's own designations.
    origin: Mapped[str | None] = mapped_column(Text)
    knowledge: Mapped[str | None] = mapped_column(String(128), index=True)


class DefinitionRow(Base):
    __tablename__ = "definition"
    __table_args__ = (Index("ix_definition_concept", "concept_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    concept_id: Mapped[int] = mapped_column(ForeignKey("concept.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)
    source: Mapped[str | None] = mapped_column(Text)
    language: Mapped[str] = mapped_column(String(16))


class RelationshipRow(Base):
    """Edges keep the target as a code: it may be loaded later or belong to another version."""

    __tablename__ = "relationship"
    __table_args__ = (
        Index("ix_relationship_source", "source_id"),
        Index("ix_relationship_target", "version_id", "target_code"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("code_system_version.id", ondelete="CASCADE"))
    source_id: Mapped[int] = mapped_column(ForeignKey("concept.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(64))
    label: Mapped[str | None] = mapped_column(String(255))
    target_code: Mapped[str] = mapped_column(String(64))


class UTCDateTime(TypeDecorator[datetime]):
    """A UTC timestamp that reads back timezone-aware on SQLite too (which drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


class KnowledgeSourceRow(Base):
    """A knowledge source whose designations the store holds (a local supplement, ...): where it
    came from and how many terms it added. Its designations name it in their ``knowledge``."""

    __tablename__ = "knowledge_source"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(32))  # supplement
    path: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    terms: Mapped[int] = mapped_column(Integer)
    loaded_at: Mapped[datetime] = mapped_column(UTCDateTime())


class LearnedRow(Base):
    """A curator's decision on what users taught the service (``app/feedback``): a phrasing users
    chose a concept for (``designation``), or a name or alignment users flagged (``denial``).
    Approved designations serve at once (the app's overlay) and become labels in the next build;
    approved denials stop the name (or every name one alignment lent) like ``corrections.tsv``;
    rejected ones are never proposed again. Each decision is a new row: the latest one counts."""

    __tablename__ = "learned"
    __table_args__ = (Index("ix_learned_item", "kind", "system", "code", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # designation, denial
    system: Mapped[str] = mapped_column(String(64))
    code: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)  # the phrasing, or the denied name
    key: Mapped[str] = mapped_column(String(512))  # the text's name key (how the queue groups it)
    lent_by: Mapped[str | None] = mapped_column(Text)  # a denial of an alignment: the origin its names share
    decision: Mapped[str] = mapped_column(String(16))  # approved, rejected
    count: Mapped[int] = mapped_column(Integer)  # the choices or flags the curator saw
    reviewer: Mapped[str] = mapped_column(String(100))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime())
    note: Mapped[str | None] = mapped_column(Text)
