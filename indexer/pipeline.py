"""Store → encoder → vector + lexical indexes → a published bundle.

The build writes into a hidden staging directory and publishes it only when complete, so a
failed or interrupted build leaves the previous bundle serving. Embeddings are checkpointed in
chunks under ``{data_dir}/cache/embeddings``: re-running the build resumes where it stopped, and
a rebuild with the same model and labels re-embeds nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from indexer.bundle import (
    CATALOG,
    BundleError,
    FORMAT_VERSION,
    SystemRange,
    current_bundle,
    publish,
    read_manifest,
    recorded_indexes,
    write_manifest,
)
from indexer.encoders import Encoder
from indexer.lexical import Label, lexical_builder
from indexer.lexical.chargrams import DIRECTORY as CHARGRAMS
from indexer.lexical.chargrams import build_chargrams
from indexer.records import Concept
from indexer.remote import BackendUnavailable
from indexer.settings import Settings
from indexer.store import StoreReader, SystemVersion
from indexer.vector import build_vector_index
from indexer.errors import IndexerError

if TYPE_CHECKING:
    from indexer.elastic import BundleIndexes

CHUNK = 8192  # labels per embedding checkpoint


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
    inputs = _inputs(settings, encoder, selected)
    inputs_hash = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    bundles_dir = settings.bundles_dir
    bundles_dir.mkdir(parents=True, exist_ok=True)

    current = current_bundle(bundles_dir)
    manifest = _readable_manifest(current) if current is not None and not force else {}
    if manifest.get("inputs_hash") == inputs_hash:
        return BuildResult(current, manifest["bundle_id"], False, manifest["counts"]["labels"], {})

    staging = bundles_dir / f".staging-{inputs_hash[:16]}"
    staging.mkdir(exist_ok=True)
    bundle_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S.%fZ}-{inputs_hash[:8]}"
    remote = _remote(settings, bundle_id)
    timer = _StageTimer()
    with _progress(show_progress) as progress:
        with timer("catalog"):
            ranges, concepts, labels = _catalog(reader, selected, progress)
            (staging / CATALOG).write_text(
                json.dumps({"concepts": concepts, "labels": labels}, ensure_ascii=False), encoding="utf-8"
            )
        with timer("embed"):
            texts = [label[1] for label in labels]
            cache = _embedding_cache(settings, encoder, texts)
            vectors = _embed(encoder, texts, cache, progress)
        with timer("vector_index"):
            index = build_vector_index(vectors, settings.vector, remote)
            vector_entry = index.save(staging)
        with timer("lexical_index"):
            rows = (Label(i, text, *concepts[concept][:2]) for i, (concept, text, *_) in enumerate(labels))
            lexical_entry = lexical_builder(settings.lexical, remote).build(staging / "lexical", rows)
        with timer("chargram_index"):
            build_chargrams(staging / CHARGRAMS, texts)
    for stale in cache.parent.iterdir():
        if stale != cache:
            shutil.rmtree(stale, ignore_errors=True)
    if model_dir is not None:
        shutil.copytree(model_dir, staging / "model", dirs_exist_ok=True)

    write_manifest(
        staging,
        {
            "bundle_id": bundle_id,
            "created_at": datetime.now(UTC).isoformat(),
            "inputs_hash": inputs_hash,
            "encoder": inputs["encoder"] | {"bundled_model": model_dir is not None},
            "dimension": encoder.dimension,
            "systems": [asdict(r) for r in ranges],
            "vector": {**settings.vector.model_dump(), "backend": index.backend, **vector_entry},
            "lexical": {"backend": settings.lexical.backend, **lexical_entry},
            "counts": {"concepts": len(concepts), "labels": len(labels)},
            "build_seconds": timer.seconds,
        },
    )
    final = publish(staging, bundles_dir, bundle_id)
    if remote is not None:
        remote.publish(keep=recorded_indexes(bundles_dir))
    return BuildResult(final, bundle_id, True, len(labels), timer.seconds)


def _readable_manifest(directory: Path) -> dict:
    """The current bundle's manifest, or {} when it cannot be read (an older format): rebuild."""
    try:
        return read_manifest(directory)
    except BundleError:
        return {}


def _select_systems(reader: StoreReader, keys: Sequence[str]) -> list[SystemVersion]:
    loaded = {s.key: s for s in reader.systems()}
    missing = [k for k in keys if k not in loaded]
    if missing:
        raise BuildError(
            f"not in the store: {', '.join(missing)} (loaded: {', '.join(loaded) or 'none'}); "
            "run `python -m indexer load NAME` first"
        )
    return [loaded[k] for k in keys]


