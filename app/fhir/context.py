"""What the FHIR operations work on: the served bundle (search, catalog), the concept store,
the settings, and what is derived from them once per bundle (code systems by URI, subtrees)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from app.errors import UnknownCode, UnknownSystem
from app.fhir.stored import ValueSetStore
from app.search.autocomplete import Autocomplete
from app.search.service import SearchService
from app.settings import Settings
from indexer.bundle import SUBTREES_CACHED, Bundle, CatalogConcept, SystemRange
from indexer.store import StoreReader
from indexer.store.reader import ConceptDetail, SystemVersion


def concept_status(concept: CatalogConcept) -> str:
    """A concept's FHIR ``status`` (``http://hl7.org/fhir/concept-properties#status``): ``active``,
    or ``retired`` for an inactive one. The loaded systems have one way of retiring a code (an HPO
    term made obsolete, a SNOMED CT concept made inactive), never an inactive code of another status;
    ``$validate-code`` outputs it (``status``) beside ``inactive``, ``$expand`` as the ``status`` property."""
    return "active" if concept.active else "retired"


@dataclass(frozen=True, eq=False)
class Subtree:
    """A concept and everything below it by is-a (or a composed value set's rows), as catalog rows."""

    rows: frozenset[int]
    ordered: np.ndarray  # the same rows, sorted: catalog order, and a ranking scope's subtree
    root: int | None = None  # the concept at its top (None: a composed value set's rows)

    @classmethod
    def of(cls, rows: frozenset[int]) -> Subtree:
        return cls(rows, np.fromiter(sorted(rows), dtype=np.int64, count=len(rows)))


@dataclass
class FhirContext:
    service: SearchService
    reader: StoreReader
    settings: Settings

    def __post_init__(self) -> None:
        # As many as the bundle keeps walked: a million-concept subtree's set is tens of MB.
        self.subtree = lru_cache(maxsize=SUBTREES_CACHED)(self._subtree)
        self.billable = lru_cache(maxsize=None)(self._billable)  # one per loaded system

    @property
    def bundle(self) -> Bundle:
        return self.service.bundle

    @cached_property
    def value_sets(self) -> ValueSetStore:
        return ValueSetStore(self.reader.engine)

    @cached_property
    def autocomplete(self) -> Autocomplete:
        return Autocomplete(self.service, self.settings.fhir.prefix_completions)

    @cached_property
    def _by_uri(self) -> dict[str, SystemRange]:
        return {system.uri: system for system in self.bundle.systems.values()}

    @cached_property
    def _store_versions(self) -> dict[str, SystemVersion]:
        return {version.key: version for version in self.reader.systems()}

    def system(self, uri: str) -> SystemRange:
        system = self._by_uri.get(uri)
        if system is None:
            raise UnknownSystem(f"code system {uri!r} is not loaded; loaded: {', '.join(self._by_uri)}", uri)
        return system

    def system_or_none(self, uri: str | None) -> SystemRange | None:
        return self._by_uri.get(uri or "")

    def row(self, system: SystemRange, code: str) -> int:
        row = self.bundle.concept_index(system.key, code)
        if row is None:
            raise UnknownCode(f"code {code!r} is not in {system.uri} version {system.version}")
        return row

    @cached_property
    def _active_ranges(self) -> list[range]:
        return [self.bundle.rows(key, include_inactive=False) for key in self.bundle.systems]

    def active(self, rows: Iterable[int]) -> list[int]:
        """The active ones of ``rows``, in their order (each system's active concepts come first
        in the catalog)."""
        return [row for row in rows if any(row in active for active in self._active_ranges)]

    def concept(self, row: int) -> CatalogConcept:
        return self.bundle.concepts[row]

    def detail(self, system: SystemRange, code: str) -> ConceptDetail | None:
        """The concept from the store: designations, definitions, parents, children."""
        version = self._store_versions.get(system.key)
        return None if version is None else self.reader.concept(version, code)

    def associated_to(self, system: SystemRange, code: str) -> list[tuple[str, str]]:
        """(code, association) of the store's inactive concepts whose associations name ``code``."""
        version = self._store_versions.get(system.key)
        return [] if version is None else self.reader.associated_to(version, code)

    def _billable(self, system: SystemRange) -> Subtree | None:
        """The system's billable codes (``billable``: the cached form); None where it marks none
        billable (HPO), so has no billable value set."""
        every = self.bundle.rows(system.key, include_inactive=True)
        rows = np.arange(every.start, every.stop, dtype=np.int64)
        billable = rows[self.bundle.billable[rows]]
        return Subtree.of(frozenset(billable.tolist())) if len(billable) else None

    def _subtree(self, system: SystemRange, code: str) -> Subtree:
        """``code`` and its descendants by the bundle's is-a links (``subtree``: the cached form)."""
        root = self.row(system, code)
        ordered = self.bundle.subtree(root)
        return Subtree(frozenset(ordered.tolist()), ordered, root)
