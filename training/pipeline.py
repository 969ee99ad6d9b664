"""A whole recipe: data → contrastive → lay phase → self-distillation → averaging → ONNX export.

Run directories live under ``{data_dir}/training/{recipe name}``; re-running a recipe resumes.
"""

from __future__ import annotations

import json
import logging
import random
import time
from pathlib import Path

from datasets import Dataset

from indexer.encoders.export import PARITY_TEXTS, export_model
from indexer.store import StoreReader
from training import base_models, train
from training.data.builders import sample
from training.data.graph import Key, OntologyGraph
from training.data.splits import Split, held_out
from training.recipe import ContrastiveConfig, Recipe

log = logging.getLogger("training")


def run(recipe: Recipe, recipe_text: str, reader: StoreReader, run_dir: Path) -> Path:
    """Train and export; returns the exported model directory (``run_dir / "model"``)."""
    started = time.perf_counter()
    run_dir.mkdir(parents=True, exist_ok=True)
    base_dir = base_models.resolve(recipe.base_model, run_dir.parent / ".base-models")
    graph = OntologyGraph.from_store(reader, recipe.systems)
    splits = held_out(list(graph.nodes), recipe.split.seed, recipe.split.dev, recipe.split.test)
    train_keys = splits[Split.TRAIN]
    datasets = _prepared(
        recipe.contrastive,
        train.build_datasets(recipe, recipe.contrastive, graph, train_keys),
        base_dir,
        graph,
        train_keys,
        run_dir / "contrastive-hard-negatives.jsonl",
    )
    lay_datasets = train.build_datasets(recipe, recipe.lay, graph, train_keys) if recipe.lay.enabled else {}
    data = {
        "systems": {key: reader.system(key).version for key in recipe.systems},
        "split": {split.value: len(keys) for split, keys in splits.items()},
        "examples": _sizes(datasets),
        "lay_examples": _sizes(lay_datasets),
    }
    (run_dir / "data.json").write_text(json.dumps(data, indent=2))
    log.info("data: %s", data)

    phase = recipe.contrastive
    teachers = [
        train.contrastive(base_dir, datasets, phase, recipe.max_seq_length, run_dir / f"contrastive-{seed}", seed)
        for seed in phase.seeds
    ]
    final = _soup(teachers, run_dir / "contrastive-soup")
    if recipe.lay.enabled:
        phase = recipe.lay
        lay_datasets = _prepared(phase, lay_datasets, final, graph, train_keys, run_dir / "lay-hard-negatives.jsonl")
        data["lay_examples"] = _sizes(lay_datasets)
        (run_dir / "data.json").write_text(json.dumps(data, indent=2))
        lay = [
            train.contrastive(final, lay_datasets, phase, recipe.max_seq_length, run_dir / f"lay-{seed}", seed)
            for seed in phase.seeds
        ]
        final = _soup(lay, run_dir / "lay-soup")
    if recipe.distill.enabled:
        seed = recipe.distill.seeds[0]
        distilled = set(sample(sorted(train_keys), recipe.distill.max_concepts, random.Random(seed)))
        targets = train.distillation_targets(final, graph, distilled, train_keys, recipe.distill.dims, seed)
        students = [
            train.distill(base_dir, graph, targets, recipe.distill, recipe.max_seq_length, run_dir / f"distill-{seed}", seed)
            for seed in recipe.distill.seeds
        ]
        final = _soup(students, run_dir / "distill-soup")

    minutes = round((time.perf_counter() - started) / 60, 1)
    return export_model(
        final,
        run_dir / "model",
        model_id=recipe.export.model_id,
        quantize=recipe.export.quantize,
        parity_texts=reader.spread_displays(PARITY_TEXTS, recipe.systems),
        base_model=recipe.base_model,
        recipe={"name": recipe.name, "yaml": recipe_text, "training_minutes_this_run": minutes},
        data=data,
    )


def export_base(name: str, reader: StoreReader, systems: list[str], out_dir: Path, quantize: bool = True) -> Path:
    """Export a base model (e.g. all-mpnet-base-v2) to ONNX, int8 or fp32, to compare against."""
    source = base_models.resolve(name, out_dir.parent / ".base-models")
    return export_model(
        source,
        out_dir,
        model_id=f"{Path(name).name}-onnx-{'int8' if quantize else 'fp32'}",
        quantize=quantize,
        parity_texts=reader.spread_displays(PARITY_TEXTS, systems),
        base_model=name,
    )


def _prepared(
    phase: ContrastiveConfig, datasets: dict[str, Dataset], model_dir: Path, graph: OntologyGraph, train_keys: set[Key], path: Path
) -> dict[str, Dataset]:
    """The phase's datasets as trained: with ``phase.hard_negatives``, its lay pairs (and
    ``phase.bridges`` pairs into the other systems) get that many negatives each, mined by
    ``model_dir``, the model the phase starts from, and saved at ``path`` once (a resumed run reads
    them back); then ``phase.repeats`` applies."""
    if phase.hard_negatives and "lay" in datasets:
        if not path.is_file():
            partial = path.with_suffix(".partial")
            train.hard_negatives(model_dir, datasets["lay"], graph, train_keys, phase.hard_negatives, bridges=phase.bridges).to_json(str(partial))
            partial.replace(path)
        datasets = {**datasets, "lay": Dataset.from_json(str(path))}
    return train.repeated(datasets, phase.repeats)


def _sizes(datasets: dict[str, Dataset]) -> dict[str, int]:
    return {name: len(ds) for name, ds in datasets.items()}


def _soup(model_dirs: list[Path], out: Path) -> Path:
    return model_dirs[0] if len(model_dirs) == 1 else train.average(model_dirs, out)
