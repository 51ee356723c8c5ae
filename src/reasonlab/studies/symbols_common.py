"""Shared pieces of the abstract-symbols studies (Boix-Adsera et al., ICLR 2024;
docs/papers.md §2 Abstract symbols).

The model is the authors' (`eboix/relational-reasoning` experiments/models.py; docs/papers.md,
checked by tests/unit/test_authors_structure.py): a pre-LayerNorm transformer, bias-free
Q/K/V/O, an MLP with biases and GELU, LayerNorm eps 1e-5, learned positions, a read-out token
appended at the end (the task's [OUT]) read through a final LayerNorm without gain or bias and
a linear map, 2 layers (the depth of most of the paper's experiments), and PyTorch's default
initialization (`torch_default`: embeddings N(0, 1), linears kaiming-uniform). Before issue 17
the studies used BERT's N(0, 0.02^2) (`BERT_INIT`); where that changes a verdict the study
reports it as an arm.

Real labels (same/different) are trained as classes with cross-entropy, not as +-1
regression targets with MSE as the authors do: the claims are about test accuracy on unseen
symbols, a 2-way softmax and a +-1 regression give the same sign rule on these separable
tasks, and the training loop is shared by every task. Where the paper's theory needs the
regression (the read-out-only kernel regime), `symbols-readout-vs-full` fits the read-out by
closed-form least squares on +-1 targets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reasonlab.studies.base import Report, Scale, merge

# Per-scale model and optimisation. `cpu`: d_model 64, 1000 steps of batch 64 (about 10-20 s
# per run on one core); measured sweeps in README ("abstract-symbols studies"). `paper`: our
# reading of the paper's experiments (2-layer transformer of GPT-2 width, Adam, long training),
# for a GPU.
AUTHORS: dict[str, Any] = dict(norm="pre", attn_bias=False, ln_eps=1e-5,
                               ln_final_affine=False, init="torch_default")
"""The authors' structure and initialization (see the module docstring)."""
BERT_INIT: dict[str, Any] = dict(init="default")
"""Override for a reported arm: BERT's N(0, 0.02^2) weights and embeddings, zero biases."""
MODEL: dict[Scale, dict[str, Any]] = {
    "smoke": dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32, **AUTHORS),
    "cpu": dict(d_model=64, n_layers=2, n_heads=4, d_mlp=256, **AUTHORS),
    "paper": dict(d_model=768, n_layers=2, n_heads=12, d_mlp=3072, **AUTHORS),
}
TRAIN: dict[Scale, dict[str, Any]] = {
    "smoke": dict(steps=20, batch_size=16, eval_every=10, ckpt_every=20, n_test=64,
                  optim=dict(lr=1e-3, warmup_steps=5, weight_decay=0.0), threads=1),
    "cpu": dict(steps=1000, batch_size=64, eval_every=250, ckpt_every=1000, n_test=1000,
                optim=dict(lr=1e-3, warmup_steps=50, weight_decay=0.0), threads=1),
    "paper": dict(steps=20_000, batch_size=512, eval_every=1000, ckpt_every=5000, n_test=5000,
                  optim=dict(lr=1e-4, warmup_steps=500, weight_decay=0.0)),
}
SYMBOLS: dict[Scale, dict[str, int]] = {
    "smoke": dict(n_train_symbols=200, n_val_symbols=10, n_test_symbols=50),
    "cpu": dict(n_train_symbols=1000, n_val_symbols=100, n_test_symbols=200),
    "paper": dict(n_train_symbols=100_000, n_val_symbols=1000, n_test_symbols=1000),
}


def recipe(scale: Scale, **task: Any) -> dict[str, Any]:
    """A run of the given scale: the templates task (symbol alphabets of the scale; `task`
    overrides, e.g. preset="same_different") and the paper's model shape; no n_train (arms or
    sweeps set it)."""
    return merge(TRAIN[scale], {"task": {"name": "templates", **SYMBOLS[scale], **task},
                                "model": MODEL[scale]})


def n_train_sweep(ns: list[int]) -> list[dict[str, Any]]:
    return [{"n_train": n} for n in ns]


TEST_HEADING = "Test accuracy on unseen symbols (mean ± std over seeds)"


def samples_section(rep: Report, test: dict[str, dict[Any, list[float]]], before: str = "",
                    heading: str = TEST_HEADING) -> Report:
    """The same/different sweep over training samples: table and figure (chance 0.5)."""
    return rep.sweep(test, "n_train", heading, xlabel="training samples n",
                     title="same/different, unseen symbols", name="accuracy_vs_samples.png",
                     caption="Test accuracy on unseen symbols against training samples, log "
                     "scale (band: ±1 std over seeds)", chance=0.5, before=before)


def n_to_reach(by_n: dict[int, list[float]], target: float) -> float | None:
    """Smallest n at which the mean accuracy reaches `target`, interpolating linearly in
    log n between grid points; None if the grid never reaches it."""
    ns = sorted(by_n)
    acc = [float(np.mean(by_n[n])) for n in ns]
    if acc[0] >= target:
        return float(ns[0])
    for (n0, a0), (n1, a1) in zip(zip(ns, acc), zip(ns[1:], acc[1:])):
        if a0 < target <= a1:
            t = (target - a0) / (a1 - a0)
            return float(np.exp(np.log(n0) + t * (np.log(n1) - np.log(n0))))
    return None
