"""What a batch-matching request asks for, and how it resolves against the served bundle.

The source is either a list of ``{id, labels}`` or a loaded system (optionally the subtree under
``source_ancestor``); the target is a loaded system (optionally the subtree under
``target_ancestor``, the root included). Every check raises :class:`~app.errors.InvalidParameter`
naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.checks import FRACTION, MATCH, QUERY, check_query, check_range, check_system, documented
from app.errors import InvalidParameter
from app.search.scope import Scope
from app.search.service import SearchService
from app.search.similar import concept_labels
from app.settings import Settings
from indexer.bundle import Bundle


class MatchMode(StrEnum):
    HYBRID = "hybrid"  # score: the core's calibrated confidence (the ranking /search gives)
    DENSE = "dense"  # score: cosine of the best label pair
    LEXICAL = "lexical"  # BM25 candidates; score: token-sort similarity of the best label pair


class SourceConcept(BaseModel):
    id: str = Field(**QUERY)
    labels: list[Annotated[str, Field(**QUERY)]] = Field(**documented(min_items=1, max_items=MATCH.max_labels_per_source))


class MatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    target_system: str
    target_ancestor: str | None = Field(default=None, description="match only this concept and those below it")
    concepts: list[SourceConcept] | None = Field(default=None, description="the sources, or give source_system")
    source_system: str | None = None
    source_ancestor: str | None = Field(default=None, description="with source_system: this concept and those below")
    k: int = Field(default=5, description="candidates per source (1 to match.max_k)", **documented(minimum=1, maximum=MATCH.max_k))
    min_score: float = Field(default=0.0, description="candidates scoring below are left out (0 to 1)", **FRACTION)
    min_confidence: float = Field(
        default=0.0, description="candidates whose calibrated confidence is below are left out (0 to 1)", **FRACTION
    )
    mode: MatchMode = MatchMode.HYBRID
    billable_only: bool = Field(
        default=True, description="where the target system says which codes are billable (ICD-10-CM), only those"
    )
    # How listed sources (``concepts``) are written as CURIEs and FHIR codes: PREFIX:id.
    source_prefix: str = Field(default="local", pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$")
    source_uri: str = Field(default="urn:termsearch:local:", min_length=1)


@dataclass(frozen=True)
class Source:
    id: str  # the listed id, or the concept's code
    labels: tuple[str, ...]
    concept: int | None = None  # catalog row when the source is a loaded concept (never its own match)


@dataclass(frozen=True)
class Target:
    system: str
    root: int | None = None  # catalog row of the subtree's top; None: the whole system
    billable: bool | None = None  # True: billable codes only (a code to record)

    def scope(self, bundle: Bundle, exclude: frozenset[int]) -> Scope:
        """Its ranking scope (the subtree's rows from the bundle, which keeps the last few walked)."""
        subtree = None if self.root is None else bundle.subtree(self.root)
        return Scope((self.system,), subtree, exclude, billable=self.billable, root=self.root)

    def ranges(self, service: SearchService) -> list[tuple[int, int]]:
        return [service.bundle.systems[self.system].label_range(include_inactive=False)]


@dataclass(frozen=True)
class Resolved:
    sources: list[Source]
    target: Target
    source_system: str | None


def resolve(
    request: MatchRequest, service: SearchService, settings: Settings, max_sources: int
) -> Resolved:
    """Check ``request`` against the bundle and the limits; at most ``max_sources`` sources."""
    limits = settings.match
    check_range(request.k, 1, limits.max_k, "k")
    check_range(request.min_score, 0, 1, "min_score")
    check_range(request.min_confidence, 0, 1, "min_confidence")
    check_system(service.bundle.systems, request.target_system, "target_system")
    root = _root(service, request.target_system, request.target_ancestor, "target_ancestor")
    states = any(service.bundle.concepts[row].billable is not None for row in service.bundle.rows(request.target_system, False))
    target = Target(request.target_system, root, True if request.billable_only and states else None)
    if (request.concepts is None) == (request.source_system is None):
        raise InvalidParameter("concepts: give either concepts or source_system", "concepts")
    if request.concepts is not None:
        sources = _listed(request.concepts, settings)
    else:
        sources = _system_sources(service, request.source_system, request.source_ancestor)
    param = "concepts" if request.concepts is not None else "source_system"
    if len(sources) > max_sources:
        hint = " (larger batches run as a job: POST /match/jobs)" if max_sources == limits.max_sync_sources else ""
        raise InvalidParameter(f"{param}: {len(sources)} sources, more than {max_sources}{hint}", param)
    return Resolved(sources, target, request.source_system)


def _root(service: SearchService, system: str, ancestor: str | None, param: str) -> int | None:
    """The catalog row of ``ancestor``, a code of ``system``, or None."""
    if ancestor is None:
        return None
    bundle = service.bundle
    root = bundle.concept_index(system, ancestor)
    if root is None:
        raise InvalidParameter(f"{param}: {ancestor!r} is not a code of {system} {bundle.systems[system].version}", param)
    return root


def _listed(concepts: list[SourceConcept], settings: Settings) -> list[Source]:
    if not concepts:
        raise InvalidParameter("concepts: must not be empty", "concepts")
    seen: set[str] = set()
    sources = []
    for number, concept in enumerate(concepts):
        where = f"concepts.{number}"
        if not concept.id.strip():
            raise InvalidParameter(f"{where}.id: must not be empty", f"{where}.id")
        if concept.id in seen:
            raise InvalidParameter(f"{where}.id: duplicate id {concept.id!r}", f"{where}.id")
        seen.add(concept.id)
        if not concept.labels:
            raise InvalidParameter(f"{where}.labels: must not be empty", f"{where}.labels")
        if len(concept.labels) > settings.match.max_labels_per_source:
            limit = settings.match.max_labels_per_source
            raise InvalidParameter(f"{where}.labels: more than {limit} labels ({len(concept.labels)})", f"{where}.labels")
        for index, label in enumerate(concept.labels):
            check_query(label, settings.search.max_query_length, f"{where}.labels.{index}")
        sources.append(Source(concept.id, tuple(concept.labels)))
    return sources


def _system_sources(service: SearchService, system: str | None, ancestor: str | None) -> list[Source]:
    """The active concepts of a loaded system (or of one subtree), in catalog order."""
    system = check_system(service.bundle.systems, system, "source_system")
    bundle = service.bundle
    root = _root(service, system, ancestor, "source_ancestor")
    rows = bundle.rows(system, include_inactive=False)
    if root is not None:  # the subtree's rows in catalog order
        rows = [row for row in bundle.subtree(root).tolist() if row in rows]
    return [Source(bundle.concepts[row].code, tuple(concept_labels(service, row)), row) for row in rows]
