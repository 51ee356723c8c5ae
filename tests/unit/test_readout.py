"""The converged read-out (analysis/readout.py): exact least squares, the features the head
reads, and accuracy on a task it can solve."""

from __future__ import annotations

import numpy as np
import torch

from reasonlab.analysis.readout import fit_readout, readout_accuracy, readout_features
from reasonlab.model import ModelConfig, Transformer
from reasonlab.tasks import build_task


def test_fit_is_the_least_squares_minimizer():
    """At the minimizer the gradient of ||X W - Y||^2 + lam ||W||^2 vanishes (converged by
    construction, not by an iteration count)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 5, generator=g, dtype=torch.float64)
    y = (x[:, 0] + 0.3 * x[:, 1] > 0).long()
    W = fit_readout(x, y, 2, ridge=1e-6)
    X = torch.cat([x, torch.ones(200, 1, dtype=x.dtype)], 1)
    Y = torch.nn.functional.one_hot(y, 2).double()
    lam = 1e-6 * (X.T @ X).diagonal().mean()
    grad = X.T @ (X @ W - Y) + lam * W
    assert grad.abs().max() < 1e-8
    assert readout_accuracy(W, x, y) > 0.95  # a linear rule, so least squares finds it


def test_features_are_what_the_head_reads():
    """head(readout_features) == the model's logits at the label slot."""
    task = build_task({"name": "templates", "preset": "same_different", "n_train_symbols": 20,
                       "n_val_symbols": 2, "n_test_symbols": 5})
    cfg = ModelConfig.build(dict(vocab_size=len(task.vocab), n_classes=task.n_classes,
                                 max_seq_len=task.seq_len, d_model=16, n_heads=2, d_mlp=32,
                                 n_layers=2, norm_position="pre", ln_final_affine=False,
                                 init="torch_default"))
    model = Transformer(cfg, generator=torch.Generator().manual_seed(1)).double().eval()
    batch = task.sample(np.random.default_rng(0), 50, "train")
    feats = readout_features(model, batch, batch_size=7)
    logits = model(batch.tokens, batch.label_pos, batch.pad_mask)[:, 0]
    torch.testing.assert_close(model.head(feats), logits)
