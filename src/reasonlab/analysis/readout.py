"""A linear read-out fitted to convergence on a frozen network's features (the read-out-only,
random-features regime of Boix-Adsera et al. 2024, Thm 1.1 and §4).

The theorem is about a read-out trained to convergence with the square loss (kernel
regression). Here the read-out is the exact minimizer of ridge-regularized least squares on
one-hot targets (real labels as regression targets; for two classes the same as +-1), solved in
closed form in float64, so "trained to convergence" holds by construction; the ridge is tiny
and relative to the features' scale, only there to keep the solve well posed.
"""

from __future__ import annotations

import torch
from torch import nn

from reasonlab.model.hooks import run_with_cache, to_device_of
from reasonlab.tasks.base import Batch

RIDGE = 1e-6
"""Ridge penalty relative to the mean eigenvalue of the features' second-moment matrix."""


@torch.no_grad()
def readout_features(model: nn.Module, data: Batch, batch_size: int = 1000) -> torch.Tensor:
    """What the model's head reads at the first label slot of each example: `hook_final`
    (after the final LayerNorm) at label_pos[:, 0], [N, d_model] float64, on the data's
    device; computed on the model's, batch_size examples at a time."""
    was_training = model.training
    model.eval()
    out = []
    for i in range(0, len(data), batch_size):
        b = to_device_of(model, data[i : i + batch_size])
        _, cache = run_with_cache(model, b.tokens, b.label_pos, b.pad_mask,
                                  names_filter="hook_final")
        h = cache["hook_final"]  # [batch, seq, d_model]
        rows = torch.arange(len(h), device=h.device)
        out.append(h[rows, b.label_pos[:, 0].clamp(min=0)].double().to(data.tokens.device))
    model.train(was_training)
    return torch.cat(out)


def fit_readout(train_x: torch.Tensor, train_y: torch.Tensor, n_classes: int,
                ridge: float = RIDGE) -> torch.Tensor:
    """W [d + 1, n_classes] minimizing ||[X, 1] W - onehot(y)||^2 + lam ||W||^2 with
    lam = ridge * trace([X, 1]^T [X, 1]) / (d + 1); closed form."""
    X = torch.cat([train_x, torch.ones(len(train_x), 1, dtype=train_x.dtype,
                                         device=train_x.device)], dim=1)
    Y = torch.nn.functional.one_hot(train_y, n_classes).to(X.dtype)
    G = X.T @ X
    lam = ridge * G.diagonal().mean()
    return torch.linalg.solve(G + lam * torch.eye(len(G), dtype=X.dtype, device=X.device), X.T @ Y)


def readout_accuracy(W: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> float:
    X = torch.cat([x, torch.ones(len(x), 1, dtype=x.dtype, device=x.device)], dim=1)
    return float(((X @ W).argmax(-1) == y).double().mean())


def converged_readout(model: nn.Module, train: Batch, test: Batch, n_classes: int
                      ) -> dict[str, float]:
    """Fit the read-out on `train` (first label slot) and report train and test accuracy."""
    ftr, fte = readout_features(model, train), readout_features(model, test)
    ytr, yte = train.labels[:, 0], test.labels[:, 0]
    W = fit_readout(ftr, ytr, n_classes)
    return {"train_acc": readout_accuracy(W, ftr, ytr), "test_acc": readout_accuracy(W, fte, yte)}
