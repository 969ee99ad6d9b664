"""The GPU recipe on the CPU with a tiny model: pack (CPU), the plain torch loop, finish (CPU)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from sentence_transformers import SentenceTransformer, models
from transformers import BertConfig, BertModel

from indexer.encoders import OnnxEncoder, read_manifest
from indexer.store import StoreReader
from tests.toy import toy_concepts, toyicd_concepts
from training import base_models, loop, pipeline, train
from training.data.graph import OntologyGraph
from training.packed import SHARD_BYTES, SHARDS, Packed, load_shards, read_meta
from training.recipe import DistillConfig

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer, 32-wide BERT with MiniLM's tokenizer, as a sentence-transformers directory."""
    root = tmp_path_factory.mktemp("tiny")
    minilm = SentenceTransformer(str(base_models.resolve(base_models.MINILM, root / "cache")), device="cpu")
    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    BertModel(config).save_pretrained(root / "bert")
    minilm[0].tokenizer.save_pretrained(root / "bert")
    transformer = models.Transformer(str(root / "bert"), max_seq_length=32)
    tiny = SentenceTransformer(modules=[transformer, models.Pooling(32, "mean"), models.Normalize()], device="cpu")
    tiny.save(str(root / "model"))
    return root / "model"


def _recipe(base: Path) -> dict:
    return {
        "name": "tiny-gpu",
        "base_model": str(base),
        "systems": ["toy", "toyicd"],
        "max_seq_length": 32,
        "split": {"seed": 13, "dev": 0.3, "test": 0.0},
        "contrastive": {
            "datasets": ["lay", "definitions", "descriptions", "entries", "hierarchy", "synonyms", "triplets"],
            "epochs": 2,
            "batch_size": 4,
            "learning_rate": 1e-3,
            "freeze_embeddings": True,
            "seeds": [1, 2],
        },
        "distill": {"enabled": True, "dims": 4, "epochs": 1, "batch_size": 4, "freeze_embeddings": True, "seeds": [1, 2]},
        "interpolate": {"enabled": True, "alphas": [0.5, 1.0], "max_items": 20},
        "export": {"model_id": "tiny-gpu-model", "quantize": False},
    }


def test_pack_loop_and_finish_make_a_model(toy_reader: StoreReader, tiny_model: Path, tmp_path: Path) -> None:
    text = yaml.safe_dump(_recipe(tiny_model))
    recipe = pipeline.Recipe.model_validate(yaml.safe_load(text))

    pack = pipeline.pack(recipe, text, toy_reader, tmp_path / "run", tmp_path / "pack")

    packed = Packed.load(pack)
    meta = read_meta(pack)
    assert meta["recipe"]["name"] == "tiny-gpu" and meta["texts"] == len(packed.offsets) - 1
    assert set(packed.datasets) == set(meta["data"]["examples"]) and len(packed.datasets["hierarchy"]) == meta["data"]["examples"]["hierarchy"]
    assert packed.datasets["lay"].shape[1] == 2 and packed.datasets["hierarchy"].shape[1] == 3  # (anchor, positive[, negative])
    tokenizer = SentenceTransformer(str(tiny_model), device="cpu")[0].tokenizer
    first = packed.datasets["hierarchy"][0]
    assert meta["pad_token_id"] == tokenizer.pad_token_id
    names = {c.display.lower() for c in [*toy_concepts(), *toyicd_concepts()]}
    assert tokenizer.decode(packed.text(int(first[1])), skip_special_tokens=True) in names  # the parent's name
    # Every training concept is distilled; each of its labels points at it.
    assert packed.concepts.shape[1] == 2 and packed.labels[:, 1].max() == len(packed.concepts) - 1

    out = tmp_path / "weights"
    shards = loop.run(pack, out, "cpu")
    loop.record(out, 0.1, "cpu")

    assert shards and all(p.stat().st_size <= SHARD_BYTES for p in out.glob(SHARDS))
    trained = load_shards(out)
    base = load_shards(pack / "base")
    # Frozen token embeddings stay home; the layers that learned come back.
    assert "embeddings.word_embeddings.weight" not in trained
    assert any(not torch.equal(trained[name].half().float(), base[name]) for name in trained)
    # Finished phases are not run again.
    assert loop.run(pack, out, "cpu") == shards

    model_dir = pipeline.finish_packed(pack, out, toy_reader, tmp_path / "run")

    manifest = read_manifest(model_dir)
    assert manifest.model_id == "tiny-gpu-model"
    assert manifest.max_length == 32  # the recipe's, not the base's
    assert manifest.data["interpolation"]["alpha"] in (0.5, 1.0)
    assert set(manifest.data["interpolation"]["dev_scores"]) == {"0.5", "1"}
    # Each candidate was scored as served: exported as the recipe exports, kept for a resumed run.
    candidate = read_manifest(tmp_path / "run" / "interpolate-0.5" / "onnx")
    assert (candidate.model_id, candidate.quantization) == ("tiny-gpu-model-alpha-0.5", manifest.quantization)
    assert manifest.data["loop"] == {"minutes": 0.1, "device": "cpu"}
    vectors = OnnxEncoder(model_dir).encode(["Tachycardia", "Fast heart rate"])
    assert vectors.shape == (2, 32)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_batches_never_repeat_a_text() -> None:
    """A repeated text would be its own in-batch negative (sentence-transformers' no-duplicates sampler)."""
    rows = np.array([[0, 1], [0, 2], [0, 3], [4, 5], [6, 1], [7, 8]], dtype=np.int32)
    batches = list(loop._batches({"lay": rows}, 3, np.random.default_rng(0)))
    assert all(len(set(b[1].ravel().tolist())) == b[1].size for b in batches)
    used = sorted(map(tuple, np.concatenate([b[1] for b in batches]).tolist()))
    assert {(4, 5), (7, 8)} <= set(used) and len(used) == len(set(used))  # each row at most once
    # Regression rows (text, concept) may share concepts: only the text column counts.
    labels = np.array([[0, 0], [1, 0], [2, 0], [3, 1]], dtype=np.int32)
    assert sum(len(b[1]) for b in loop._batches({"distill": labels}, 2, np.random.default_rng(0), texts=0)) == 4


