"""The phases of a recipe: contrastive (InfoNCE + triplets), self-distillation, weight averaging.

Every phase writes ``<phase dir>/final`` when done and HF checkpoints while running, so a run
that is interrupted resumes from its last checkpoint and skips finished phases.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
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


def hard_negatives(
    model_dir: Path,
    pairs: Dataset,
    graph: OntologyGraph,
    train: set[Key],
    per_pair: int = 1,
    depth: int = 64,
    threshold: float = 0.8,
    bridges: int = 0,
    bridge_threshold: float = 0.7,
) -> Dataset:
    """Columns ``(anchor, positive, negative)``, or ``negative_1`` … ``negative_{per_pair}``: each
    lay pair plus labels that ``model_dir`` finds near its anchor among the training labels of
    every system but which mean something else. Skipped: a label of the anchor's concept, its
    ancestors or descendants, a label containing one of the concept's labels as whole words ("Acute
    myocardial infarction" for "Myocardial infarction"), and one within cosine ``threshold`` of one
    of the concept's formal labels (another system's name for the same thing). Nearness to the lay
    wording itself is no reason to skip: "Heart failure" near "heart attack" is the lesson.
    An anchor's pairs take its fair negatives in order of nearness, in turn; a pair whose anchor
    finds fewer than ``per_pair`` within ``depth`` is dropped.

    With ``bridges``, each anchor is also paired with up to that many labels of *other* systems
    that contain one of its concept's formal names (4 characters or more) as whole words and lie
    within cosine ``bridge_threshold`` of it: "Heart attack" with ICD-10-CM's "Acute myocardial
    infarction" through HPO's "Myocardial infarction". No mapping between the systems is needed.
    """
    owners: dict[str, set[Key]] = defaultdict(set)
    for key in train:
        for text in graph.nodes[key].lay:
            owners[text].add(key)
    anchors = sorted(set(pairs["anchor"]))
    corpus = [(label, key) for key in sorted(train) for label in graph.nodes[key].labels]
    rows_of: dict[Key, list[int]] = defaultdict(list)
    for row, (_, key) in enumerate(corpus):
        rows_of[key].append(row)
    model = SentenceTransformer(str(model_dir), device="cpu")
    queries = model.encode(anchors, batch_size=256, normalize_embeddings=True, show_progress_bar=True)
    labels = model.encode([label for label, _ in corpus], batch_size=256, normalize_embeddings=True, show_progress_bar=True)
    negatives: dict[str, list[str]] = {}
    for start in range(0, len(anchors), 256):
        nearest = np.argsort(-(queries[start : start + 256] @ labels.T), axis=1)[:, :depth]
        for text, row in zip(anchors[start : start + 256], nearest, strict=True):
            formal = _formal_rows(graph, owners[text], corpus, rows_of)
            same = (labels[row] @ labels[formal].T).max(axis=1) >= threshold if formal else np.zeros(len(row), bool)
            fair = _fair_negative(graph, owners[text])
            found = list(dict.fromkeys(corpus[j][0] for j, close in zip(row, same, strict=True) if not close and fair(*corpus[j])))
            if len(found) >= per_pair:
                negatives[text] = found
    extra = _bridges(graph, owners, anchors, corpus, rows_of, labels, bridges, bridge_threshold) if bridges else []
    rows, turn = [], Counter()
    for anchor, positive in [*zip(pairs["anchor"], pairs["positive"], strict=True), *extra]:
        if anchor in negatives:
            found, first = negatives[anchor], turn[anchor] * per_pair
            rows.append((anchor, positive, *(found[(first + i) % len(found)] for i in range(per_pair))))
            turn[anchor] += 1
    columns = ["anchor", "positive", *(["negative"] if per_pair == 1 else [f"negative_{i + 1}" for i in range(per_pair)])]
    return Dataset.from_dict({c: [row[i] for row in rows] for i, c in enumerate(columns)})


def _bridges(
    graph: OntologyGraph,
    owners: dict[str, set[Key]],
    anchors: list[str],
    corpus: list[tuple[str, Key]],
    rows_of: dict[Key, list[int]],
    labels: np.ndarray,
    per_anchor: int,
    threshold: float,
) -> list[tuple[str, str]]:
    """(anchor, label of another system) pairs; see :func:`hard_negatives`."""
    formal_rows = sorted({j for text in anchors for j in _formal_rows(graph, owners[text], corpus, rows_of) if len(corpus[j][0]) >= 4})
    near: dict[int, list[tuple[float, int]]] = {}
    for start in range(0, len(formal_rows), 256):
        chunk = formal_rows[start : start + 256]
        scores = labels[chunk] @ labels.T
        for i, row in zip(chunk, scores, strict=True):
            top = np.argsort(-row)[:32]
            name = _whole_words(corpus[i][0])
            near[i] = [
                (float(row[j]), int(j))
                for j in top
                if row[j] >= threshold and corpus[j][1][0] != corpus[i][1][0] and name.search(fold(corpus[j][0]))
            ]
    out = []
    for text in anchors:
        found = sorted(hit for owner in owners[text] for j in rows_of[owner] for hit in near.get(j, []))[::-1]
        out.extend((text, label) for label in list(dict.fromkeys(corpus[j][0] for _, j in found))[:per_anchor])
    return out


def _formal_rows(graph: OntologyGraph, owners: set[Key], corpus: list[tuple[str, Key]], rows_of: dict[Key, list[int]]) -> list[int]:
    """Corpus rows of the ``owners`` concepts' labels that are not lay wording."""
    return [j for owner in owners for j in rows_of[owner] if corpus[j][0] not in graph.nodes[owner].lay]


def _fair_negative(graph: OntologyGraph, owners: set[Key]) -> Callable[[str, Key], bool]:
    """Whether ``label`` of ``key`` may be a negative for an anchor of the ``owners`` concepts: not
    an owner, an ancestor or a descendant of one, and not containing an owner's label as whole words."""
    related = owners.union(*(graph.ancestors(owner) for owner in owners))
    own = [_whole_words(label) for owner in owners for label in graph.nodes[owner].labels]
    return lambda label, key: (
        key not in related
        and owners.isdisjoint(graph.ancestors(key))
        and not any(pattern.search(fold(label)) for pattern in own)
    )


def _whole_words(label: str) -> re.Pattern[str]:
    """Finds ``label`` as whole words in folded text: "myocardial infarction" in "Acute myocardial infarction"."""
    return re.compile(rf"\b{re.escape(fold(label))}\b")


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
