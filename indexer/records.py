"""What every source yields: one contract shared by all loaders, the store and training.

A source is an iterable of :class:`Concept` with a :class:`CodeSystemInfo` describing the
system version it came from. Loaders stream; nothing here holds a whole terminology.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from indexer.errors import IndexerError


class DesignationUse:
    """Role of a label within its concept (SNOMED CT's vocabulary, used for every system)."""

    PREFERRED = "preferred"  # the concept's display name
    FSN = "fsn"  # SNOMED CT fully specified name
    SYNONYM = "synonym"  # any other label


IS_A = "is_a"


@dataclass(frozen=True, slots=True)
class CodeSystemInfo:
    key: str  # short id used in REST: "hpo", "icd10cm", "snomedct", "umls"
    uri: str  # canonical FHIR system URI
    name: str
    version: str


@dataclass(frozen=True, slots=True)
class Designation:
    text: str
    use: str = DesignationUse.SYNONYM
    language: str = "en"
    scope: str | None = None  # OBO scope: EXACT, BROAD, NARROW, RELATED
    type: str | None = None  # synonym type: layperson, abbreviation, uk_spelling, inclusion, includes, ...
    active: bool = True
    # Where a designation that the terminology itself does not state came from: a propagated
    # synonym ("hpo HP:0001658 'Myocardial infarction' layperson, score 0.93"), a supplement.
    origin: str | None = None
    # The knowledge source that added it ("alignments", "abbreviations", "supplement:NAME").
    knowledge: str | None = None

    @property
    def kind(self) -> str:
        """What the label is, as a row's why-this-hit names it: ``preferred``, ``fsn``, the
        synonym type (``layperson``, ``inclusion``, ...), else ``synonym`` with its OBO scope."""
        if self.use in (DesignationUse.PREFERRED, DesignationUse.FSN):
            return self.use
        if self.type:
            return self.type
        return f"{self.scope.lower()} synonym" if self.scope else "synonym"


@dataclass(frozen=True, slots=True)
class Definition:
    text: str
    source: str | None = None  # provenance (e.g. PMID:…, a UMLS SAB)
    language: str = "en"


@dataclass(frozen=True, slots=True)
class Relationship:
    """A directed edge from the concept that carries it. ``type`` is ``IS_A`` for hierarchy."""

    type: str
    target: str  # target code in the same system
    label: str | None = None  # readable name of the relationship type (for generated descriptions)


@dataclass(slots=True)
class Concept:
    code: str
    display: str
    active: bool = True
    designations: list[Designation] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    relationships: list[Relationship] = field(default_factory=list)
    # replaced_by, consider, same_as, ... for inactive concepts: association name -> target codes
    associations: dict[str, list[str]] = field(default_factory=dict)
    xrefs: list[str] = field(default_factory=list)
    properties: dict[str, Any] = field(default_factory=dict)

    @property
    def parents(self) -> list[str]:
        return [r.target for r in self.relationships if r.type == IS_A]

    def labels(self) -> list[str]:
        """Display first, then the other distinct designation texts, in order."""
        return [d.text for d in self.label_designations()]

    def label_designations(self) -> list[Designation]:
        """The designation of each of :meth:`labels` (the first one with that text)."""
        seen: dict[str, Designation] = {self.display: Designation(self.display, DesignationUse.PREFERRED)}
        for d in self.designations:
            if d.active and d.text not in seen:
                seen[d.text] = d
        return list(seen.values())

    @property
    def kind(self) -> str | None:
        return self.properties.get("kind")


class Source(Protocol):
    """A terminology release opened for reading."""

    info: CodeSystemInfo

    def __iter__(self) -> Iterator[Concept]: ...


class SourceError(IndexerError, ValueError):
    """Malformed input, always naming the file and (where there is one) the line."""

    def __init__(self, path: object, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