def test_an_interrupted_phase_resumes_after_its_last_epoch(toy_reader: StoreReader, tiny_model: Path, tmp_path: Path, caplog) -> None:  # noqa: ANN001
    text = yaml.safe_dump({**_recipe(tiny_model), "distill": {"enabled": False}})
    recipe = pipeline.Recipe.model_validate(yaml.safe_load(text))
    pack = pipeline.pack(recipe, text, toy_reader, tmp_path / "run", tmp_path / "pack")
    trainer = loop.Trainer(pack, "cpu")
    whole = trainer.contrastive(1, tmp_path / "a")
    # As if stopped after the last epoch's checkpoint, before the final state was written.
    (tmp_path / "a" / "contrastive-1" / "final.pt").unlink()
    with caplog.at_level("INFO", logger="training.loop"):
        resumed = trainer.contrastive(1, tmp_path / "a")
    assert "resumed after epoch 2" in caplog.text
    assert all(torch.equal(whole[name], resumed[name]) for name in whole)


def test_the_loop_needs_neither_pydantic_nor_datasets() -> None:
    """The GPU image has torch, transformers and safetensors, not pydantic or datasets."""
    blocked = "import sys; sys.modules.update(pydantic=None, datasets=None, sentence_transformers=None); import training.loop"
    subprocess.run([sys.executable, "-c", blocked], check=True, cwd=Path(__file__).resolve().parents[2])


def test_seeds_train_side_by_side_then_the_soup_distils_onto_its_own_whole_vectors(
    toy_reader: StoreReader, tiny_model: Path, tmp_path: Path
) -> None:
    distill = {"enabled": True, "dims": None, "from_teacher": True, "epochs": 1, "batch_size": 4, "seeds": [1]}
    text = yaml.safe_dump({**_recipe(tiny_model), "distill": distill})
    recipe = pipeline.Recipe.model_validate(yaml.safe_load(text))
    pack = pipeline.pack(recipe, text, toy_reader, tmp_path / "run", tmp_path / "pack")
    out = tmp_path / "weights"

    # One process a seed: each trains its contrastive phase alone and writes no weights.
    assert loop.run(pack, out, "cpu", seed=1) == [] and loop.run(pack, out, "cpu", seed=2) == []
    assert (out / "work" / "contrastive-2" / "final.pt").is_file() and not list(out.glob(SHARDS))
    assert loop.run(pack, out, "cpu")

    targets = torch.load(out / "work" / "targets.pt")
    assert targets.shape == (len(Packed.load(pack).concepts), 32)  # whole vectors, no PCA
    np.testing.assert_allclose(targets.norm(dim=1).numpy(), 1.0, atol=1e-4)
    teacher, student = load_shards(out / loop.TEACHER), load_shards(out)
    assert not any(name.startswith("head.") for name in torch.load(out / "work" / "distill-1" / "final.pt"))  # no head
    # The student started from the soup and moved: the soup comes back beside it, to be judged too.
    assert any(not torch.equal(teacher[name], student[name]) for name in student if name in teacher)


def test_the_cpu_recipe_distils_onto_whole_vectors_without_a_head(
    toy_reader: StoreReader, tiny_model: Path, tmp_path: Path
) -> None:
    """The sentence-transformers path of ``distill.dims: null``: normalised targets of the base's
    dimension, and a student that keeps it (no head to drop)."""
    graph = OntologyGraph.from_store(toy_reader, ["toy", "toyicd"])
    keys = set(graph.nodes)
    targets = train.distillation_targets(tiny_model, graph, keys, keys, None, seed=1)
    assert {v.shape for v in targets.values()} == {(32,)}
    np.testing.assert_allclose([np.linalg.norm(v) for v in targets.values()], 1.0, atol=1e-5)
    config = DistillConfig(dims=None, from_teacher=True, epochs=1, batch_size=4, learning_rate=1e-3)
    student_dir = train.distill(tiny_model, graph, targets, config, 32, tmp_path / "distill", 1)
    student = SentenceTransformer(str(student_dir), device="cpu")
    assert student.get_embedding_dimension() == 32
    label = graph.nodes[next(iter(sorted(keys)))].name
    assert not np.allclose(student.encode([label]), SentenceTransformer(str(tiny_model), device="cpu").encode([label]))
