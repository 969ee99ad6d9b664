"""The app's tables in the concept store: match and benchmark jobs, evaluation runs, stored value sets, feedback events.

They share the store's declarative ``Base`` (``indexer/store/models.py``), so the one alembic
history (``alembic/``) creates and migrates them with the indexer's tables.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.jsontext import ExactJSON
from indexer.store.models import Base, UTCDateTime


class LeasedJob:
    """The columns of a job that any worker process may run (``app/leases.py``): one claims it,
    then holds it while it renews ``heartbeat_at``."""

    __tablename__: str
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))  # queued, running, then the kind's ends
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    holder: Mapped[str | None] = mapped_column(String(64))  # the process running it (host:pid:random)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # its holder's last renewal


class MatchJobRow(LeasedJob, Base):
    """A batch-matching job: the request, its progress, and how it ended (done, failed). Results
    are stored a chunk at a time in :class:`MatchJobChunkRow`, so a restarted app resumes where it stopped."""

    __tablename__ = "match_job"
    __table_args__ = (Index("ix_match_job_status", "status"),)

    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    total: Mapped[int] = mapped_column(Integer)
    done: Mapped[int] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)


class MatchJobChunkRow(Base):
    """The matches of one chunk of a job's sources, in source order (``seq`` counts chunks)."""

    __tablename__ = "match_job_chunk"

    job_id: Mapped[str] = mapped_column(ForeignKey("match_job.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    sources: Mapped[int] = mapped_column(Integer)
    results: Mapped[list[Any]] = mapped_column(JSON)


class BenchmarkJobRow(LeasedJob, Base):
    """A built-in benchmark run (``POST /benchmarks/{name}/run``): its arguments, progress and
    how it ended (done, failed, cancelled); ``run_id`` names the stored run once done."""

    __tablename__ = "benchmark_job"
    __table_args__ = (Index("ix_benchmark_job_status", "status"), Index("ix_benchmark_job_created", "created_at"))

    benchmark: Mapped[str] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(16))
    k: Mapped[int] = mapped_column(Integer)
    name: Mapped[str | None] = mapped_column(String(100))  # the caller's name for the run
    done: Mapped[int] = mapped_column(Integer)  # items searched
    total: Mapped[int | None] = mapped_column(Integer)  # items, once the benchmark is built
    run_id: Mapped[int | None] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)


class EvaluationRunRow(Base):
    """One evaluation (``/evaluate`` or a built-in benchmark) with what it ran against."""

    __tablename__ = "evaluation_run"
    __table_args__ = (Index("ix_evaluation_run_created", "created_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str | None] = mapped_column(String(100))  # the caller's name for the run
    benchmark: Mapped[str | None] = mapped_column(String(64))  # None: items posted to /evaluate
    system: Mapped[str] = mapped_column(String(64))
    mode: Mapped[str] = mapped_column(String(16))
    k: Mapped[int] = mapped_column(Integer)
    model_id: Mapped[str] = mapped_column(String(255))
    bundle_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    count: Mapped[int] = mapped_column(Integer)
    metrics: Mapped[dict[str, float]] = mapped_column(JSON)
    overlap: Mapped[dict[str, Any]] = mapped_column(JSON)
    items: Mapped[list[Any]] = mapped_column(JSON)


class ValueSetRow(Base):
    """A ValueSet resource stored through the FHIR API (``PUT /fhir/ValueSet/{id}``), as given."""

    __tablename__ = "value_set"
    __table_args__ = (Index("ix_value_set_url", "url"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    url: Mapped[str] = mapped_column(String(1000))
    version: Mapped[str | None] = mapped_column(String(64))
    resource: Mapped[dict[str, Any]] = mapped_column(ExactJSON)  # as given: decimals keep their precision
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class FeedbackEventRow(Base):
    """What a user did with a ranking (``POST /feedback``): chose a row, flagged one as wrong, or
    left without choosing. Never who: no address, no key. Purged after the retention."""

    __tablename__ = "feedback_event"
    __table_args__ = (Index("ix_feedback_event_at", "at"), Index("ix_feedback_event_key", "action", "query_key"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    surface: Mapped[str] = mapped_column(String(16))  # search, autocomplete, browser, widget, match, fhir
    action: Mapped[str] = mapped_column(String(16))  # chose, flagged, abandoned
    query: Mapped[str] = mapped_column(Text)
    query_key: Mapped[str] = mapped_column(String(512))  # the query's name key: how events are grouped
    system: Mapped[str | None] = mapped_column(String(64))  # the searched system, or the row's
    scope: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # the other search arguments
    code: Mapped[str | None] = mapped_column(String(64))  # the row chosen or flagged
    rank: Mapped[int | None] = mapped_column(Integer)  # where that row was shown (1 = first)
    shown: Mapped[int | None] = mapped_column(Integer)  # how many rows were shown
    label: Mapped[str | None] = mapped_column(Text)  # a flagged row's matched name
    wrong: Mapped[str | None] = mapped_column(String(16))  # what a flag says is wrong: name, alignment, concept
    reason: Mapped[str | None] = mapped_column(Text)
