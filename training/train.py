"""The phases of a recipe: contrastive (InfoNCE + triplets), self-distillation, weight averaging.

Every phase writes ``<phase dir>/final`` when done and HF checkpoints while running, so a run
that is interrupted resumes from its last checkpoint and skips finished phases.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import torch
from datasets import Dataset, concatenate_datasets
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, losses, models
from sentence_transformers.sentence_transformer.training_args import (
    BatchSamplers,
    MultiDatasetBatchSamplers,
    SentenceTransformerTrainingArguments,
)
from sklearn.decomposition import PCA

from training.data import builders, negatives
from training.data.graph import Key, OntologyGraph
from training.recipe import ContrastiveConfig, DistillConfig, PhaseConfig, Recipe
from training.weights import blend, freeze

log = logging.getLogger("training")
FINAL = "final"


def build_datasets(recipe: Recipe, phase: ContrastiveConfig, graph: OntologyGraph, train: set[Key]) -> dict[str, Dataset]:
    """One contrastive phase's datasets; column contracts are in ``training.data.builders``."""
    rng = random.Random(phase.seeds[0])
    data = recipe.data
    makers = {
        "definitions": lambda: builders.definition_pairs(graph, train, data.definition_repeats, rng),
        "descriptions": lambda: builders.description_pairs(graph, train, data.descriptions_per_concept, rng),
        "entries": lambda: builders.entry_descriptions(graph, train),
        "hierarchy": lambda: builders.hierarchy_rows(graph, train, rng),
        "synonyms": lambda: builders.synonym_pairs(graph, train, data.synonyms_per_concept, rng),
        "triplets": lambda: builders.triplets(graph, train, rng),
        "lay": lambda: builders.lay_pairs(graph, train),
    }
    out = {}
    for name in phase.datasets:
        limit = phase.max_examples[name] if name in phase.max_examples else data.max_examples.get(name)
        rows = builders.sample(makers[name](), limit, rng)
        columns = ("anchor", "positive", "negative")[: len(rows[0])] if rows else ("anchor", "positive")
        out[name] = Dataset.from_dict({c: [row[i] for row in rows] for i, c in enumerate(columns)})
    return out


def repeated(datasets: dict[str, Dataset], repeats: dict[str, int]) -> dict[str, Dataset]:
    """Each dataset named in ``repeats`` that many times over; the batch sampler shuffles the copies apart."""
    return {name: concatenate_datasets([ds] * repeats.get(name, 1)) for name, ds in datasets.items()}


def contrastive(base_dir: Path, datasets: dict[str, Dataset], config: ContrastiveConfig, max_seq_length: int, out: Path, seed: int) -> Path:
    """InfoNCE (in-batch negatives) on pair datasets, Euclidean triplet loss on triplets."""
    if _done(out):
        return out / FINAL
    model = _load(base_dir, max_seq_length)
    mnrl = losses.MultipleNegativesRankingLoss(model)
    triplet = losses.TripletLoss(model, losses.TripletDistanceMetric.EUCLIDEAN, triplet_margin=config.triplet_margin)
    # Triplet-BERT's triplets take the triplet loss; any other negative column (mined hard
    # negatives) joins InfoNCE's in-batch negatives.
    loss = {name: triplet if name == "triplets" else mnrl for name, ds in datasets.items()}
    _train(model, datasets, loss, config, out, seed, BatchSamplers.NO_DUPLICATES)
    return out / FINAL


def encoder(model_dir: Path) -> negatives.Encode:
    """``model_dir``'s normalised embeddings, on the CPU."""
    model = SentenceTransformer(str(model_dir), device="cpu")
    return lambda texts: model.encode(texts, batch_size=256, normalize_embeddings=True, show_progress_bar=True)


