"""Soups, WiSE-FT interpolation and freezing, shared by both trainers."""

from __future__ import annotations

import torch
from transformers import BertConfig, BertModel

from training.recipe import PhaseConfig
from training.weights import blend, freeze


def test_interpolation_weighs_each_model_and_keeps_integer_buffers_from_the_first() -> None:
    trained = {"w": torch.tensor([1.0, 3.0]), "ids": torch.tensor([0, 1])}
    base = {"w": torch.tensor([5.0, 7.0]), "ids": torch.tensor([9, 9])}
    mixed = blend([trained, base], [0.25, 0.75])
    assert torch.allclose(mixed["w"], torch.tensor([4.0, 6.0]))
    assert torch.equal(mixed["ids"], trained["ids"])
    assert torch.allclose(blend([trained, base])["w"], torch.tensor([3.0, 5.0]))  # a uniform soup


def test_freezing_keeps_token_embeddings_and_the_lowest_layers() -> None:
    model = BertModel(BertConfig(num_hidden_layers=3, hidden_size=16, num_attention_heads=2, intermediate_size=32, vocab_size=50))
    freeze(model, PhaseConfig(freeze_embeddings=True, frozen_layers=2))
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    assert "embeddings.word_embeddings.weight" not in trainable
    assert not any(name.startswith(("encoder.layer.0.", "encoder.layer.1.")) for name in trainable)
    assert any(name.startswith("encoder.layer.2.") for name in trainable)
    assert "embeddings.position_embeddings.weight" in trainable
