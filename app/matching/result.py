"""A finished (or partial) match: what was asked, against what, and the candidates per source.

:class:`RunInfo` is fixed when a request is accepted and stored with a job, so that a result
renders the same (JSON, SSSOM, ConceptMap) after a restart or a bundle switch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from app.matching.matcher import Candidate, SourceMatches
from app.matching.request import MatchMode, MatchRequest, Resolved
from app.search.service import SearchService
from app.search.values import Why

TOOL = "termsearch"


def tool_version() -> str:
    try:
        return version(TOOL)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


@dataclass(frozen=True)
class SystemInfo:
    key: str
    uri: str
    version: str


@dataclass(frozen=True)
class RunInfo:
    run_id: str  # a UUID: the job id, or a fresh one for a synchronous match
    mode: MatchMode
    k: int
    min_score: float
    target: SystemInfo
    target_ancestor: str | None
    source: SystemInfo | None  # None: listed sources, written as ``source_prefix:id``
    source_ancestor: str | None
    source_prefix: str
    source_uri: str
    sources: int
    model_id: str
    bundle_id: str
    created_at: str  # ISO 8601, UTC
    # The confidence a top candidate needs to be asserted a close match (SSSOM, the review CSV);
    # the served default threshold when the request was accepted.
    threshold: float = 0.3

    @classmethod
    def of(cls, run_id: str, request: MatchRequest, resolved: Resolved, service: SearchService) -> RunInfo:
        systems = service.bundle.systems

        def info(key: str) -> SystemInfo:
            return SystemInfo(key, systems[key].uri, systems[key].version)

        return cls(
            run_id=run_id,
            mode=request.mode,
            k=request.k,
            min_score=request.min_score,
            target=info(request.target_system),
            target_ancestor=request.target_ancestor,
            source=info(resolved.source_system) if resolved.source_system else None,
            source_ancestor=request.source_ancestor,
            source_prefix=request.source_prefix,
            source_uri=request.source_uri,
            sources=len(resolved.sources),
            model_id=service.encoder.id,
            bundle_id=service.bundle.id,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            threshold=service.settings.confidence_threshold,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunInfo:
        systems = {key: SystemInfo(**data[key]) if data[key] else None for key in ("target", "source")}
        return cls(**{**data, **systems, "mode": MatchMode(data["mode"])})


@dataclass(frozen=True)
class MatchRun:
    info: RunInfo
    results: list[SourceMatches]

    @property
    def matched(self) -> int:
        return sum(1 for r in self.results if r.candidates)

    def to_json(self) -> dict[str, Any]:
        return {**self.info.to_dict(), "matched": self.matched, "results": results_to_json(self.results)}


def results_to_json(results: list[SourceMatches]) -> list[dict[str, Any]]:
    return [asdict(r) for r in results]


def results_from_json(rows: list[dict[str, Any]]) -> list[SourceMatches]:
    return [SourceMatches(r["id"], r["label"], [Candidate(**{**c, "why": Why(**c["why"])}) for c in r["candidates"]]) for r in rows]
