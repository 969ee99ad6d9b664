"""The GPU recipe's trainer: a plain torch loop over a pack (:mod:`training.packed`).

``python -m training.loop PACK_DIR --out WEIGHTS_DIR [--device cuda]`` runs, from the pack's base
weights and recipe: the contrastive phase once per seed (InfoNCE with in-batch and mined negatives,
the triplet loss on ``triplets``, one dataset a batch, datasets mixed in proportion), a soup of the
seeds, then (when on) self-distillation of that soup into the base (or into itself, ``from_teacher``) for each distillation seed
(BioLORD-2023: PCA-reduced mean of name and meaning), and a soup of the students. It writes the
weights that differ from the base as fp16 shards; ``python -m training finish`` interpolates with
the base on the dev split and exports ONNX on the CPU. It needs torch, transformers, safetensors
and the pack only (no ``datasets``, no pydantic, no store: the recipe travels as the pack's JSON).
Batches hold no text twice (a repeated text would be its own negative), as sentence-transformers'
no-duplicates sampler; gradients are clipped to norm 1 and biases and LayerNorm weights are not
decayed, as the Trainer of the CPU recipe does. Each phase checkpoints every epoch and resumes;
files are written whole or not at all.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModel, get_linear_schedule_with_warmup

from training.packed import TRIPLETS, Packed, load_shards, read_meta, save_shards
from training.weights import blend, freeze

log = logging.getLogger("training.loop")
SCALE = 20.0  # InfoNCE's cosine scale, as sentence-transformers' MultipleNegativesRankingLoss
ENCODE_BATCH = 1024
LOOP_RECORD = "loop.json"  # the run's minutes and device, next to the shards
TEACHER = "teacher"  # with distillation, the contrastive soup's shards, in this folder of the output


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
        recipe = self.meta["recipe"]  # validated by training.recipe when packed
        self.contrastive_phase = SimpleNamespace(**recipe["contrastive"])
        self.distill_phase = SimpleNamespace(**recipe["distill"])
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
        phase = self.contrastive_phase
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

    def distill(self, targets: torch.Tensor, seed: int, out: Path, teacher: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """One student (the base, or ``teacher`` with ``distill.from_teacher``) regressing each label
        onto its concept's target: through a fresh linear head onto reduced targets, else its own
        vectors onto the whole ones (squared distance of unit vectors, 2 - 2 cos)."""
        phase = self.distill_phase
        model = self.model(teacher if phase.from_teacher else None)
        torch.manual_seed(seed)
        head = torch.nn.Identity() if phase.dims is None else torch.nn.Linear(self.config.hidden_size, phase.dims).to(self.device)
        model.add_module("head", head)

        def step(_: str, rows: np.ndarray) -> torch.Tensor:
            (vectors,) = self._vectors(model, rows[:, :1])
            wanted = targets[torch.from_numpy(rows[:, 1]).to(self.device)]
            return F.mse_loss(head(vectors), wanted) * (wanted.shape[1] if phase.dims is None else 1)

        state = self._train(model, phase, {"distill": self.packed.labels}, step, seed, out / f"distill-{seed}", texts=0)
        return {name.removeprefix("transformer."): t for name, t in state.items() if name.startswith("transformer.")}

    def targets(self, teacher: dict[str, torch.Tensor], out: Path) -> torch.Tensor:
        """BioLORD-2023's targets, one row per pack concept: the teacher's mean of name and meaning
        vectors, PCA-reduced to ``distill.dims`` (None: whole and normalised); computed once
        (``out``), so a resumed run regresses onto the same ones."""
        path = out / "targets.pt"
        if path.is_file():
            return torch.load(path, map_location=self.device)
        phase = self.distill_phase
        model = self.model(teacher)
        names, meanings = self.packed.concepts[:, 0], self.packed.concepts[:, 1]
        mean = (self.encode(model, names) + self.encode(model, meanings)) / 2
        if phase.dims is None:
            targets = F.normalize(mean, dim=-1)
        else:
            centred = mean - mean.mean(0)
            _, _, components = torch.linalg.svd(centred, full_matrices=False)
            targets = centred @ components[: phase.dims].T
        _save(targets, path)
        return targets

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

    def _train(  # noqa: PLR0913
        self, model: Encoder, phase: SimpleNamespace, datasets: dict[str, np.ndarray], step, seed: int, out: Path, texts: int | None = None  # noqa: ANN001
    ) -> dict[str, torch.Tensor]:
        """AdamW with linear warm-up and decay over ``phase.epochs``; checkpoints each epoch, resumes.
        ``texts``: how many leading columns of the rows are texts that a batch must not repeat
        (default all; 0 for regression, which has no negatives to spoil)."""
        done = out / "final.pt"
        if done.is_file():
            return torch.load(done, map_location="cpu")
        freeze(model.transformer, phase)
        epochs = max(1, round(phase.epochs))
        plan = [list(_batches(datasets, phase.batch_size, np.random.default_rng([seed, epoch]), texts)) for epoch in range(epochs)]
        total = sum(len(batches) for batches in plan)
        named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
        groups = [
            {"params": [p for name, p in named if not _no_decay(name)], "weight_decay": phase.weight_decay},
            {"params": [p for name, p in named if _no_decay(name)], "weight_decay": 0.0},
        ]
        optimiser = torch.optim.AdamW(groups, lr=phase.learning_rate)
        schedule = get_linear_schedule_with_warmup(optimiser, round(phase.warmup_ratio * total), total)
        first = _resume(out, model, optimiser, schedule)
        torch.manual_seed(seed)
        started, seen = time.perf_counter(), 0
        for epoch in range(first, epochs):
            model.train()
            for number, (name, rows) in enumerate(plan[epoch]):
                loss = step(name, rows)
                loss.backward()
                torch.nn.utils.clip_grad_norm_([p for _, p in named], 1.0)
                optimiser.step()
                schedule.step()
                optimiser.zero_grad(set_to_none=True)
                seen += len(rows)
                if number % 50 == 0:
                    rate = seen / (time.perf_counter() - started)
                    log.info("%s epoch %d step %d/%d loss %.4f (%s), %.0f rows/s", out.name, epoch + 1, number, len(plan[epoch]), loss.item(), name, rate)
            saved = {"epoch": epoch + 1, "model": model.state_dict(), "optimiser": optimiser.state_dict(), "schedule": schedule.state_dict()}
            _save(saved, out / "checkpoint.pt")
        state = {name: t.detach().cpu() for name, t in model.state_dict().items()}
        _save(state, done)
        return state


def run(pack_dir: Path, out: Path, device: str, work: Path | None = None, seed: int | None = None) -> list[Path]:
    """The whole GPU recipe; returns the fp16 shards written to ``out``. Checkpoints go to
    ``work`` (default ``out / "work"``): a directory kept between calls, to resume. With ``seed``,
    only that seed's contrastive phase runs (to ``work``), so that seeds can train side by side in
    separate processes; a whole run then finds them done."""
    trainer = Trainer(pack_dir, device)
    work = work or out / "work"
    if seed is not None:
        trainer.contrastive(seed, work)
        return []
    teachers = [_encoder_state(trainer.contrastive(seed, work)) for seed in trainer.contrastive_phase.seeds]
    final = blend(teachers)
    if trainer.distill_phase.enabled:
        save_shards(final, out / TEACHER, _changed(final, trainer.base))  # the soup comes back too, to be judged
        targets = trainer.targets(final, work)
        final = blend([trainer.distill(targets, seed, work, final) for seed in trainer.distill_phase.seeds])
    return save_shards(final, out, _changed(final, trainer.base))


def _changed(state: dict[str, torch.Tensor], base: dict[str, torch.Tensor]) -> list[str]:
    """The floating tensors of ``state`` that differ from ``base`` in fp16."""
    return [
        name
        for name, tensor in state.items()
        if tensor.is_floating_point() and not torch.equal(tensor.to(torch.float16).float(), base[name])
    ]


def record(out: Path, minutes: float, device: str) -> None:
    (out / LOOP_RECORD).write_text(json.dumps({"minutes": round(minutes, 1), "device": device}))


def _no_decay(name: str) -> bool:
    return "bias" in name or "LayerNorm" in name


def _save(obj: object, path: Path) -> None:
    """``torch.save`` to a temporary file, then renamed: a run cut short leaves no half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    torch.save(obj, partial)
    os.replace(partial, path)


