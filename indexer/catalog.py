"""The catalog while a bundle is built: every concept of the selected systems with its labels.

Read from the store (:func:`read_catalog`), enriched by the knowledge sources (which only add
labels, so catalog rows never move), then written out as the bundle's ``catalog/`` columns
(:meth:`Catalog.tables`, :func:`write_columns`; read back by :class:`indexer.bundle.Bundle`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.progress import Progress

from indexer import columns
from indexer.bundle import SystemRange, code_key
from indexer.lexical.normalise import NAME_KINDS, fold, is_abbreviation, name_key
from indexer.records import Concept, Designation
from indexer.store import StoreReader, SystemVersion


@dataclass(slots=True)
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


def write_columns(directory: Path, concepts: list[list], labels: list[list], prior: np.ndarray) -> None:
    """The tables of :meth:`Catalog.tables` as the bundle's columns (:mod:`indexer.columns`),
    replacing what an interrupted build left there, with each concept's ``prior``
    (:func:`indexer.knowledge.hpoa.prior`)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    names: dict[str, list] = {}
    systems, codes, displays, active, kinds, billable, parents = zip(*concepts, strict=True) if concepts else ([],) * 7
    columns.write_category(directory, "system", systems, names)
    columns.write_text(directory, "code", codes)
    columns.write_text(directory, "display", displays)
    np.save(directory / "active.npy", np.asarray(active, dtype=bool))
    np.save(directory / "prior.npy", np.asarray(prior, dtype=np.float32))
    columns.write_category(directory, "kind", kinds, names)
    columns.write_category(directory, "billable", billable, names)
    columns.write_links(directory, "parents", parents)
    children: list[list[int]] = [[] for _ in concepts]
    for row, above in enumerate(parents):
        for parent in above:
            children[parent].append(row)
    columns.write_links(directory, "children", children)
    columns.write_code_index(directory, "by_code", [f"{system}\0{code}" for system, code in zip(systems, codes, strict=True)])
    columns.write_code_index(directory, "by_code_key", [code_key(code) for code in codes])
    owners, texts, label_kinds, origins, knowledge = zip(*labels, strict=True) if labels else ([],) * 5
    np.save(directory / "label_concept.npy", np.asarray(owners, dtype=np.int32))
    columns.write_text(directory, "label_text", texts)
    columns.write_category(directory, "label_kind", label_kinds, names)
    columns.write_text(directory, "label_origin", origins)
    columns.write_category(directory, "label_knowledge", knowledge, names)
    abbreviations = [is_abbreviation(kind, text) for kind, text in zip(label_kinds, texts, strict=True)]
    np.save(directory / "label_abbreviation.npy", np.asarray(abbreviations, dtype=bool))
    named = [
        (label, key) for label, kind in enumerate(label_kinds) if kind in NAME_KINDS and (key := name_key(texts[label])) != "="
    ]
    columns.write_code_index(directory, "by_name_key", [key for _, key in named], [label for label, _ in named])
    columns.write_names(directory, names)


def read_catalog(reader: StoreReader, systems: list[SystemVersion], progress: Progress) -> Catalog:
    """Every concept of ``systems``, active ones first in each; each record becomes its
    :class:`Entry` as it is read (the store's records are not kept)."""
    entries: list[Entry] = []
    for system in systems:
        task = progress.add_task(f"read {system.key}", total=system.concept_count)
        by_status: dict[bool, list[tuple[Entry, tuple[str, ...]]]] = {True: [], False: []}
        for concept in reader.iter_concepts(system):
            by_status[concept.active].append((_entry(-1, system.key, concept), tuple(concept.parents)))
            progress.advance(task)
        first = len(entries)
        ordered = by_status[True] + by_status[False]
        del by_status
        for entry, _ in ordered:
            entry.row = len(entries)
            entries.append(entry)
        rows = {entry.code: entry.row for entry in entries[first:]}
        for entry, parents in ordered:
            entry.parents = sorted(rows[code] for code in parents if code in rows)
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
