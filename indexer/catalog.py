"""The catalog while a bundle is built: every concept of the selected systems with its labels.

Read from the store (:func:`read_catalog`), enriched by the knowledge sources (which only add
labels, so catalog rows never move), then written out as the bundle's ``catalog.json`` tables
(:meth:`Catalog.tables`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from rich.progress import Progress

from indexer.bundle import SystemRange
from indexer.lexical.normalise import fold
from indexer.records import Concept, Designation
from indexer.store import StoreReader, SystemVersion


@dataclass
class Entry:
    """One concept: ``parents`` are catalog rows of the same system."""

    row: int
    system: str
    code: str
    display: str
    active: bool
    kind: str | None
    billable: bool | None
    xrefs: list[str]
    labels: list[Designation]
    parents: list[int] = field(default_factory=list)

    @property
    def grouping(self) -> bool:
        return self.kind in ("chapter", "block")

    def add(self, designation: Designation) -> bool:
        """Add a label unless the concept already has that text (case aside); True when added."""
        text = fold(designation.text).strip()
        if any(fold(label.text).strip() == text for label in self.labels):
            return False
        self.labels.append(designation)
        return True


@dataclass
class Catalog:
    systems: list[SystemVersion]
    entries: list[Entry]  # per system, active concepts first

    def __post_init__(self) -> None:
        self._by_code = {(e.system, e.code): e for e in self.entries}

    def of(self, system: str) -> Iterator[Entry]:
        return (e for e in self.entries if e.system == system)

    def get(self, system: str, code: str) -> Entry | None:
        return self._by_code.get((system, code))

    def tables(self) -> tuple[list[SystemRange], list[list], list[list]]:
        """The manifest's system ranges and the catalog's ``concepts`` rows
        ``[system, code, display, active, kind, billable, parent rows]`` and ``labels`` rows
        ``[concept row, text, label kind, origin, knowledge source]``."""
        ranges: list[SystemRange] = []
        concepts: list[list] = []
        labels: list[list] = []
        for system in self.systems:
            start = len(labels)
            active_stop = start
            count = 0
            for entry in self.of(system.key):
                concepts.append(
                    [entry.system, entry.code, entry.display, entry.active, entry.kind, entry.billable, entry.parents]
                )
                labels.extend([entry.row, d.text, d.kind, d.origin, d.knowledge] for d in entry.labels)
                if entry.active:
                    active_stop = len(labels)
                count += 1
            ranges.append(
                SystemRange(system.key, system.uri, system.name, system.version, start, active_stop, len(labels), count)
            )
        return ranges, concepts, labels


def read_catalog(reader: StoreReader, systems: list[SystemVersion], progress: Progress) -> Catalog:
    entries: list[Entry] = []
    for system in systems:
        task = progress.add_task(f"read {system.key}", total=system.concept_count)
        by_status: dict[bool, list[Concept]] = {True: [], False: []}
        for concept in reader.iter_concepts(system):
            by_status[concept.active].append(concept)
            progress.advance(task)
        first = len(entries)
        for concept in by_status[True] + by_status[False]:
            entries.append(_entry(len(entries), system.key, concept))
        rows = {entry.code: entry.row for entry in entries[first:]}
        for entry, concept in zip(entries[first:], by_status[True] + by_status[False], strict=True):
            entry.parents = sorted(rows[code] for code in concept.parents if code in rows)
    return Catalog(systems, entries)


def _entry(row: int, system: str, concept: Concept) -> Entry:
    return Entry(
        row,
        system,
        concept.code,
        concept.display,
        concept.active,
        concept.kind,
        concept.properties.get("billable"),
        list(concept.xrefs),
        concept.label_designations(),
    )
