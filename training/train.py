"""The phases of a recipe: contrastive (InfoNCE + triplets), self-distillation, weight averaging.

Every phase writes ``<phase dir>/final`` when done and HF checkpoints while running, so a run
that is interrupted resumes from its last checkpoint and skips finished phases.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from datasets import Dataset
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, losses, models
from sentence_transformers.sentence_transformer.training_args import (
    BatchSamplers,
    MultiDatasetBatchSamplers,
    SentenceTransformerTrainingArguments,
)
from sklearn.decomposition import PCA

from indexer.lexical.normalise import fold
from training.data import builders
from training.data.graph import Key, OntologyGraph
from training.recipe import ContrastiveConfig, DistillConfig, PhaseConfig, Recipe

log = logging.getLogger("training")
FINAL = "final"


def build_datasets(recipe: Recipe, phase: ContrastiveConfig, graph: OntologyGraph, train: set[Key]) -> dict[str, Dataset]:
    """One contrastive phase's datasets; column contracts are in ``training.data.builders``."""
    rng = random.Random(phase.seeds[0])
    data = recipe.data
    makers = {
        "definitions": lambda: builders.definition_pairs(graph, train, data.definition_repeats, rng),
        "descriptions": lambda: builders.description_pairs(graph, train, data.descriptions_per_concept, rng),
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


def hard_negatives(model_dir: Path, pairs: Dataset, graph: OntologyGraph, train: set[Key], depth: int = 64) -> Dataset:
    """Columns ``(anchor, positive, negative)``: each lay pair plus the label that ``model_dir``
    finds nearest to its anchor among the training labels of the anchor's own system, skipping
    the anchor's concept, its ancestors and descendants and any label that folds to one of its
    labels. Other systems are left out: their nearest label may be the same meaning (ICD-10-CM's
    I10 for HPO's Hypertension). A pair whose anchor finds no such label within ``depth`` is dropped.
    """
    owners: dict[str, set[Key]] = defaultdict(set)
    for key in train:
        for text in graph.nodes[key].lay:
            owners[text].add(key)
    anchors = sorted(set(pairs["anchor"]))
    systems = {key[0] for text in anchors for key in owners[text]}
    corpus = [(label, key) for key in sorted(train) if key[0] in systems for label in graph.nodes[key].labels]
    model = SentenceTransformer(str(model_dir), device="cpu")
    queries = model.encode(anchors, batch_size=256, normalize_embeddings=True, show_progress_bar=True)
    labels = model.encode([label for label, _ in corpus], batch_size=256, normalize_embeddings=True, show_progress_bar=True)
    negative: dict[str, str] = {}
    for start in range(0, len(anchors), 256):
        scores = queries[start : start + 256] @ labels.T
        nearest = np.argsort(-scores, axis=1)[:, :depth]
        for text, row in zip(anchors[start : start + 256], nearest, strict=True):
            fair = _fair_negative(graph, owners[text])
            found = next((corpus[j][0] for j in row if fair(*corpus[j])), None)
            if found is not None:
                negative[text] = found
    rows = [(a, p, negative[a]) for a, p in zip(pairs["anchor"], pairs["positive"], strict=True) if a in negative]
    return Dataset.from_dict({c: [row[i] for row in rows] for i, c in enumerate(("anchor", "positive", "negative"))})


def _fair_negative(graph: OntologyGraph, owners: set[Key]) -> Callable[[str, Key], bool]:
    """Whether ``label`` of ``key`` is a fair negative for an anchor of the ``owners`` concepts:
    the same system, not an owner, an ancestor or a descendant of one, not folding to an owner's label."""
    systems = {owner[0] for owner in owners}
    related = owners.union(*(graph.ancestors(owner) for owner in owners))
    own_labels = {fold(label) for owner in owners for label in graph.nodes[owner].labels}
    return lambda label, key: (
        key[0] in systems
        and key not in related
        and fold(label) not in own_labels
        and owners.isdisjoint(graph.ancestors(key))
    )


def distillation_targets(
    teacher_dir: Path, graph: OntologyGraph, concepts: set[Key], train: set[Key], dims: int, seed: int
) -> dict[Key, np.ndarray]:
    """BioLORD-2023: mean of the teacher's name and definition embeddings, reduced by PCA.

    A concept without a definition uses one of its generated descriptions (over ``train``) instead.
    """
    rng = random.Random(seed)
    keys = sorted(concepts)
    definitions = []
    for key in keys:
        node = graph.nodes[key]
        texts = node.definitions or builders.descriptions(graph, key, train, rng) or [node.name]
        definitions.append(texts[0])
    teacher = SentenceTransformer(str(teacher_dir), device="cpu")
    names = teacher.encode([graph.nodes[k].name for k in keys], batch_size=128, show_progress_bar=True)
    meanings = teacher.encode(definitions, batch_size=128, show_progress_bar=True)
    reduced = PCA(n_components=dims, random_state=seed).fit_transform((names + meanings) / 2)
    return dict(zip(keys, reduced.astype(np.float32), strict=True))


def distill(
    base_dir: Path, graph: OntologyGraph, targets: dict[Key, np.ndarray], config: DistillConfig, max_seq_length: int, out: Path, seed: int
) -> Path:
    """The base model plus a fresh linear head regresses every label onto its concept's target."""
    if _done(out):
        return out / FINAL
    rows = [(label, targets[key].tolist()) for key in sorted(targets) for label in graph.nodes[key].labels]
    dataset = Dataset.from_dict({"text": [r[0] for r in rows], "label": [r[1] for r in rows]})
    model = _load(base_dir, max_seq_length)
    torch.manual_seed(seed)
    head = models.Dense(model.get_embedding_dimension(), config.dims, activation_function=torch.nn.Identity())
    model.append(head)
    _train(model, {"distill": dataset}, {"distill": losses.MSELoss(model)}, config, out, seed, BatchSamplers.BATCH_SAMPLER, drop_head=True)
    return out / FINAL


def average(model_dirs: list[Path], out: Path) -> Path:
    """Uniform weight averaging (a model soup) of models with one architecture."""
    if _done(out):
        return out / FINAL
    soup = SentenceTransformer(str(model_dirs[0]), device="cpu")
    states = [SentenceTransformer(str(d), device="cpu").state_dict() for d in model_dirs]
    averaged = {
        name: (sum(s[name] for s in states) / len(states)) if tensor.is_floating_point() else tensor
        for name, tensor in states[0].items()
    }
    soup.load_state_dict(averaged)
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
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=datasets, loss=loss)
    resume = any((out / "checkpoints").glob("checkpoint-*"))
    trainer.train(resume_from_checkpoint=resume or None)
    if drop_head:
        del model[len(model) - 1]
    model.save(str(out / FINAL))


def _done(out: Path) -> bool:
    return (out / FINAL / "modules.json").is_file()
