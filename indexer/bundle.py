"""The bundle: everything the app serves from, in one directory with a ``manifest.json``.

Layout of ``{data_dir}/bundles/``::

    current -> 20261121T160000Z-1a2b3c4d   (symlink, switched atomically)
    20261121T160000Z-1a2b3c4d/
        manifest.json    encoder, dimension, systems and their label ranges, backends, each file's
                         size and sha256 (sizes checked at open, hashes by ``indexer verify``):
                         :class:`indexer.manifest.BundleManifest`
        catalog/         the catalog's columns (indexer.columns): of concepts (system, code,
                         display, active, kind, billable, parent and child rows, code lookups)
                         and of labels (concept row, text, label kind, origin, knowledge source)
        alignments.json  [source row, target row, score, method, evidence] between systems
        entry_terms.json [label key, source, id, heading, term]: another thesaurus's entry terms
                         (MeSH), which bridge a query to their heading
        vectors.*        the vector index (backend-specific files; IVF-PQ adds a float16 copy of
                         the vectors it re-ranks from)
        lexical/         the lexical index
        chargrams/       the character n-gram index (typo-tolerant channel)
        vocabulary/      the labels' words: postings, stems, phonetic keys (completion, spelling)
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from indexer import columns
from indexer.errors import IndexerError
from indexer.lexical import LexicalIndex, open_lexical
from indexer.lexical.chargrams import DIRECTORY as CHARGRAMS
from indexer.lexical.chargrams import CharGramIndex
from indexer.lexical.normalise import name_key
from indexer.lexical.vocabulary import DIRECTORY as VOCABULARY
from indexer.lexical.vocabulary import Vocabulary
from indexer.manifest import FORMAT_VERSION, BundleManifest, FileRecord, SystemRange
from indexer.records import Designation, DesignationUse
from indexer.settings import Settings
from indexer.vector import VectorIndex, open_vector_index

MANIFEST = "manifest.json"
CATALOG = "catalog"  # the catalog's columns (indexer.columns)
ALIGNMENTS = "alignments.json"
ENTRY_TERMS = "entry_terms.json"
CURRENT = "current"


class BundleError(IndexerError, RuntimeError):
    """A bundle that is missing, incomplete or does not match its manifest."""


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
# Subtrees kept walked (a worker's callers ask the same few value sets and ancestors again and
# again); the largest, a million-concept root, is 4 MB.
SUBTREES_CACHED = 16
LABELS_BY_REPEAT = 64  # labels_admitted: more rows than one label in this many, and flags are repeated


class Concepts(Sequence[CatalogConcept]):
    """The catalog's concepts, a :class:`CatalogConcept` made when a row is read."""

    def __init__(self, table: Path, names: dict[str, list]) -> None:
        self._systems, self._kinds, self._billable = names["system"], names["kind"], names["billable"]
        self.system_codes = columns.array(table, "system")
        self.codes = columns.TextColumn(table, "code")
        self.displays = columns.TextColumn(table, "display")
        self.active = columns.array(table, "active")
        self.kind_codes = columns.array(table, "kind")
        self.billable_codes = columns.array(table, "billable")
        self.parents = columns.read_links(table, "parents")

    def __len__(self) -> int:
        return len(self.active)

    def __getitem__(self, row: int) -> CatalogConcept:  # type: ignore[override]
        row = int(row)
        if not -len(self) <= row < len(self):
            raise IndexError(row)
        row %= len(self)
        return CatalogConcept(
            self._systems[self.system_codes[row]],
            self.codes[row],
            self.displays[row],
            bool(self.active[row]),
            self._kinds[self.kind_codes[row]],
            self._billable[self.billable_codes[row]],
            tuple(self.parents[row].tolist()),
        )

    def __iter__(self) -> Iterator[CatalogConcept]:
        return (self[row] for row in range(len(self)))

    def system_code(self, row: int) -> str:
        return f"{self._systems[self.system_codes[row]]}\0{self.codes[row]}"

    def code_key(self, row: int) -> str:
        return code_key(self.codes[row])
_CODE_NOISE = re.compile(r"[\s.:_-]+")


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


