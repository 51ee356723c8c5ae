"""Sizes of a run's model without allocating it: parameters and training FLOPs per step, read
off the model built on PyTorch's meta device (shapes only, no memory, no init cost)."""

from __future__ import annotations

import torch

from reasonlab.model import MODELS
from reasonlab.train.config import TrainConfig


def meta_model(config: TrainConfig) -> torch.nn.Module:
    with torch.device("meta"):
        return MODELS[config.model.arch.name](config.model)


def n_params(config: TrainConfig) -> int:
    return sum(p.numel() for p in meta_model(config).parameters())


def flops_per_step(config: TrainConfig) -> float:
    """Training FLOPs of one optimiser step: `flops_per_token` (model/transformer.py) at the
    task's sequence length, times the tokens of a batch."""
    T = config.model.max_seq_len
    return meta_model(config).flops_per_token(T) * T * config.batch_size
