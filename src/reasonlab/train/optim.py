"""AdamW parameter groups and the warmup + cosine schedule (a pure function of the step)."""

import math

import torch
from torch import nn

from reasonlab.train.config import OptimConfig


def make_optimizer(model: nn.Module, cfg: OptimConfig, fused: bool = False
                   ) -> torch.optim.AdamW:
    """AdamW; biases and LayerNorm parameters are not decayed (BERT's convention) unless
    `weight_decay_on` is "all". `fused`: one CUDA kernel for the whole update (train() asks
    for it on CUDA; the CPU keeps the per-parameter loop)."""
    decay, no_decay = [], []
    for p in model.parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 and cfg.weight_decay_on == "matrices" else decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    if fused:  # the same maths in one kernel; deterministic (no atomics)
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, fused=True)
    # foreach=False: the same arithmetic order on every run, cheap at these sizes.
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, foreach=False)


def lr_at(step: int, total: int, cfg: OptimConfig) -> float:
    """Learning rate for optimiser step `step` (0-based) out of `total`."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    if cfg.schedule == "constant":
        return cfg.lr
    span = max(1, total - cfg.warmup_steps)
    progress = (step - cfg.warmup_steps) / span
    floor = cfg.min_lr_ratio * cfg.lr
    return floor + (cfg.lr - floor) * 0.5 * (1 + math.cos(math.pi * progress))
