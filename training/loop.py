"""The GPU recipe's trainer: a plain torch loop over a pack (:mod:`training.packed`).

``python -m training.loop PACK_DIR --out WEIGHTS_DIR [--device cuda]`` runs, from the pack's base
weights and recipe: the contrastive phase once per seed (InfoNCE with in-batch and mined negatives,
the triplet loss on ``triplets``, one dataset a batch, datasets mixed in proportion), a soup of the
seeds, then (when on) self-distillation of that soup into the base for each distillation seed
(BioLORD-2023: PCA-reduced mean of name and meaning), and a soup of the students. It writes the
weights that differ from the base as fp16 shards; ``python -m training finish`` interpolates with
the base on the dev split and exports ONNX on the CPU. It needs torch, transformers and the pack
only: no ``datasets``, no store. Each seed's phase checkpoints every epoch and resumes.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModel, get_linear_schedule_with_warmup

from training.packed import TRIPLETS, Packed, load_shards, read_meta, save_shards
from training.recipe import DistillConfig, PhaseConfig, Recipe
from training.weights import blend, freeze

log = logging.getLogger("training.loop")
SCALE = 20.0  # InfoNCE's cosine scale, as sentence-transformers' MultipleNegativesRankingLoss
ENCODE_BATCH = 1024
LOOP_RECORD = "loop.json"  # the run's minutes and device, next to the shards


class Encoder(torch.nn.Module):
    """The transformer, mean pooling and L2 normalisation: sentence-transformers' MiniLM head."""

    def __init__(self, transformer: torch.nn.Module) -> None:
        super().__init__()
        self.transformer = transformer

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        hidden = self.transformer(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        return F.normalize((hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9), dim=-1)


class Trainer:
    def __init__(self, pack_dir: Path, device: str) -> None:
        self.meta = read_meta(pack_dir)
        self.recipe = Recipe.model_validate(self.meta["recipe"])
        self.packed = Packed.load(pack_dir)
        self.base = load_shards(pack_dir / "base")
        self.config = AutoConfig.from_pretrained(pack_dir / "base")
        self.device = torch.device(device)
        self.pad = int(self.meta["pad_token_id"])

    def model(self, state: dict[str, torch.Tensor] | None = None) -> Encoder:
        transformer = AutoModel.from_config(self.config)
        missing, unexpected = transformer.load_state_dict(state or self.base, strict=False)
        if unexpected or any(transformer.state_dict()[name].is_floating_point() for name in missing):
            raise ValueError(f"weights do not fit the base: missing {missing}, unexpected {unexpected}")
        return Encoder(transformer).to(self.device)

    def encode(self, model: Encoder, texts: np.ndarray) -> torch.Tensor:
        """Vectors of text numbers ``texts``, without gradients."""
        model.eval()
        out = []
        with torch.no_grad(), self._autocast():
            for start in range(0, len(texts), ENCODE_BATCH):
                ids, mask = self.packed.batch(texts[start : start + ENCODE_BATCH].tolist(), self.pad)
                out.append(model(ids.to(self.device), mask.to(self.device)).float())
        return torch.cat(out)

    def contrastive(self, seed: int, out: Path) -> dict[str, torch.Tensor]:
        phase = self.recipe.contrastive
        model = self.model()

        def step(name: str, rows: np.ndarray) -> torch.Tensor:
            vectors = self._vectors(model, rows)
            if name == TRIPLETS:
                anchor, positive, negative = vectors
                return F.relu((anchor - positive).norm(dim=-1) - (anchor - negative).norm(dim=-1) + phase.triplet_margin).mean()
            anchor, candidates = vectors[0], torch.cat(vectors[1:])
            scores = anchor @ candidates.T * SCALE
            return F.cross_entropy(scores, torch.arange(len(anchor), device=self.device))

        return self._train(model, phase, self.packed.datasets, step, seed, out / f"contrastive-{seed}")

    def distill(self, targets: torch.Tensor, seed: int, out: Path) -> dict[str, torch.Tensor]:
        """One student: the base plus a linear head regressing each label onto its concept's target."""
        phase = self.recipe.distill
        model = self.model()
        torch.manual_seed(seed)
        head = torch.nn.Linear(self.config.hidden_size, phase.dims).to(self.device)
        model.add_module("head", head)

        def step(_: str, rows: np.ndarray) -> torch.Tensor:
            (vectors,) = self._vectors(model, rows[:, :1])
            return F.mse_loss(head(vectors), targets[torch.from_numpy(rows[:, 1]).to(self.device)])

        state = self._train(model, phase, {"distill": self.packed.labels}, step, seed, out / f"distill-{seed}")
        return {name.removeprefix("transformer."): t for name, t in state.items() if name.startswith("transformer.")}

    def targets(self, teacher: dict[str, torch.Tensor], phase: DistillConfig) -> torch.Tensor:
        """BioLORD-2023's targets, one row per pack concept: the teacher's mean of name and meaning
        vectors, PCA-reduced to ``phase.dims``."""
        model = self.model(teacher)
        names, meanings = self.packed.concepts[:, 0], self.packed.concepts[:, 1]
        mean = (self.encode(model, names) + self.encode(model, meanings)) / 2
        centred = mean - mean.mean(0)
        _, _, components = torch.linalg.svd(centred, full_matrices=False)
        return centred @ components[: phase.dims].T

    def _autocast(self) -> torch.autocast:
        """bf16 on a GPU, fp32 elsewhere."""
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.device.type == "cuda")

    def _vectors(self, model: Encoder, rows: np.ndarray) -> list[torch.Tensor]:
        """One ``(batch, dim)`` tensor per column of ``rows``, each distinct text encoded once."""
        texts, inverse = np.unique(rows, return_inverse=True)
        ids, mask = self.packed.batch(texts.tolist(), self.pad)
        with self._autocast():
            vectors = model(ids.to(self.device), mask.to(self.device)).float()
        index = torch.from_numpy(inverse.reshape(rows.shape)).to(self.device)
        return [vectors[index[:, column]] for column in range(rows.shape[1])]

    def _train(self, model: Encoder, phase: PhaseConfig, datasets: dict[str, np.ndarray], step, seed: int, out: Path) -> dict[str, torch.Tensor]:  # noqa: ANN001
        """AdamW with linear warm-up and decay over ``phase.epochs``; checkpoints each epoch, resumes."""
        done = out / "final.pt"
        if done.is_file():
            return torch.load(done, map_location="cpu")
        freeze(model.transformer, phase)
        epochs = max(1, round(phase.epochs))
        plan = [list(_batches(datasets, phase.batch_size, np.random.default_rng([seed, epoch]))) for epoch in range(epochs)]
        total = sum(len(batches) for batches in plan)
        params = [p for p in model.parameters() if p.requires_grad]
        optimiser = torch.optim.AdamW(params, lr=phase.learning_rate, weight_decay=phase.weight_decay)
        schedule = get_linear_schedule_with_warmup(optimiser, round(phase.warmup_ratio * total), total)
        first = _resume(out, model, optimiser, schedule)
        torch.manual_seed(seed)
        started, seen = time.perf_counter(), 0
        for epoch in range(first, epochs):
            model.train()
            for number, (name, rows) in enumerate(plan[epoch]):
                loss = step(name, rows)
                loss.backward()
                optimiser.step()
                schedule.step()
                optimiser.zero_grad(set_to_none=True)
                seen += len(rows)
                if number % 50 == 0:
                    rate = seen / (time.perf_counter() - started)
                    log.info("%s epoch %d step %d/%d loss %.4f (%s), %.0f rows/s", out.name, epoch + 1, number, len(plan[epoch]), loss.item(), name, rate)
            out.mkdir(parents=True, exist_ok=True)
            torch.save({"epoch": epoch + 1, "model": model.state_dict(), "optimiser": optimiser.state_dict(), "schedule": schedule.state_dict()}, out / "checkpoint.pt")
        state = {name: t.detach().cpu() for name, t in model.state_dict().items()}
        torch.save(state, done)
        return state