def distillation_targets(
    teacher_dir: Path, graph: OntologyGraph, concepts: set[Key], train: set[Key], dims: int | None, seed: int
) -> dict[Key, np.ndarray]:
    """BioLORD-2023: mean of the teacher's name and definition embeddings, reduced by PCA to
    ``dims`` (None: kept whole, normalised).

    A concept without a definition uses one of its generated descriptions (over ``train``) instead.
    """
    rng = random.Random(seed)
    keys = sorted(concepts)
    definitions = [builders.meaning(graph, key, train, rng) for key in keys]
    teacher = SentenceTransformer(str(teacher_dir), device="cpu")
    names = teacher.encode([graph.nodes[k].name for k in keys], batch_size=128, show_progress_bar=True)
    meanings = teacher.encode(definitions, batch_size=128, show_progress_bar=True)
    mean = (names + meanings) / 2
    if dims is None:
        reduced = mean / np.linalg.norm(mean, axis=1, keepdims=True)
    else:
        reduced = PCA(n_components=dims, random_state=seed).fit_transform(mean)
    return dict(zip(keys, reduced.astype(np.float32), strict=True))


def distill(
    base_dir: Path, graph: OntologyGraph, targets: dict[Key, np.ndarray], config: DistillConfig, max_seq_length: int, out: Path, seed: int
) -> Path:
    """The start model (``base_dir``: the base, or the teacher with ``distill.from_teacher``) regresses
    every label onto its concept's target: through a fresh linear head when the targets are
    reduced (``distill.dims``), else with its own normalised vectors."""
    if _done(out):
        return out / FINAL
    rows = [(label, targets[key].tolist()) for key in sorted(targets) for label in graph.nodes[key].labels]
    dataset = Dataset.from_dict({"text": [r[0] for r in rows], "label": [r[1] for r in rows]})
    model = _load(base_dir, max_seq_length)
    torch.manual_seed(seed)
    if config.dims is not None:
        model.append(models.Dense(model.get_embedding_dimension(), config.dims, activation_function=torch.nn.Identity()))
    loss = {"distill": losses.MSELoss(model) if config.dims is not None else _SquaredDistance(model)}
    _train(model, {"distill": dataset}, loss, config, out, seed, BatchSamplers.BATCH_SAMPLER, drop_head=config.dims is not None)
    return out / FINAL


class _SquaredDistance(losses.MSELoss):
    """Squared distance of the model's unit vectors to whole normalised targets (2 - 2 cos), as the GPU loop's."""

    def forward(self, sentence_features, labels):  # noqa: ANN001, ANN201
        return super().forward(sentence_features, labels) * self.model.get_embedding_dimension()


def average(model_dirs: list[Path], out: Path, weights: list[float] | None = None) -> Path:
    """Weighted weight averaging of models with one architecture: a uniform soup by default, or
    WiSE-FT's interpolation with the base (``[alpha, 1 - alpha]``)."""
    if _done(out):
        return out / FINAL
    soup = SentenceTransformer(str(model_dirs[0]), device="cpu")
    soup.load_state_dict(blend([SentenceTransformer(str(d), device="cpu").state_dict() for d in model_dirs], weights))
    soup.save(str(out / FINAL))
    return out / FINAL


def _load(base_dir: Path, max_seq_length: int) -> SentenceTransformer:
    model = SentenceTransformer(str(base_dir), device="cpu")
    model.max_seq_length = max_seq_length
    return model


def _train(model, datasets, loss, config: PhaseConfig, out: Path, seed: int, sampler: BatchSamplers, drop_head: bool = False) -> None:  # noqa: ANN001
    """Run (or resume) a trainer; with ``drop_head`` the last module (a training head) is dropped before saving."""
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"),
        num_train_epochs=config.epochs,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        warmup_steps=config.warmup_ratio,  # a float below 1 is a ratio in transformers 5
        weight_decay=config.weight_decay,
        batch_sampler=sampler,
        multi_dataset_batch_sampler=MultiDatasetBatchSamplers.PROPORTIONAL,
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=2,
        logging_steps=25,
        seed=seed,
        report_to="none",
        use_cpu=True,
    )
    freeze(model[0].auto_model, config)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=datasets, loss=loss)
    resume = any((out / "checkpoints").glob("checkpoint-*"))
    trainer.train(resume_from_checkpoint=resume or None)
    if drop_head:
        del model[len(model) - 1]
    model.save(str(out / FINAL))


def _done(out: Path) -> bool:
    return (out / FINAL / "modules.json").is_file()
