"""Building bundles: contents, idempotence, atomic switch, resume, integrity."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from app.search.scope import Scope
from app.search.service import SearchService
from app.search.values import Mode
from app.settings import Settings
from indexer import embeddings, lexical
from indexer.bundle import Bundle, BundleError, current_bundle, read_manifest
from indexer.cli import cli
from indexer.encoders import FakeEncoder
from indexer.pipeline import BuildError, build_bundle
from indexer.store import StoreReader


def _build(settings: Settings, toy_reader: StoreReader, **options):
    return build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "toyicd"], show_progress=False, **options)


def test_bundle_contents(settings: Settings, toy_reader: StoreReader) -> None:
    settings.knowledge.lay_terms = False  # the toy's own labels (21) and the abbreviations'
    result = _build(settings, toy_reader)
    assert result.built and result.labels == 31
    bundle = Bundle(current_bundle(settings.bundles_dir))
    manifest = bundle.manifest
    assert manifest.record() == json.loads((bundle.directory / "manifest.json").read_text())  # the keys the build set
    assert (manifest.encoder.id, manifest.encoder.precision) == ("fake-hash-32", "float")
    assert manifest.dimension == 32
    assert (manifest.vector.backend, manifest.vector.kind) == ("faiss-hnsw", "hnsw")  # auto: by size
    assert manifest.vector.recall_at_10 == 1.0  # measured at build against the exact scan (31 labels: exact)
    assert manifest.lexical.backend == "tantivy"
    assert (manifest.counts.concepts, manifest.counts.labels) == (13, 31)
    stages = {"catalog", "knowledge", "embed", "lineage", "vector_index", "lexical_index", "chargram_index", "vocabulary"}
    assert set(manifest.build_seconds) == stages
    toy = bundle.systems["toy"]
    # Active concepts' labels first: the one obsolete concept's single label sits at the end.
    assert (toy.start, toy.active_stop, toy.stop, toy.concepts) == (0, 16, 17, 8)
    assert bundle.label_text[16] == "obsolete Rapid pulse"
    assert bundle.systems["toyicd"].label_range(include_inactive=False) == (17, 31)
    assert len(bundle.vectors) == 31
    # The abbreviation table's rows found their meanings by name, and say where they came from.
    added = {(bundle.concepts[bundle.label_concept[i]].code, bundle.label_text[i]): bundle.label_origin[i]
             for i in range(len(bundle.label_text)) if bundle.label_knowledge[i] == "abbreviations"}
    assert set(added) == {
        ("I10", "HTN"), ("I10", "HBP"), ("I10", "HT"), ("I21", "MI"), ("I21", "AMI"), ("I21.0", "AWMI"), ("T:2", "tachy"),
        ("R00.0", "tachy"), ("T:3", "brady"), ("T:4", "HL"),
    }
    assert added[("I21", "MI")].endswith("MI = myocardial infarction | acute myocardial infarction")
    assert manifest.knowledge["abbreviations"]["labels"] == 10
    assert "lay_terms" not in manifest.knowledge


def test_same_inputs_do_not_rebuild_and_force_switches(settings: Settings, toy_reader: StoreReader) -> None:
    first = _build(settings, toy_reader)
    again = _build(settings, toy_reader)
    assert (again.built, again.bundle_id) == (False, first.bundle_id)
    forced = _build(settings, toy_reader, force=True)
    assert forced.built and forced.bundle_id != first.bundle_id
    assert current_bundle(settings.bundles_dir) == forced.directory


def test_failed_build_leaves_previous_bundle_serving(settings, toy_reader, monkeypatch) -> None:
    first = _build(settings, toy_reader)

    class Broken:
        def build(self, directory, labels):
            raise OSError("disk full")

    monkeypatch.setitem(lexical.BUILDERS, "tantivy", Broken)
    with pytest.raises(OSError, match="disk full"):
        _build(settings, toy_reader, force=True)
    assert current_bundle(settings.bundles_dir) == first.directory
    assert Bundle(first.directory).id == first.bundle_id
    finished = [p.name for p in settings.bundles_dir.iterdir() if not p.name.startswith(".")]
    assert sorted(finished) == sorted([first.bundle_id, "current"])


def test_a_build_killed_after_its_lexical_stage_then_rerun_indexes_each_label_once(settings, toy_reader, monkeypatch) -> None:
    from indexer import pipeline

    def killed(directory, texts):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "build_chargrams", killed)
    with pytest.raises(KeyboardInterrupt):
        _build(settings, toy_reader)
    monkeypatch.undo()
    bundle = Bundle(_build(settings, toy_reader).directory)
    hits = bundle.lexical.search("heart", 100, (0, len(bundle.label_text)))
    ids = [label for label, _ in hits]
    assert ids and len(ids) == len(set(ids))


def test_interrupted_embedding_resumes_from_checkpoints(settings, toy_reader, monkeypatch) -> None:
    monkeypatch.setattr(embeddings, "CHUNK", 8)
    settings.knowledge.lay_terms = False
    encoder = FakeEncoder(32)
    calls: list[int] = []
    original = encoder.encode

    def interrupted(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(texts)

    monkeypatch.setattr(encoder, "encode", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_bundle(settings, toy_reader, encoder, ["toy", "toyicd"], show_progress=False)
    assert current_bundle(settings.bundles_dir) is None
    calls.clear()
    monkeypatch.setattr(encoder, "encode", lambda texts: calls.append(len(texts)) or original(texts))
    result = build_bundle(settings, toy_reader, encoder, ["toy", "toyicd"], show_progress=False)
    assert result.built
    assert calls == [8, 8, 6]  # 30 distinct labels ("tachy" twice) in chunks of 8: the first chunk came from its checkpoint
    calls.clear()
    settings.vector.backend = "numpy"  # new index settings, same model and labels: nothing re-embedded
    rebuilt = build_bundle(settings, toy_reader, encoder, ["toy", "toyicd"], show_progress=False)
    assert rebuilt.built and rebuilt.bundle_id != result.bundle_id
    assert calls == []
    settings.knowledge.abbreviations = False  # fewer labels, all of them embedded before
    without = build_bundle(settings, toy_reader, encoder, ["toy", "toyicd"], show_progress=False)
    assert without.built and without.labels == 21 and calls == []


def test_unknown_system_is_refused(settings: Settings, toy_reader: StoreReader) -> None:
    with pytest.raises(BuildError, match=r"not in the store: snomedct \(loaded: toy, toyicd\)"):
        build_bundle(settings, toy_reader, FakeEncoder(32), ["toy", "snomedct"], show_progress=False)


LABEL_TEXTS = "catalog/label_text.bytes.npy"


def test_tampered_bundle_is_refused(settings: Settings, toy_reader: StoreReader) -> None:
    directory = _build(settings, toy_reader).directory
    with (directory / LABEL_TEXTS).open("ab") as texts:
        texts.write(b"tampered")
    with pytest.raises(BundleError, match=f"files do not match the manifest: {LABEL_TEXTS}"):
        Bundle(directory)


def test_a_manifest_that_does_not_validate_is_refused_naming_the_file_and_the_field(
    settings: Settings, toy_reader: StoreReader
) -> None:
    directory = _build(settings, toy_reader).directory
    path = directory / "manifest.json"
    written = json.loads(path.read_text())
    missing = {key: value for key, value in written.items() if key != "inputs_hash"}
    mistyped = {**written, "counts": {**written["counts"], "labels": "many"}}
    for manifest, problem in (
        (missing, "inputs_hash: Field required"),
        (mistyped, "counts.labels: Input should be a valid integer"),
    ):
        path.write_text(json.dumps(manifest))
        with pytest.raises(BundleError, match=re.escape(f"{path}: not a valid manifest ({problem}")):
            Bundle(directory)


def test_verify_checks_contents_that_opening_does_not(settings: Settings, toy_reader: StoreReader) -> None:
    """Opening checks sizes (a second for any bundle); ``indexer verify`` also checks each file's
    sha256 and catches a change that keeps the size."""
    directory = _build(settings, toy_reader).directory
    texts = directory / LABEL_TEXTS
    original = texts.read_bytes()
    texts.write_bytes(original.replace(b"Tachycardia", b"Tachycardie", 1))
    bundle = Bundle(directory)
    assert "Tachycardie" in bundle.label_text
    result = CliRunner().invoke(cli, ["verify", str(directory)])
    assert result.exit_code == 1
    assert f"{directory.name}: files do not match the manifest: {LABEL_TEXTS}" in "".join(result.output.split("\n"))
    texts.write_bytes(original)
    result = CliRunner().invoke(cli, ["verify", str(directory)])
    labels = read_manifest(directory).counts.labels
    said = " ".join(result.output.split())
    assert result.exit_code == 0 and f"files match the manifest; catalog and indexes hold its {labels} labels" in said


def test_verify_refuses_indexes_that_hold_another_number_of_labels_than_the_manifest(
    settings: Settings, toy_reader: StoreReader
) -> None:
    """A build rerun over a reused staging directory once published a BM25 index holding every label twice."""
    directory = _build(settings, toy_reader).directory
    manifest = json.loads((directory / "manifest.json").read_text())
    labels = manifest["counts"]["labels"]
    manifest["counts"]["labels"] = labels // 2
    (directory / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(cli, ["verify", str(directory)])
    expected = (
        f"the manifest records {labels // 2} labels, but the catalog holds {labels}, the vector index holds {labels},"
        f" the lexical index holds {labels}"
    )
    assert result.exit_code == 1 and expected in " ".join(result.output.split())


def test_a_bundle_above_the_size_limit_gets_ivfpq_and_ranks_as_hnsw(settings: Settings, toy_reader: StoreReader) -> None:
    """``kind=auto`` compresses a bundle above ``compress_above`` labels (here: every bundle),
    records the kind built, and the ranking core ranks from its float16 copy as it ranks from the
    HNSW index's float32 vectors."""
    hnsw = SearchService(Bundle(_build(settings, toy_reader).directory), FakeEncoder(32), settings.search)
    settings.vector.compress_above = 0
    compressed = _build(settings, toy_reader)
    manifest = read_manifest(compressed.directory)
    assert (manifest.vector.kind, manifest.vector.backend) == ("ivfpq", "faiss-ivfpq")
    assert {"vectors.ivfpq.faiss", "vectors.sq4.faiss", "vectors.sq4.npy", "vectors.f16.npy"} <= set(manifest.files)
    assert "vectors.faiss" not in manifest.files
    ivfpq = SearchService(Bundle(compressed.directory), FakeEncoder(32), settings.search)
    for query in ("fast heart rate", "high blood pressure", "hearing loss"):
        for mode in Mode:
            expected = [(r.row, round(r.score, 2)) for r in hnsw.rank(query, Scope(), 5, mode).rows]
            assert [(r.row, round(r.score, 2)) for r in ivfpq.rank(query, Scope(), 5, mode).rows] == expected != []
