"""A whole recipe: data → contrastive → lay phase → self-distillation → averaging → interpolation
with the base → ONNX export.

Run directories live under ``{data_dir}/training/{recipe name}``; re-running a recipe resumes.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from datasets import Dataset
from sentence_transformers import SentenceTransformer

from indexer.encoders import load_encoder
from indexer.encoders.export import PARITY_TEXTS, export_model
from indexer.encoders.manifest import MANIFEST_FILE
from indexer.store import StoreReader
from training import base_models, compare, train
from training.data import builders, negatives, open_text, vocabulary
from training.data.builders import sample
from training.data.graph import Key, OntologyGraph
from training.data.splits import Split, guarded, held_out
from training.loop import LOOP_RECORD
from training.packed import Packed, TextTable, load_shards, read_meta, save_shards, write_meta
from training.recipe import ContrastiveConfig, Recipe

log = logging.getLogger("training")


@dataclass
class Prepared:
    """What every phase starts from: the base model, the graph, the training concepts, the
    contrastive phase's datasets as trained and the data summary recorded with the model."""

    base_dir: Path
    graph: OntologyGraph
    train_keys: set[Key]
    datasets: dict[str, Dataset]
    data: dict


def prepare(recipe: Recipe, reader: StoreReader, run_dir: Path) -> Prepared:
    """The base model, the split and the contrastive datasets (negatives mined once, then saved)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    base_dir = base_models.resolve(recipe.base_model, run_dir.parent / ".base-models")
    graph = OntologyGraph.from_store(reader, recipe.systems)
    for source in recipe.open_text:
        graph.add(source, open_text.SOURCES[source].concepts(), open_text.SOURCES[source].related)
    phrasings = vocabulary.add(graph, recipe.systems) if recipe.data.vocabulary else None
    splits = held_out(list(graph.nodes), recipe.split.seed, recipe.split.dev, recipe.split.test)
    train_keys = guarded(graph, splits)
    datasets = _prepared(
        recipe.contrastive,
        train.build_datasets(recipe, recipe.contrastive, graph, train_keys),
        base_dir,
        graph,
        train_keys,
        run_dir / "contrastive-hard-negatives.jsonl",
    )
    data = {
        "systems": {key: reader.system(key).version for key in recipe.systems},
        "open_text": {source: open_text.SOURCES[source].release() for source in recipe.open_text},
        "split": {split.value: len(keys) for split, keys in splits.items()},
        "train_left_out": len(splits[Split.TRAIN]) - len(train_keys),  # their names are held-out text
        **({"vocabulary": phrasings} if phrasings else {}),
        "examples": _sizes(datasets),
    }
    return Prepared(base_dir, graph, train_keys, datasets, data)


def run(recipe: Recipe, recipe_text: str, reader: StoreReader, run_dir: Path) -> Path:
    """Train and export; returns the exported model directory (``run_dir / "model"``)."""
    started = time.perf_counter()
    prepared = prepare(recipe, reader, run_dir)
    base_dir, graph, train_keys, datasets, data = (
        prepared.base_dir, prepared.graph, prepared.train_keys, prepared.datasets, prepared.data
    )
    lay_datasets = train.build_datasets(recipe, recipe.lay, graph, train_keys) if recipe.lay.enabled else {}
    data["lay_examples"] = _sizes(lay_datasets)
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
        targets = train.distillation_targets(final, graph, distilled(recipe, train_keys), train_keys, recipe.distill.dims, seed)
        students = [
            train.distill(
                final if recipe.distill.from_teacher else base_dir, graph, targets, recipe.distill, recipe.max_seq_length,
                run_dir / f"distill-{seed}", seed,
            )
            for seed in recipe.distill.seeds
        ]
        final = _soup(students, run_dir / "distill-soup")
    return finish(recipe, recipe_text, reader, final, base_dir, run_dir, data, time.perf_counter() - started)


def distilled(recipe: Recipe, train_keys: set[Key]) -> set[Key]:
    """The training concepts whose labels the distillation phase regresses (``distill.max_concepts``)."""
    return set(sample(sorted(train_keys), recipe.distill.max_concepts, random.Random(recipe.distill.seeds[0])))


def finish(
    recipe: Recipe, recipe_text: str, reader: StoreReader, trained: Path, base_dir: Path, run_dir: Path, data: dict, seconds: float
) -> Path:
    """The last phase (interpolation with the base, when on) and the ONNX export to ``run_dir / "model"``."""
    started = time.perf_counter()
    if recipe.interpolate.enabled:
        trained, data["interpolation"] = interpolate(recipe, reader, trained, base_dir, run_dir)
        (run_dir / "data.json").write_text(json.dumps(data, indent=2))
    minutes = round((seconds + time.perf_counter() - started) / 60, 1)
    return export_model(
        trained,
        run_dir / "model",
        model_id=recipe.export.model_id,
        quantize=recipe.export.quantize,
        parity_texts=reader.spread_displays(PARITY_TEXTS, recipe.systems),
        base_model=recipe.base_model,
        recipe={"name": recipe.name, "yaml": recipe_text, "training_minutes_this_run": minutes},
        data=data,
    )


def pack(recipe: Recipe, recipe_text: str, reader: StoreReader, run_dir: Path, out: Path) -> Path:
    """The GPU recipe's carry-on (:mod:`training.packed`): the contrastive datasets (negatives mined
    here, by the base), the distillation concepts with their meanings, tokenised, and the base's
    weights in fp16 shards with its config; ``python -m training.loop`` trains from it."""
    if recipe.lay.enabled:
        raise ValueError(f"{recipe.name}: the GPU loop has no lay phase; switch lay.enabled off")
    prepared = prepare(recipe, reader, run_dir)
    table = TextTable()
    datasets = {name: table.rows(zip(*(ds[c] for c in ds.column_names), strict=True)) for name, ds in prepared.datasets.items()}
    rng = random.Random(recipe.distill.seeds[0])
    keys = sorted(distilled(recipe, prepared.train_keys)) if recipe.distill.enabled else []
    graph = prepared.graph
    concepts = table.rows([graph.nodes[k].name, builders.meaning(graph, k, prepared.train_keys, rng)] for k in keys)
    labels = np.asarray([(table(label), row) for row, k in enumerate(keys) for label in graph.nodes[k].labels], np.int32).reshape(-1, 2)
    base = SentenceTransformer(str(prepared.base_dir), device="cpu")[0]
    tokens, offsets = table.tokens(base.tokenizer, recipe.max_seq_length)
    Packed(tokens, offsets, datasets, concepts.reshape(-1, 2), labels).save(out)
    state = base.auto_model.state_dict()
    save_shards(state, out / "base", [name for name, tensor in state.items() if tensor.is_floating_point()])
    base.auto_model.config.save_pretrained(out / "base")
    meta = {"recipe": recipe.model_dump(mode="json"), "recipe_yaml": recipe_text, "data": prepared.data}
    write_meta(out, {**meta, "pad_token_id": base.tokenizer.pad_token_id, "texts": len(offsets) - 1})
    log.info("packed %d texts, %s", len(offsets) - 1, prepared.data["examples"])
    return out


def finish_packed(pack_dir: Path, weights_dir: Path, reader: StoreReader, run_dir: Path) -> Path:
    """The GPU recipe's end, on the CPU: the base with the loop's weights (``weights_dir``), then
    :func:`finish` (interpolation on the dev split, ONNX export)."""
    meta = read_meta(pack_dir)
    recipe = Recipe.model_validate(meta["recipe"])
    base_dir = base_models.resolve(recipe.base_model, run_dir.parent / ".base-models")
    model = SentenceTransformer(str(base_dir), device="cpu")
    model.max_seq_length = recipe.max_seq_length
    state = model[0].auto_model.state_dict()
    model[0].auto_model.load_state_dict({**state, **load_shards(weights_dir)})
    trained = run_dir / "loop" / train.FINAL
    model.save(str(trained))
    for stale in run_dir.glob("interpolate-*"):  # blends of weights an earlier finish was given
        shutil.rmtree(stale)
    loop = json.loads((weights_dir / LOOP_RECORD).read_text()) if (weights_dir / LOOP_RECORD).is_file() else {}
    data = {**meta["data"], "loop": loop}
    return finish(recipe, meta["recipe_yaml"], reader, trained, base_dir, run_dir, data, 60 * loop.get("minutes", 0))


def interpolate(recipe: Recipe, reader: StoreReader, trained: Path, base_dir: Path, run_dir: Path) -> tuple[Path, dict]:
    """WiSE-FT: the candidate ``alpha * trained + (1 - alpha) * base`` that scores best on the dev
    split, with every candidate's score (``training.compare.dev_scores``). Each candidate is scored
    as it would be served: exported as the recipe exports (int8 ONNX, parity checked) into
    ``interpolate-{alpha}/onnx``, kept there so that a resumed run scores it again without re-exporting."""
    config = recipe.interpolate
    parity = reader.spread_displays(PARITY_TEXTS, recipe.systems)
    candidates, served = {}, {}
    for alpha in config.alphas:
        name, out = f"{alpha:g}", run_dir / f"interpolate-{alpha:g}"
        candidates[name] = trained if alpha == 1 else train.average([trained, base_dir], out, [alpha, 1 - alpha])
        onnx = out / "onnx"
        if not (onnx / MANIFEST_FILE).is_file():
            export_model(
                candidates[name], onnx, model_id=f"{recipe.export.model_id}-alpha-{name}",
                quantize=recipe.export.quantize, parity_texts=parity, base_model=recipe.base_model,
            )
        served[name] = load_encoder(onnx)
    scores = compare.dev_scores(recipe, reader, served, config.max_items)
    best = max(scores, key=lambda name: (scores[name], -abs(float(name) - 0.5)))
    log.info("interpolation: dev scores %s, alpha %s", scores, best)
    return candidates[best], {"alpha": float(best), "dev_scores": scores}


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
    them back); then ``phase.repeats`` applies. Lay pairs that find no fair negative are dropped
    (a store too small to hold one leaves the phase without lay pairs)."""
    if phase.hard_negatives and "lay" in datasets:
        if not path.is_file():
            partial = path.with_suffix(".partial")
            lay = list(zip(datasets["lay"]["anchor"], datasets["lay"]["positive"], strict=True))
            rows = negatives.mine(train.encoder(model_dir), lay, graph, train_keys, phase.hard_negatives, bridges=phase.bridges)
            names = negatives.columns(phase.hard_negatives)
            Dataset.from_dict({c: [row[i] for row in rows] for i, c in enumerate(names)}).to_json(str(partial))
            partial.replace(path)
        if not path.stat().st_size:
            log.warning("no lay pair found %d fair negatives: the phase has no lay pairs", phase.hard_negatives)
        mined = Dataset.from_json(str(path)) if path.stat().st_size else None
        datasets = {name: mined if name == "lay" else ds for name, ds in datasets.items() if name != "lay" or mined}
    return train.repeated(datasets, phase.repeats)


def _sizes(datasets: dict[str, Dataset]) -> dict[str, int]:
    return {name: len(ds) for name, ds in datasets.items()}


def _soup(model_dirs: list[Path], out: Path) -> Path:
    return model_dirs[0] if len(model_dirs) == 1 else train.average(model_dirs, out)
