"""The bundle: everything the app serves from, in one directory with a ``manifest.json``.

Layout of ``{data_dir}/bundles/``::

    current -> 20261121T160000Z-1a2b3c4d   (symlink, switched atomically)
    20261121T160000Z-1a2b3c4d/
        manifest.json    encoder, dimension, systems and their label ranges, backends, file hashes
        catalog.json     concepts [system, code, display, active, kind, billable, parent rows] and
                         labels [concept row, text, label kind, origin, knowledge source]
        alignments.json  [source row, target row, score, method, evidence] between systems
        entry_terms.json [label key, source, id, heading, term]: another thesaurus's entry terms
                         (MeSH), which bridge a query to their heading
        vectors.*        the vector index (backend-specific file)
        lexical/         the lexical index
        chargrams/       the character n-gram index (typo-tolerant channel)
        model/           a copy of the encoder's model directory

With the Elasticsearch backends, the manifest's ``lexical`` and ``vector`` sections name the
cluster index (``index``, ``alias``) and the embedded copy kept for fallback (``fallback``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from indexer.lexical import LexicalIndex, open_lexical
from indexer.records import Designation, DesignationUse
from indexer.lexical.chargrams import DIRECTORY as CHARGRAMS
from indexer.lexical.chargrams import CharGramIndex
from indexer.settings import Settings
from indexer.vector import VectorIndex, open_vector_index
from indexer.errors import IndexerError

MANIFEST = "manifest.json"
CATALOG = "catalog.json"
ALIGNMENTS = "alignments.json"
ENTRY_TERMS = "entry_terms.json"
CURRENT = "current"
FORMAT_VERSION = 4


class BundleError(IndexerError, RuntimeError):
    """A bundle that is missing, incomplete or does not match its manifest."""


@dataclass(frozen=True)
class SystemRange:
    """Where a code system's labels sit in the label table: active concepts first."""

    key: str
    uri: str
    name: str
    version: str
    start: int
    active_stop: int  # labels of inactive concepts follow, up to ``stop``
    stop: int
    concepts: int

    def label_range(self, include_inactive: bool) -> tuple[int, int]:
        return (self.start, self.stop if include_inactive else self.active_stop)


@dataclass(frozen=True)
class CatalogConcept:
    system: str
    code: str
    display: str
    active: bool
    kind: str | None  # ICD-10-CM: chapter, block, category, code; None where a system has no kinds
    billable: bool | None
    parents: tuple[int, ...]  # catalog rows

    @property
    def grouping(self) -> bool:
        """A chapter or block: a range of codes, never a code to record (left out unless asked)."""
        return self.kind in GROUPING_KINDS


GROUPING_KINDS = frozenset({"chapter", "block"})
_CODE_NOISE = re.compile(r"[\s.:_-]+")


def ancestors(row: int, parents: Callable[[int], Iterable[int]]) -> set[int]:
    """Every row above ``row``, following ``parents`` (catalog rows of a row's parents)."""
    seen: set[int] = set()
    frontier = list(parents(row))
    while frontier:
        parent = frontier.pop()
        if parent not in seen:
            seen.add(parent)
            frontier.extend(parents(parent))
    return seen


def code_key(text: str) -> str:
    """A code as typed in any usual form, for lookup: ``I21.9``, ``i219`` → ``I219``;
    ``HP_0001649``, ``hp:0001649`` → ``HP0001649``."""
    return _CODE_NOISE.sub("", text.strip().upper())


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_hashes(directory: Path) -> dict[str, str]:
    """sha256 of every file under ``directory`` but the manifest, by relative path."""
    return {
        str(path.relative_to(directory)): sha256_file(path)
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }


@dataclass(frozen=True)
class EntryTerm:
    """A term another thesaurus files under one of its headings ("cold sore" under MeSH D013283
    Herpes Labialis), keyed by :func:`~indexer.lexical.normalise.label_key` in the bundle."""

    source: str
    id: str
    heading: str
    term: str


