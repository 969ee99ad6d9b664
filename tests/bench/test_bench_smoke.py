"""Every benchmark script runs end to end on the toy ontology, in seconds (issue 35: benchmarks
that cannot rot): its own ``__main__`` path with small sizes, no figure asserted, and nothing
recorded (bench/RESULTS.md and HISTORY.md are written only with ``--record``)."""

from __future__ import annotations

import runpy
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import bench.common
from indexer.encoders import SHIPPED_MODEL_DIR, load_encoder
from indexer.pipeline import build_bundle
from indexer.settings import Settings
from indexer.store import StoreReader, load_source, make_engine, migrate
from tests.toy import ListSource, toy_sources

BENCH = Path(bench.common.__file__).parent
RECORDS = (bench.common.RESULTS, bench.common.HISTORY)
SYSTEMS = ("hpo", "icd10cm")  # the systems the scripts name

# Each script's arguments for a run of seconds on the toy bundle ("{tmp}": a fresh directory).
SMOKE: dict[str, tuple[str, ...]] = {
    "bench_alignment": (),
    "bench_ascent": ("--margins", "0,0.1", "--limit", "3"),
    "bench_autocomplete": ("--phrases", "2"),
    "bench_build": ("--concepts", "20"),
    "bench_builtin": (),
    "bench_detail_margin": ("--margins", "1e9,0.5", "--per-kind", "2"),
    "bench_encoder": ("--labels", "16", "--batch-size", "8", "--threads", "1", "--repeats", "1"),
    "bench_everyday": ("--per-kind", "3"),
    "bench_expand": ("--requests", "5", "--duration", "0.5"),
    "bench_feedback": ("--learned", "20", "--clients", "3", "--events", "2", "--searches", "3"),
    "bench_fuzz": ("--examples", "1", "--phases", "examples"),
    "bench_hostile": (),
    "bench_load": ("--clients", "2", "--duration", "1", "--sample", "0.5"),  # its 60 s warm-up outlasts the run
    "bench_loaders": ("--scale", "0.0001"),
    "bench_match": ("--limit", "3"),
    "bench_precision": ("--labels", "16", "--int8-labels", "8", "--batch-sizes", "8"),
    "bench_prior": ("--weights", "0,1", "--per-kind", "2"),
    "bench_profile": ("--per-kind", "2"),
    "bench_ranking": ("--per-kind", "4"),
    "bench_ranker_models": ("--per-kind", "8", "--set-per-kind", "2"),
    "bench_recalibration": ("--per-kind", "2"),
    "bench_rankings": ("--phrases", "2", "--dump", "{tmp}/top10.json", "--compare", "{tmp}/top10.json", "{tmp}/top10.json"),
    "bench_scale": ("--labels", "300", "--requests", "2"),
    "bench_search": ("--requests", "2"),
    "bench_subtree": (),
    "bench_term_tables": (),
    "bench_understanding": ("--per-kind", "3"),
    "bench_vectors_umls": ("--labels", "2000", "--dir", "{tmp}/vectors"),
}
MARKS = {"bench_encoder": pytest.mark.model}  # exports all-MiniLM-L6-v2 and runs it in PyTorch


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """Settings whose store and current bundle (built with the shipped model) hold the toy ontology,
    its two systems under the keys of HPO and ICD-10-CM."""
    settings = Settings(data_dir=tmp_path_factory.mktemp("bench"), _env_file=None)
    migrate(settings.store.url)
    engine = make_engine(settings.store.url)
    for source, key in zip(toy_sources(), SYSTEMS, strict=True):
        load_source(engine, ListSource(replace(source.info, key=key), source.concepts))
    build_bundle(settings, StoreReader(engine), load_encoder(SHIPPED_MODEL_DIR), SYSTEMS, SHIPPED_MODEL_DIR, show_progress=False)
    engine.dispose()
    return settings


@pytest.fixture
def environment(toy: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy bundle as the scripts' (and their servers' and children's) data dir; records go to
    empty files in ``tmp_path``, which is returned."""
    monkeypatch.setenv("TERMSEARCH_DATA_DIR", str(toy.data_dir))
    monkeypatch.setenv("TERMSEARCH_STORE__URL", toy.store.url)
    monkeypatch.setenv("TERMSEARCH_VECTOR__COMPRESS_ABOVE", "1000")  # bench_vectors_umls's 2,000 labels get IVF-PQ
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # FAISS's threads crawl on a busy machine (IVF-PQ: 1 s, not 30)
    monkeypatch.chdir(BENCH.parent)  # children run as `python -m bench...` and `-m app`
    monkeypatch.setattr(sys, "path", list(sys.path))  # the scripts put the repository first
    for name in ("RESULTS", "HISTORY"):
        (tmp_path / f"{name}.md").touch()
        monkeypatch.setattr(bench.common, name, tmp_path / f"{name}.md")
    return tmp_path


@pytest.mark.parametrize("script", [pytest.param(name, marks=MARKS.get(name, ())) for name in SMOKE])
def test_the_script_runs_end_to_end_on_the_toy_bundle(script: str, environment: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = [path.read_bytes() for path in RECORDS]
    file = str(BENCH / f"{script}.py")
    monkeypatch.setattr(sys, "argv", [file, *(arg.format(tmp=environment) for arg in SMOKE[script])])
    try:
        runpy.run_path(file, run_name="__main__")
    except SystemExit as done:  # typer's scripts exit when done
        assert done.code in (0, None), f"{script} exited with {done.code}"
    assert not any(path.read_text() for path in environment.glob("*.md")), f"{script} recorded without --record"
    assert [path.read_bytes() for path in RECORDS] == before


def test_every_bench_script_has_a_smoke_run() -> None:
    assert sorted(path.stem for path in BENCH.glob("bench_*.py")) == sorted(SMOKE)