def _bundle_files(directory: Path) -> dict[str, Path]:
    """Every file under ``directory`` but the manifest, by relative path."""
    paths = sorted(path for path in directory.rglob("*") if path.is_file() and path.name != MANIFEST)
    return {str(path.relative_to(directory)): path for path in paths}


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
        verify(self.directory, self.manifest, hashes=False)
        remote = [role for role, entry in self.manifest.indexes.items() if entry.backend == "elasticsearch"]
        if remote and not settings.elasticsearch.url:
            raise BundleError(
                f"{directory}: its {' and '.join(remote)} index is in Elasticsearch; set TERMSEARCH_ELASTICSEARCH__URL"
            )
        table = self.directory / CATALOG
        names = columns.read_names(table)
        self.concepts = Concepts(table, names)
        self.label_concept = columns.array(table, "label_concept")
        self.label_text = columns.TextColumn(table, "label_text")
        self.label_kind: Sequence[str] = columns.CategoryColumn(columns.array(table, "label_kind"), names["label_kind"])
        self.label_origin = columns.TextColumn(table, "label_origin")
        self.label_abbreviation = columns.array(table, "label_abbreviation")  # by type or by shape
        self.label_knowledge: columns.CategoryColumn[str | None] = columns.CategoryColumn(
            columns.array(table, "label_knowledge"), names["label_knowledge"]
        )
        self._label_starts = np.searchsorted(self.label_concept, np.arange(len(self.concepts) + 1))
        self._label_counts = np.diff(self._label_starts)
        self.alignments = _alignments(json.loads((self.directory / ALIGNMENTS).read_text(encoding="utf-8")))
        terms = json.loads((self.directory / ENTRY_TERMS).read_text(encoding="utf-8"))
        self.entry_terms = {key: EntryTerm(*rest) for key, *rest in terms}
        self.systems: dict[str, SystemRange] = {s.key: s for s in self.manifest.systems}
        self.vectors: VectorIndex = open_vector_index(self.manifest.vector.model_dump(), self.directory, settings)
        self.lexical: LexicalIndex = open_lexical(self.manifest.lexical.model_dump(), self.directory / "lexical", settings)
        # Above the size at which vectors are compressed, the n-gram matrices are mapped too.
        self.chargrams = CharGramIndex(self.directory / CHARGRAMS, mapped=len(self.label_concept) > settings.vector.compress_above)
        self.vocabulary = Vocabulary.load(self.directory / VOCABULARY)
        self._by_code = self._code_index(table, "by_code", self.concepts.system_code)
        self._by_code_key = self._code_index(table, "by_code_key", self.concepts.code_key)
        self._by_name_key = self._code_index(table, "by_name_key", lambda label: name_key(self.label_text[label]))
        self._system_names = np.asarray(names["system"], dtype=object)
        kind_names = np.asarray(["" if kind is None else kind for kind in names["kind"]])
        self.kinds = kind_names[self.concepts.kind_codes]
        self.kind_names = frozenset(kind_names.tolist()) - {""}
        self.grouping = np.isin(self.kinds, list(GROUPING_KINDS))
        self.billable = np.asarray([value is True for value in names["billable"]], dtype=bool)[self.concepts.billable_codes]
        self.prior = columns.array(table, "prior")  # how common each concept is (indexer.knowledge.hpoa)
        self._children = columns.read_links(table, "children")
        self.subtree = lru_cache(maxsize=SUBTREES_CACHED)(self._subtree)

    def verify_counts(self) -> None:
        """The catalog, the vector and the lexical index each hold as many labels as the manifest
        records (``indexer verify``): a build that indexed some twice, or lost some, is refused."""
        recorded = self.manifest.counts.labels
        held = {"catalog": len(self.label_concept), "vector index": len(self.vectors), "lexical index": len(self.lexical)}
        if wrong := {role: count for role, count in held.items() if count != recorded}:
            found = ", ".join(f"the {role} holds {count}" for role, count in wrong.items())
            raise BundleError(f"{self.directory}: the manifest records {recorded} labels, but {found}")

    @staticmethod
    def _code_index(table: Path, name: str, key_of: Callable[[int], str]) -> columns.CodeIndex:
        collisions = table / f"{name}.collisions.npy"  # not in a bundle built before they were recorded
        return columns.CodeIndex(
            columns.array(table, f"{name}.hashes"), columns.array(table, f"{name}.rows"), key_of,
            np.load(collisions) if collisions.is_file() else None,
        )

    @property
    def id(self) -> str:
        return self.manifest.bundle_id

    @property
    def model_dir(self) -> Path:
        return self.directory / "model"

    def concept_index(self, system: str, code: str) -> int | None:
        rows = self._by_code.get(f"{system}\0{code}")
        return rows[0] if rows else None

    def rows(self, system: str, include_inactive: bool) -> range:
        """The catalog rows of a system (active concepts first, so active-only is a prefix)."""
        start, stop = self.systems[system].label_range(include_inactive)
        if start == stop:
            return range(0)
        return range(int(self.label_concept[start]), int(self.label_concept[stop - 1]) + 1)

    def rows_by_code(self, text: str) -> list[int]:
        """Catalog rows whose code is ``text`` typed in any usual form (:func:`code_key`)."""
        key = code_key(text)
        return self._by_code_key.get(key) if key else []

    def labels_named(self, key: str) -> list[int]:
        """Labels that name their concept exactly (:data:`NAME_KINDS`) whose :func:`name_key` is ``key``."""
        return self._by_name_key.get(key)

    def children(self, row: int) -> list[int]:
        """The concepts directly below ``row`` by is-a."""
        return self._children[row].tolist()

    def _subtree(self, row: int) -> np.ndarray:
        """``row`` and every concept below it by is-a, as sorted catalog rows (read-only), from
        the catalog's own child links (a breadth-first walk over arrays: milliseconds for a
        million concepts); :attr:`subtree` is this with the last few kept."""
        seen = np.zeros(len(self.concepts), dtype=bool)
        seen[row] = True
        position = np.empty(len(self.concepts), dtype=np.int64)  # of a row in its level: one copy each goes on
        frontier = np.asarray([row], dtype=np.int64)
        while len(frontier):
            below = self._children.of(frontier)
            below = below[~seen[below]]
            at = np.arange(len(below))
            position[below] = at
            frontier = below[position[below] == at]  # a row below two of the level, once (no sort)
            seen[frontier] = True
        rows = np.flatnonzero(seen).astype(np.int32 if len(seen) < 2**31 else np.int64)
        rows.setflags(write=False)
        return rows

    def descendants(self, row: int) -> frozenset[int]:
        """:meth:`subtree` as a set, for set algebra (FHIR compose filters)."""
        return frozenset(self.subtree(row).tolist())

    def labels_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The label ids of several catalog rows, in order, and for each the index in ``rows``
        of the concept it belongs to."""
        starts, stops = self._label_starts[rows], self._label_starts[rows + 1]
        return columns.spans(starts, stops), np.repeat(np.arange(len(rows)), stops - starts)

    def name_labels(self, rows: np.ndarray) -> np.ndarray:
        """The label id of each catalog row's preferred name (a concept's first label)."""
        return self._label_starts[rows]

    def labels_admitted(self, mask: np.ndarray) -> np.ndarray:
        """The label ids, sorted, of the catalog rows ``mask`` admits: their label spans when they
        are few, else each concept's flag repeated over its labels (no gather over every label)."""
        rows = np.flatnonzero(mask)
        if len(rows) * LABELS_BY_REPEAT > len(self.label_concept):
            return np.flatnonzero(np.repeat(mask, self._label_counts))
        return self.labels_of(rows)[0]

    def lent(self, labels: np.ndarray) -> np.ndarray:
        """Per label id, whether a knowledge source lent it (it is not a name of the release)."""
        column = self.label_knowledge
        return ~np.isin(column.codes[labels], [i for i, source in enumerate(column.values) if source is None])

    def named_in_release(self, text: str) -> np.ndarray:
        """The catalog rows one of whose release names says ``text`` (:func:`name_key`: K75.9's
        "Hepatitis NOS" says "hepatitis"), sorted."""
        labels = np.asarray(self.labels_named(name_key(text)), dtype=np.int64)
        return np.unique(self.label_concept[labels[~self.lent(labels)]])

    @cached_property
    def knowledge_sources(self) -> frozenset[str]:
        """The knowledge sources that gave this bundle's concepts labels."""
        return frozenset(source for source in self.label_knowledge.values if source is not None)

    def knowledge_labels(self, row: int) -> list[Designation]:
        """The labels a knowledge source built into this bundle gave the concept (alignments,
        abbreviations; supplements are in the store too), as designations with their origin."""
        return [
            Designation(self.label_text[i], DesignationUse.SYNONYM, "en", "EXACT", _type(self.label_kind[i]),
                        True, self.label_origin[i], self.label_knowledge[i])
            for i in self.concept_labels(row)
            if self.label_knowledge[i] is not None
        ]

    def above_pairs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` positions in ``rows`` (distinct catalog rows) where ``rows[upper]``
        is above ``rows[lower]`` by is-a (one walk up from all of them at once)."""
        if len(rows) < 2:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        above = self.concepts.parents.closure(rows)
        source = np.repeat(np.arange(len(rows)), np.diff(above.offsets))
        order = np.argsort(rows)
        members = rows[order]
        at = np.minimum(np.searchsorted(members, above.rows), len(members) - 1)
        upper = order[at]
        hit = (members[at] == above.rows) & (upper != source)
        return source[hit], upper[hit]

    def system_of(self, rows: np.ndarray) -> np.ndarray:
        """The system key of each catalog row."""
        return self._system_names[self.concepts.system_codes[rows]]

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


def read_manifest(directory: Path) -> BundleManifest:
    """The bundle's manifest, of this format and valid; else a BundleError naming the file and the problem."""
    path = directory / MANIFEST
    if not path.is_file():
        raise BundleError(f"{directory}: no {MANIFEST}; is this a bundle?")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BundleError(f"{path}: not valid JSON ({exc})") from exc
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != FORMAT_VERSION:
        raise BundleError(f"{path}: format_version {version!r}, expected {FORMAT_VERSION}")
    try:
        return BundleManifest.model_validate(manifest)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, error['loc']))}: {error['msg']}" for error in exc.errors())
        raise BundleError(f"{path}: not a valid manifest ({problems})") from exc


def verify(directory: Path, manifest: BundleManifest, hashes: bool = True) -> None:
    """Every file the manifest lists exists with its recorded size and, with ``hashes``, its
    sha256 (``indexer verify``; a start or a swap checks sizes only: a second, not one a GB);
    no other file."""
    present = _bundle_files(directory)
    listed = manifest.files
    wrong = {name for name, record in listed.items() if name in present and not _matches(present[name], record, hashes)}
    if bad := sorted(set(listed) ^ set(present) | wrong):
        raise BundleError(f"{directory}: files do not match the manifest: {', '.join(bad[:5])}")


def _matches(path: Path, record: FileRecord, hashes: bool) -> bool:
    return path.stat().st_size == record.size and (not hashes or sha256_file(path) == record.sha256)


def write_manifest(directory: Path, manifest: BundleManifest) -> None:
    """Write ``manifest`` with this format's version and the size and sha256 of every file in ``directory``."""
    files = {
        name: FileRecord(size=path.stat().st_size, sha256=sha256_file(path)) for name, path in _bundle_files(directory).items()
    }
    manifest = manifest.model_copy(update={"format_version": FORMAT_VERSION, "files": files})
    (directory / MANIFEST).write_text(json.dumps(manifest.record(), indent=2, sort_keys=True), encoding="utf-8")


def recorded_indexes(bundles_dir: Path) -> set[str]:
    """The remote (Elasticsearch) index names that the bundles on disk record."""
    names: set[str] = set()
    for directory in _finished(bundles_dir):
        try:
            manifest = read_manifest(directory)
        except BundleError:  # cannot be served, so neither can its indexes
            continue
        names.update(entry.index for entry in manifest.indexes.values() if entry.index is not None)
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