class Bundle:
    """An opened, verified bundle: catalog in memory, indexes ready to search."""

    def __init__(self, directory: Path, settings: Settings | None = None) -> None:
        settings = settings or Settings()
        self.directory = directory.resolve()
        self.manifest = read_manifest(self.directory)
        verify(self.directory, self.manifest)
        remote = [role for role in ("lexical", "vector") if self.manifest[role]["backend"] == "elasticsearch"]
        if remote and not settings.elasticsearch.url:
            raise BundleError(
                f"{directory}: its {' and '.join(remote)} index is in Elasticsearch; set TERMSEARCH_ELASTICSEARCH__URL"
            )
        catalog = json.loads((self.directory / CATALOG).read_text(encoding="utf-8"))
        self.concepts = [CatalogConcept(*row[:6], tuple(row[6])) for row in catalog["concepts"]]
        self.label_concept = np.asarray([row[0] for row in catalog["labels"]], dtype=np.int32)
        self.label_text: list[str] = [row[1] for row in catalog["labels"]]
        self.label_kind: list[str] = [row[2] for row in catalog["labels"]]
        self.label_origin: list[str | None] = [row[3] for row in catalog["labels"]]
        self.label_knowledge: list[str | None] = [row[4] for row in catalog["labels"]]
        self._label_starts = np.searchsorted(self.label_concept, np.arange(len(catalog["concepts"]) + 1))
        self.alignments = _alignments(json.loads((self.directory / ALIGNMENTS).read_text(encoding="utf-8")))
        terms = json.loads((self.directory / ENTRY_TERMS).read_text(encoding="utf-8"))
        self.entry_terms = {key: EntryTerm(*rest) for key, *rest in terms}
        self.systems = {s["key"]: SystemRange(**s) for s in self.manifest["systems"]}
        self.vectors: VectorIndex = open_vector_index(self.manifest["vector"], self.directory, settings)
        self.lexical: LexicalIndex = open_lexical(self.manifest["lexical"], self.directory / "lexical", settings)
        self.chargrams = CharGramIndex(self.directory / CHARGRAMS)
        self._by_code = {(c.system, c.code): i for i, c in enumerate(self.concepts)}
        self._by_code_key: dict[str, list[int]] = {}
        for row, concept in enumerate(self.concepts):
            self._by_code_key.setdefault(code_key(concept.code), []).append(row)
        self.kinds = np.asarray([c.kind or "" for c in self.concepts])
        self.kind_names = frozenset(self.kinds.tolist()) - {""}
        self.grouping = np.isin(self.kinds, list(GROUPING_KINDS))
        self.billable = np.fromiter((bool(c.billable) for c in self.concepts), dtype=bool, count=len(self.concepts))
        self._children = _children(self.concepts)

    @property
    def id(self) -> str:
        return self.manifest["bundle_id"]

    @property
    def model_dir(self) -> Path:
        return self.directory / "model"

    def concept_index(self, system: str, code: str) -> int | None:
        return self._by_code.get((system, code))

    def rows(self, system: str, include_inactive: bool) -> range:
        """The catalog rows of a system (active concepts first, so active-only is a prefix)."""
        start, stop = self.systems[system].label_range(include_inactive)
        if start == stop:
            return range(0)
        return range(int(self.label_concept[start]), int(self.label_concept[stop - 1]) + 1)

    def rows_by_code(self, text: str) -> list[int]:
        """Catalog rows whose code is ``text`` typed in any usual form (:func:`code_key`)."""
        key = code_key(text)
        return self._by_code_key.get(key, []) if key else []

    def descendants(self, row: int) -> frozenset[int]:
        """``row`` and every concept below it by is-a, from the catalog's own parent links (a
        breadth-first walk in memory: milliseconds, whatever the store)."""
        seen = {row}
        frontier = [row]
        while frontier:
            below = np.concatenate([self._children[r] for r in frontier])
            frontier = [r for r in dict.fromkeys(below.tolist()) if r not in seen]
            seen.update(frontier)
        return frozenset(seen)

    def labels_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The label ids of several catalog rows, in order, and for each the index in ``rows``
        of the concept it belongs to."""
        starts, stops = self._label_starts[rows], self._label_starts[rows + 1]
        counts = stops - starts
        owner = np.repeat(np.arange(len(rows)), counts)
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        return (np.repeat(starts, counts) + offsets).astype(np.int64), owner

    @cached_property
    def knowledge_sources(self) -> frozenset[str]:
        """The knowledge sources that gave this bundle's concepts labels."""
        return frozenset(source for source in self.label_knowledge if source is not None)

    def knowledge_labels(self, row: int) -> list[Designation]:
        """The labels a knowledge source built into this bundle gave the concept (alignments,
        abbreviations; supplements are in the store too), as designations with their origin."""
        return [
            Designation(self.label_text[i], DesignationUse.SYNONYM, "en", "EXACT", _type(self.label_kind[i]),
                        True, self.label_origin[i], self.label_knowledge[i])
            for i in self.concept_labels(row)
            if self.label_knowledge[i] is not None
        ]

    def ancestors(self, row: int) -> set[int]:
        """Every concept above ``row`` by is-a."""
        return ancestors(row, lambda r: self.concepts[r].parents)

    def concept_labels(self, concept: int) -> range:
        """The label ids of a catalog concept: each concept's labels are one run of ids, in
        concept order (``label_concept`` is sorted)."""
        return range(int(self._label_starts[concept]), int(self._label_starts[concept + 1]))


