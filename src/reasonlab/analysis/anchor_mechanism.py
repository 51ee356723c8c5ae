"""How an anchor model computes: anchor embeddings, attention of the read-out position, and
how additively the two anchors combine (Zhang et al. 2024, arXiv 2405.05409, §4-5: inferential
solutions have lower complexity; docs/papers.md §3 Anchor functions).

All functions read a model and a Batch of the anchor task; none trains anything.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from reasonlab.model.hooks import run_with_cache
from reasonlab.model.transformer import block_output_hook
from reasonlab.tasks.anchors import AnchorsTask
from reasonlab.tasks.base import Batch


def anchor_embeddings(model: nn.Module, task: AnchorsTask) -> np.ndarray:
    """Rows of W_E for anchors 1..k: [k, d_model]."""
    ids = [task.vocab.id(str(a)) for a in task.anchors]
    return model.W_E[ids].detach().double().cpu().numpy()


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """Cosine similarity of the rows of x [k, d]: [k, k]."""
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    return u @ u.T


def pca_2d(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of x projected on their first two principal axes: ([k, 2], explained ratio [2])."""
    c = x - x.mean(0)
    _, s, vt = np.linalg.svd(c, full_matrices=False)
    var = s**2 / max((s**2).sum(), 1e-30)
    return c @ vt[:2].T, var[:2]


def shift_order_correlation(task: AnchorsTask, cos: np.ndarray) -> float:
    """Spearman correlation, over anchor pairs i < j, between the embeddings' cosine
    similarity and -|s_i - s_j| (nearby primitives -> similar embeddings)."""
    s = np.array(task.config.shifts, dtype=float)
    i, j = np.triu_indices(len(s), 1)
    a, b = cos[i, j], -np.abs(s[i] - s[j])
    if len(a) < 3:
        return float("nan")
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


@torch.no_grad()
def readout_attention(model: nn.Module, data: Batch) -> np.ndarray:
    """Attention of the last position, per layer, to [key, anchor 1, anchor 2, others],
    averaged over examples and heads: [n_layers, 4]."""
    dev = model.W_E.device  # the examples go where the model is; one copy comes back
    _, cache = run_with_cache(model, data.tokens.to(dev), data.label_pos.to(dev))
    kp = data.meta["key_pos"][:, 0].to(dev)  # [N]
    rows = torch.arange(len(kp), device=kp.device)
    out = []
    for l in range(model.config.n_layers):
        pat = cache[f"blocks.{l}.attn.hook_pattern"][:, :, -1].mean(1)  # [N, k_pos]
        key, a1, a2 = pat[rows, kp], pat[rows, kp + 1], pat[rows, kp + 2]
        out.append(torch.stack([key, a1, a2, 1 - key - a1 - a2], 1).mean(0))
    return torch.stack(out).double().cpu().numpy()


@torch.no_grad()
def pair_representations(model: nn.Module, task: AnchorsTask, data: Batch) -> np.ndarray:
    """Final residual stream at the read-out position, averaged per anchor pair over the
    examples of `data` (keys and positions balanced across pairs): [n_pairs, d_model]."""
    dev = model.W_E.device  # the examples go where the model is; one copy comes back
    _, cache = run_with_cache(model, data.tokens.to(dev), data.label_pos.to(dev))
    last = f"blocks.{model.config.n_layers - 1}.{block_output_hook(model.config)}"
    h = cache[last][:, -1].double()  # [N, d]: the last block's output
    pair = data.meta["pair"][:, 0].to(dev)
    return torch.stack([h[pair == p].mean(0) for p in range(len(task.pairs))]).cpu().numpy()


def additivity(task: AnchorsTask, reps: np.ndarray) -> dict[str, float]:
    """Fit reps[(a1,a2)] ~ c + u[a1] + v[a2] by least squares on the compositional pairs
    (neither custom nor held out), then ask, per held-out pair:

      r2_fit          R^2 of the additive fit on the pairs it was fitted on;
      heldout_resid   |h - h_hat| / |h - mean| for the held-out pair (0: perfectly additive);
      cos_to_mirror   cosine of (h - mean) with (h_mirror - mean): near 1 when the held-out
                      pair is represented like the trained mirrored pair (symmetric solution).
    Reported for the first held-out pair.
    """
    k = task.config.n_anchors
    custom = {tuple(c.pair) for c in task.config.custom}
    comp = [i for i, p in enumerate(task.pairs)
            if not task.heldout_mask[i] and p not in custom]

    def design(ids: list[int]) -> np.ndarray:
        x = np.zeros((len(ids), 1 + 2 * k))
        for r, i in enumerate(ids):
            a, b = task.pairs[i]
            x[r, 0], x[r, a], x[r, k + b] = 1, 1, 1
        return x

    X, Y = design(comp), reps[comp]
    coef, *_ = np.linalg.lstsq(X, Y, rcond=None)
    mean = Y.mean(0)
    r2 = 1 - ((X @ coef - Y) ** 2).sum() / max(((Y - mean) ** 2).sum(), 1e-30)
    hid = task.heldout_ids[0]
    h = reps[hid]
    h_hat = design([hid])[0] @ coef
    a, b = task.pairs[hid]
    mirror = reps[task.pair_id(b, a)] - mean
    dh = h - mean
    return {
        "r2_fit": float(r2),
        "heldout_resid": float(np.linalg.norm(h - h_hat) / max(np.linalg.norm(dh), 1e-30)),
        "cos_to_mirror": float(dh @ mirror / max(np.linalg.norm(dh) * np.linalg.norm(mirror),
                                                 1e-30)),
    }