def _inputs(settings: Settings, encoder: Encoder, systems: list[SystemVersion]) -> dict:
    inputs = {
        "format_version": FORMAT_VERSION,
        "encoder": {"id": encoder.id, "sha256": encoder.sha256, "dimension": encoder.dimension},
        "systems": [[s.key, s.version, s.version_id] for s in systems],
        "vector": settings.vector.model_dump(),
        "lexical": settings.lexical.model_dump(),
    }
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


def _catalog(
    reader: StoreReader, systems: list[SystemVersion], progress: Progress
) -> tuple[list[SystemRange], list[list], list[list]]:
    """Concept and label tables (the :class:`~indexer.bundle.Catalog` rows); per system, labels
    of active concepts come first. A concept's parents are catalog rows of the same system."""
    ranges: list[SystemRange] = []
    concepts: list[list] = []
    labels: list[list] = []
    for system in systems:
        task = progress.add_task(f"read {system.key}", total=system.concept_count)
        by_status: dict[bool, list] = {True: [], False: []}
        for concept in reader.iter_concepts(system):
            by_status[concept.active].append(concept)
            progress.advance(task)
        start, first_row = len(labels), len(concepts)
        for concept in by_status[True]:
            _append(concept, system.key, concepts, labels)
        active_stop = len(labels)
        for concept in by_status[False]:
            _append(concept, system.key, concepts, labels)
        rows = {row[1]: number for number, row in enumerate(concepts[first_row:], start=first_row)}
        for row in concepts[first_row:]:
            row[-1] = sorted(rows[code] for code in row[-1] if code in rows)
        count = len(by_status[True]) + len(by_status[False])
        ranges.append(
            SystemRange(system.key, system.uri, system.name, system.version, start, active_stop, len(labels), count)
        )
    return ranges, concepts, labels


def _append(concept: Concept, system: str, concepts: list[list], labels: list[list]) -> None:
    """``[system, code, display, active, kind, billable, parent codes]`` (the codes become rows
    once the system is read) and ``[concept row, text, label kind, origin]`` per label."""
    labels.extend([len(concepts), d.text, d.kind, d.origin] for d in concept.label_designations())
    billable = concept.properties.get("billable")
    concepts.append([system, concept.code, concept.display, concept.active, concept.kind, billable, concept.parents])


def _embedding_cache(settings: Settings, encoder: Encoder, texts: list[str]) -> Path:
    """Checkpoint directory keyed by the encoder and the label texts, so that an interrupted build
    resumes and a rebuild that changes only index settings re-embeds nothing."""
    digest = hashlib.sha256(f"{encoder.id}\0{encoder.sha256}".encode())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return settings.data_dir / "cache" / "embeddings" / digest.hexdigest()[:24]


def _embed(encoder: Encoder, texts: list[str], checkpoint_dir: Path, progress: Progress) -> np.ndarray:
    """Encode each distinct text once, checkpointing every ``CHUNK`` texts."""
    unique = list(dict.fromkeys(texts))
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    task = progress.add_task("embed labels", total=len(unique))
    parts = []
    for number, start in enumerate(range(0, len(unique), CHUNK)):
        chunk_file = checkpoint_dir / f"{number:05d}.npy"
        batch = unique[start : start + CHUNK]
        if chunk_file.exists():
            part = np.load(chunk_file)
        else:
            part = np.concatenate(
                [_encode_step(encoder, batch[i : i + 256], progress, task) for i in range(0, len(batch), 256)]
            )
            np.save(chunk_file.with_suffix(".tmp.npy"), part)
            chunk_file.with_suffix(".tmp.npy").rename(chunk_file)
        if len(part) != len(batch):
            raise BuildError(f"{chunk_file}: checkpoint holds {len(part)} vectors, expected {len(batch)}")
        progress.update(task, completed=start + len(batch))
        parts.append(part)
    matrix = np.concatenate(parts) if parts else np.empty((0, encoder.dimension), np.float32)
    row = {text: i for i, text in enumerate(unique)}
    return matrix[[row[t] for t in texts]]


def _encode_step(encoder: Encoder, batch: list[str], progress: Progress, task: int) -> np.ndarray:
    vectors = encoder.encode(batch)
    progress.advance(task, len(batch))
    return vectors


class _StageTimer:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.seconds[stage] = round(time.perf_counter() - start, 3)


@contextmanager
def _progress(enabled: bool) -> Iterator[Progress]:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=not enabled) as progress:
        yield progress
