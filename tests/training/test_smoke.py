"""A few-step run of the whole recipe (contrastive with mined lay pairs, lay phase, distillation of
two seeds, soup, export) on the toy store."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from indexer.encoders import OnnxEncoder, read_manifest
from indexer.store import StoreReader
from training import pipeline
from training.recipe import Recipe

pytestmark = pytest.mark.model

RECIPE = {
    "name": "smoke",
    "base_model": "all-MiniLM-L6-v2",
    "systems": ["toy", "toyicd"],
    "max_seq_length": 32,
    "split": {"seed": 13, "dev": 0.2, "test": 0.0},
    "data": {"definition_repeats": 2, "max_examples": {"triplets": 8}},
    "contrastive": {
        "datasets": ["lay", "definitions", "descriptions", "synonyms", "triplets"],
        "hard_negatives": 2,
        "bridges": 1,
        "epochs": 1,
        "batch_size": 4,
        "save_steps": 2,
        "seeds": [42],
    },
    "lay": {
        "enabled": True,
        "hard_negatives": 1,
        "repeats": {"lay": 2},
        "max_examples": {"synonyms": 3},
        "epochs": 1,
        "batch_size": 2,
        "seeds": [7],
    },
    "distill": {"enabled": True, "dims": 4, "epochs": 1, "batch_size": 4, "seeds": [1, 2]},
    # fp32: after a few steps on 13 toy texts the int8 parity guard (measured for real models) sits
    # at its threshold and moves with library versions; tests/encoders/test_export.py covers int8.
    "export": {"model_id": "smoke-model", "quantize": False},
}


def test_recipe_runs_end_to_end_and_resumes(toy_reader: StoreReader, tmp_path: Path) -> None:
    text = yaml.safe_dump(RECIPE)
    recipe = Recipe.model_validate(yaml.safe_load(text))
    model_dir = pipeline.run(recipe, text, toy_reader, tmp_path / "run")

    manifest = read_manifest(model_dir)
    assert manifest.model_id == "smoke-model"
    assert manifest.base_model == "all-MiniLM-L6-v2"
    assert manifest.quantization == "none"
    assert manifest.recipe["name"] == "smoke"
    assert manifest.data["systems"] == {"toy": "2025-01-16", "toyicd": "2026"}
    data = json.loads((tmp_path / "run" / "data.json").read_text())
    assert set(data["examples"]) == {"lay", "definitions", "descriptions", "synonyms", "triplets"}
    assert data["examples"]["triplets"] <= 8
    # Mined twice: by the base model for the contrastive phase, by its result for the lay phase.
    first = [json.loads(line) for line in (tmp_path / "run" / "contrastive-hard-negatives.jsonl").read_text().splitlines()]
    assert len(first) == data["examples"]["lay"] >= 4
    assert all(list(row) == ["anchor", "positive", "negative_1", "negative_2"] for row in first)
    assert all(len({row["positive"], row["negative_1"], row["negative_2"]}) == 3 for row in first)
    # The 4 (lay, formal label) pairs of the training concepts, each with a mined negative, twice.
    assert data["lay_examples"] == {"lay": 8, "synonyms": 3}
    mined = [json.loads(line) for line in (tmp_path / "run" / "lay-hard-negatives.jsonl").read_text().splitlines()]
    assert len(mined) == 4 and all(row["negative"] not in (row["anchor"], row["positive"]) for row in mined)
    for phase in ("contrastive-42", "lay-7", "distill-1", "distill-2", "distill-soup"):
        assert (tmp_path / "run" / phase / "final" / "modules.json").is_file()
    # The distillation head is dropped: the exported encoder keeps the base dimension.
    vectors = OnnxEncoder(model_dir).encode(["Tachycardia", "Fast heart rate"])
    assert vectors.shape == (2, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)

    # A second run finds every phase finished and only re-exports.
    again = pipeline.run(recipe, text, toy_reader, tmp_path / "run")
    assert read_manifest(again).model_id == "smoke-model"