@dataclass(frozen=True)
class AlignedConcept:
    """A concept of another system that means the same (``indexer.knowledge.alignment``)."""

    row: int
    score: float
    method: str  # xref, label, dense
    evidence: str


def _alignments(rows: list[list]) -> dict[int, list[AlignedConcept]]:
    """Both directions of each alignment, by catalog row, strongest first."""
    out: dict[int, list[AlignedConcept]] = {}
    for source, target, score, method, evidence in rows:
        out.setdefault(source, []).append(AlignedConcept(target, score, method, evidence))
        out.setdefault(target, []).append(AlignedConcept(source, score, method, evidence))
    for aligned in out.values():
        aligned.sort(key=lambda a: -a.score)
    return out


def _type(kind: str) -> str | None:
    """The designation type behind a label kind ("layperson"; "exact synonym" has none)."""
    return None if kind.endswith("synonym") else kind


def _children(concepts: list[CatalogConcept]) -> list[np.ndarray]:
    children: list[list[int]] = [[] for _ in concepts]
    for row, concept in enumerate(concepts):
        for parent in concept.parents:
            children[parent].append(row)
    return [np.asarray(rows, dtype=np.int64) for rows in children]


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    if not path.is_file():
        raise BundleError(f"{directory}: no {MANIFEST}; is this a bundle?")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BundleError(f"{path}: not valid JSON ({exc})") from exc
    if manifest.get("format_version") != FORMAT_VERSION:
        raise BundleError(f"{path}: format_version {manifest.get('format_version')!r}, expected {FORMAT_VERSION}")
    return manifest


def verify(directory: Path, manifest: dict[str, Any]) -> None:
    """Every file the manifest lists exists with its recorded hash, and no other file."""
    recorded = manifest.get("files", {})
    actual = file_hashes(directory)
    if actual != recorded:
        bad = sorted(set(recorded) ^ set(actual) | {f for f in recorded if actual.get(f, recorded[f]) != recorded[f]})
        raise BundleError(f"{directory}: files do not match the manifest: {', '.join(bad[:5])}")


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    manifest = {**manifest, "format_version": FORMAT_VERSION, "files": file_hashes(directory)}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")


def recorded_indexes(bundles_dir: Path) -> set[str]:
    """The remote (Elasticsearch) index names that the bundles on disk record."""
    names: set[str] = set()
    for directory in _finished(bundles_dir):
        try:
            manifest = read_manifest(directory)
        except BundleError:  # cannot be served, so neither can its indexes
            continue
        names.update(manifest[role]["index"] for role in ("lexical", "vector") if "index" in manifest[role])
    return names


def current_bundle(bundles_dir: Path) -> Path | None:
    link = bundles_dir / CURRENT
    return link.resolve() if link.exists() else None


def publish(staging: Path, bundles_dir: Path, bundle_id: str, keep: int = 2) -> Path:
    """Move a finished staging directory into place and point ``current`` at it atomically.

    The old bundle keeps serving until the symlink is replaced (``os.replace`` is atomic on POSIX).
    """
    final = bundles_dir / bundle_id
    staging.rename(final)
    tmp_link = bundles_dir / f".{CURRENT}.tmp"
    tmp_link.unlink(missing_ok=True)
    tmp_link.symlink_to(bundle_id)
    os.replace(tmp_link, bundles_dir / CURRENT)
    _prune(bundles_dir, keep)
    return final


def _finished(bundles_dir: Path) -> list[Path]:
    """Published bundle directories, oldest first (not ``current``, not staging)."""
    return sorted(
        (p for p in bundles_dir.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")),
        key=lambda p: p.name,
    )


def _prune(bundles_dir: Path, keep: int) -> None:
    current = current_bundle(bundles_dir)
    for old in _finished(bundles_dir)[:-keep]:
        if old != current:
            shutil.rmtree(old, ignore_errors=True)
