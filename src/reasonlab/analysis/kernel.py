"""Empirical kernel of a model's read-out features at random initialization.

Boix-Adsera et al. (ICLR 2024, §4): in the random-features (read-out only) regime a template
task is learned from data with unseen symbols iff the templates x templates matrix N built from
the network's kernel is non-singular, and its conditioning governs the samples needed. We
estimate (our reading of §4.2)

    N[i, j] = E_init E_{x ~ template i, x' ~ template j} <phi(x), phi(x')> / d_model

where phi is the read-out feature (final hidden state at the read-out token, after the final
LayerNorm) and x, x' are drawn from disjoint symbol alphabets (train and test), so that the
pair shares no symbol: the part of the kernel that carries a rule to unseen symbols. With x and
x' independent the inner expectation factorises: N = E_init[M M^T] / d, M[i] = mean feature of
template i.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from reasonlab.model.hooks import run_with_cache
from reasonlab.tasks.base import Batch


@torch.no_grad()
def readout_features(model: nn.Module, batch: Batch) -> torch.Tensor:
    """phi(x): the final hidden state at each example's (single) labelled position [B, d]."""
    _, cache = run_with_cache(model, batch.tokens, batch.label_pos, batch.pad_mask,
                              names_filter="hook_final")
    h = cache["hook_final"]  # [B, T, d_model]
    return h[torch.arange(len(batch), device=h.device), batch.label_pos[:, 0]]


def template_kernel_matrix(task: object, make_model: Callable[[int], nn.Module], n_inits: int,
                           n_per_template: int, seed: int = 0,
                           device: torch.device | str = "cpu") -> np.ndarray:
    """N [K, K] for a templates task (needs `templates` and `sample(rng, n, split, template)`),
    averaged over `n_inits` models `make_model(i)`, computed on `device` (the models and
    examples are drawn on the CPU, the same on every device, then moved there)."""
    rng = np.random.default_rng(seed)
    K = len(task.templates)  # type: ignore[attr-defined]
    left = [task.sample(rng, n_per_template, "train", k).to(device)  # type: ignore
            for k in range(K)]
    right = [task.sample(rng, n_per_template, "test", k).to(device)  # type: ignore
             for k in range(K)]
    N = np.zeros((K, K))
    for i in range(n_inits):
        model = make_model(i).to(device).eval()
        ml = torch.stack([readout_features(model, b).double().mean(0) for b in left])  # [K, d]
        mr = torch.stack([readout_features(model, b).double().mean(0) for b in right])
        N += (ml @ mr.T).cpu().numpy() / ml.shape[1]
    N /= n_inits
    return (N + N.T) / 2  # symmetric in expectation; average out the sampling asymmetry


def condition_number(N: np.ndarray) -> float:
    """Ratio of the largest to the smallest singular value (inf if singular)."""
    s = np.linalg.svd(N, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
