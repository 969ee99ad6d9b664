"""Training recipes: YAML files validated into one pydantic model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, PositiveInt, ValidationError, field_validator

# The builders of ``training.data.builders`` a phase can draw on.
DatasetName = Literal["definitions", "descriptions", "entries", "hierarchy", "synonyms", "triplets", "lay"]


class SplitConfig(BaseModel):
    seed: int = 13
    dev: float = Field(default=0.05, ge=0, lt=1)
    test: float = Field(default=0.10, ge=0, lt=1)


class DataConfig(BaseModel):
    definition_repeats: int = 4
    descriptions_per_concept: int = 2
    synonyms_per_concept: int = 6
    # The project's vocabulary (lay, parent and clinician phrasings) as lay wording of its
    # concepts (training.data.vocabulary): trained as the ``lay`` dataset, mined negatives included.
    vocabulary: bool = False
    # Cap per dataset (None = all): keeps a CPU recipe inside its time budget.
    max_examples: dict[DatasetName, int | None] = Field(default_factory=dict)


class PhaseConfig(BaseModel):
    epochs: float = 1
    batch_size: int = 64
    learning_rate: float = 2e-5
    warmup_ratio: float = 0.05
    weight_decay: float = 0.01
    save_steps: int = 200
    seeds: list[int] = Field(default_factory=lambda: [42])
    # Forgetting guards: the token embeddings (and this many of the lowest transformer layers) stay as in the base.
    freeze_embeddings: bool = False
    frozen_layers: int = Field(default=0, ge=0)


class ContrastiveConfig(PhaseConfig):
    datasets: list[DatasetName] = Field(default_factory=lambda: ["definitions", "descriptions", "synonyms", "triplets"])
    # Per-phase caps, over ``data.max_examples`` (e.g. a small replay of synonym pairs in the lay phase).
    max_examples: dict[DatasetName, int | None] = Field(default_factory=dict)
    triplet_margin: float = 0.1
    # Add to each lay pair this many near but wrong labels, mined by the model the phase starts from
    # (``train.hard_negatives``): random in-batch negatives rarely include "Heart failure" for "heart attack".
    hard_negatives: int = Field(default=0, ge=0)
    # With hard negatives: also pair each lay wording with up to this many labels of the other
    # systems that contain its concept's name ("Heart attack" → "Acute myocardial infarction").
    bridges: int = Field(default=0, ge=0)
    # Each row of these datasets appears this many times in the phase, after mining: more passes
    # over the lay pairs without more epochs of everything else.
    repeats: dict[DatasetName, PositiveInt] = Field(default_factory=dict)


class LayConfig(ContrastiveConfig):
    """A second contrastive phase, from the contrastive model, mostly on layperson synonym pairs."""

    enabled: bool = False
    datasets: list[DatasetName] = Field(default_factory=lambda: ["lay", "synonyms"])


class DistillConfig(PhaseConfig):
    enabled: bool = True
    # Targets PCA-reduced to this many dimensions through a linear head (BioLORD-2023); None: the
    # teacher's whole normalised vectors, regressed by the encoder itself (no head, nothing left to drift).
    dims: PositiveInt | None = 64
    # Students start from the teacher (the contrastive soup) rather than from the base.
    from_teacher: bool = False
    # Concepts whose labels are distilled (None = every training concept); their targets need two
    # teacher encodings each, so this bounds the phase's cost on CPU.
    max_concepts: int | None = None


class InterpolateConfig(BaseModel):
    """WiSE-FT, the last phase: weights ``alpha * trained + (1 - alpha) * base``, with the alpha of
    ``alphas`` that scores best on the dev split (mean Hits@1 of ``training.compare``'s ranking tasks)."""

    enabled: bool = False
    alphas: list[float] = Field(default_factory=lambda: [0.4, 0.5, 0.6, 0.7, 0.8, 1.0])
    max_items: PositiveInt = 200  # dev items per task

    @field_validator("alphas")
    @classmethod
    def _in_unit_interval(cls, alphas: list[float]) -> list[float]:
        if not alphas or any(not 0 <= a <= 1 for a in alphas):
            raise ValueError("alphas must be one or more numbers from 0 to 1")
        return alphas


class ExportConfig(BaseModel):
    model_id: str
    quantize: bool = True


class Recipe(BaseModel):
    name: str
    base_model: str = "all-MiniLM-L6-v2"  # a name from training.base_models or a directory
    systems: list[str] = Field(default_factory=lambda: ["hpo", "icd10cm"])
    # Open text beside the store's systems (training.data.open_text), split and held out like them.
    open_text: list[Literal["mesh", "hpoa"]] = Field(default_factory=list)
    max_seq_length: int = 64
    split: SplitConfig = SplitConfig()
    data: DataConfig = DataConfig()
    contrastive: ContrastiveConfig = ContrastiveConfig()
    lay: LayConfig = LayConfig()
    distill: DistillConfig = DistillConfig()
    interpolate: InterpolateConfig = InterpolateConfig()
    export: ExportConfig

    @classmethod
    def load(cls, path: Path) -> Recipe:
        """Raises RecipeError, one line naming the file and each wrong field."""
        return cls.read(path)[0]

    @classmethod
    def read(cls, path: Path) -> tuple[Recipe, str]:
        """The recipe of ``path`` and its source (what a model's record keeps): the file's text, or
        for a recipe that ``extends`` another the merged fields as YAML, headed by the files read.
        Raises RecipeError."""
        mapping, read = _read(path, ())
        source = (
            read[0][1]
            if len(read) == 1
            else (f"# {' extending '.join(p.name for p, _ in read)}, merged\n" + yaml.safe_dump(mapping, sort_keys=False))
        )
        try:
            return cls.model_validate(mapping), source
        except ValidationError as exc:
            fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'recipe'}: {e['msg']}" for e in exc.errors())
            raise RecipeError(f"{path}: {fields}") from exc


