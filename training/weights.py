"""Operations on weights shared by the sentence-transformers phases and the plain torch loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # the GPU loop imports this module where pydantic is not installed
    from training.recipe import PhaseConfig


def blend(states: Sequence[Mapping[str, torch.Tensor]], weights: Sequence[float] | None = None) -> dict[str, torch.Tensor]:
    """The weighted mean of state dicts of one architecture: a uniform soup by default, WiSE-FT's
    interpolation with ``[alpha, 1 - alpha]``. Tensors that are not floating point come from the first."""
    weights = weights or [1 / len(states)] * len(states)
    return {
        name: sum(w * s[name] for w, s in zip(weights, states, strict=True)) if tensor.is_floating_point() else tensor
        for name, tensor in states[0].items()
    }


def freeze(transformer: torch.nn.Module, phase: PhaseConfig) -> None:  # or the loop's plain namespace of one
    """Keep the token embeddings and the ``phase.frozen_layers`` lowest layers as in the start model (less forgetting)."""
    if phase.freeze_embeddings:
        transformer.get_input_embeddings().requires_grad_(False)
    for layer in transformer.encoder.layer[: phase.frozen_layers]:
        layer.requires_grad_(False)