def run(pack_dir: Path, out: Path, device: str) -> list[Path]:
    """The whole GPU recipe; returns the fp16 shards written to ``out``."""
    trainer = Trainer(pack_dir, device)
    recipe = trainer.recipe
    work = out / "work"
    teachers = [_encoder_state(trainer.contrastive(seed, work)) for seed in recipe.contrastive.seeds]
    final = blend(teachers)
    if recipe.distill.enabled:
        targets = trainer.targets(final, recipe.distill)
        final = blend([trainer.distill(targets, seed, work) for seed in recipe.distill.seeds])
    changed = [name for name, tensor in final.items() if not torch.equal(tensor.to(torch.float16).float(), trainer.base[name])]
    return save_shards(final, out, changed)


def record(out: Path, minutes: float, device: str) -> None:
    (out / LOOP_RECORD).write_text(json.dumps({"minutes": round(minutes, 1), "device": device}))


def _encoder_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name.removeprefix("transformer."): t for name, t in state.items()}


def _batches(datasets: dict[str, np.ndarray], size: int, rng: np.random.Generator) -> Iterator[tuple[str, np.ndarray]]:
    """Every row of every dataset once, a dataset a batch, the batches in random order (a last
    batch of fewer than two rows is dropped: it has no in-batch negative)."""
    batches = []
    for name, rows in datasets.items():
        shuffled = rows[rng.permutation(len(rows))]
        batches += [(name, shuffled[i : i + size]) for i in range(0, len(shuffled), size) if len(shuffled[i : i + size]) > 1]
    for i in rng.permutation(len(batches)):
        yield batches[i]


def _resume(out: Path, model: Encoder, optimiser, schedule) -> int:  # noqa: ANN001
    """The epoch to start from: after the last checkpoint's, with its state restored."""
    path = out / "checkpoint.pt"
    if not path.is_file():
        return 0
    saved = torch.load(path, map_location=next(model.parameters()).device)
    model.load_state_dict(saved["model"])
    optimiser.load_state_dict(saved["optimiser"])
    schedule.load_state_dict(saved["schedule"])
    log.info("%s: resumed after epoch %d", out.name, saved["epoch"])
    return int(saved["epoch"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pack", type=Path, help="a directory written by `python -m training pack`")
    parser.add_argument("--out", type=Path, required=True, help="where the fp16 weight shards go")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    started = time.perf_counter()
    paths = run(args.pack, args.out, args.device)
    minutes = (time.perf_counter() - started) / 60
    record(args.out, minutes, torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device)
    log.info("wrote %s in %.1f min", ", ".join(p.name for p in paths), minutes)


if __name__ == "__main__":
    main()