def _read(path: Path, seen: tuple[Path, ...]) -> tuple[object, list[tuple[Path, str]]]:
    """A recipe file's YAML, with the recipe it ``extends`` (a path relative to it) merged under it:
    the file's fields replace the other's, field by field within a section; and the files read, with
    their texts. A
    recipe that extends another names its own run and model (``name``, ``export.model_id``): one
    left to the other's would resume the other's run and export under its id."""
    if path.resolve() in seen:
        raise RecipeError(f"{path}: extends itself")
    try:
        text = path.read_text(encoding="utf-8")
        mapping = yaml.safe_load(text)
    except OSError as exc:
        raise RecipeError(f"{path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: not YAML: {' '.join(str(exc).split())}") from exc
    if not isinstance(mapping, dict) or "extends" not in mapping:
        return mapping, [(path, text)]
    parent = mapping.pop("extends")
    if not isinstance(parent, str):
        raise RecipeError(f"{path}: extends: the path of a recipe file, relative to this one")
    export = mapping.get("export")
    missing = [
        field
        for field, set_ in (("name", "name" in mapping), ("export.model_id", isinstance(export, dict) and "model_id" in export))
        if not set_
    ]
    if missing:
        raise RecipeError(f"{path}: extends {parent} but does not set its own {' and '.join(missing)}")
    try:
        base, more = _read(path.parent / parent, (*seen, path.resolve()))
    except RecipeError as exc:
        raise RecipeError(f"{path}: extends {exc}") from exc
    if not isinstance(base, dict):
        raise RecipeError(f"{path}: extends {path.parent / parent}: not a recipe (a mapping of fields)")
    return _merged(base, mapping), [(path, text), *more]


def _merged(base: dict, over: dict) -> dict:
    """``base`` with ``over``'s fields: a mapping in both is merged field by field, anything else replaced."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


class RecipeError(ValueError):
    pass