def _encoder_state(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {name.removeprefix("transformer."): t for name, t in state.items()}


def _batches(datasets: dict[str, np.ndarray], size: int, rng: np.random.Generator, texts: int | None = None) -> Iterator[tuple[str, np.ndarray]]:
    """The rows of every dataset, a dataset a batch, the batches in random order. A batch takes
    rows in shuffled order and passes over (to a later batch) one that repeats a text already in
    it, in its first ``texts`` columns (default: all); rows that only clash with each other at the
    end, and a batch of one row (no in-batch negative), are left out."""
    batches = []
    for name, rows in datasets.items():
        pending = rng.permutation(len(rows)).tolist()
        while len(pending) > 1:
            taken, seen, skipped, i = [], set(), [], 0
            while i < len(pending) and len(taken) < size:
                row = rows[pending[i], :texts].tolist()
                if seen.isdisjoint(row):
                    taken.append(pending[i])
                    seen.update(row)
                else:
                    skipped.append(pending[i])
                i += 1
            if len(taken) < 2:
                break
            batches.append((name, rows[taken]))
            pending = skipped + pending[i:]
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
    parser.add_argument("--work", type=Path, help="checkpoints, kept between calls to resume (default: OUT/work)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seed", type=int, help="train only this contrastive seed (seeds side by side), then stop")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    started = time.perf_counter()
    paths = run(args.pack, args.out, args.device, args.work, args.seed)
    if args.seed is not None:
        log.info("contrastive seed %d done in %.1f min", args.seed, (time.perf_counter() - started) / 60)
        return
    minutes = (time.perf_counter() - started) / 60
    record(args.out, minutes, torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device)
    log.info("wrote %s in %.1f min", ", ".join(p.name for p in paths), minutes)


if __name__ == "__main__":
    main()
