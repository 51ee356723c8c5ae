"""Shared pieces of the abstract-symbols studies (Boix-Adsera et al., ICLR 2024; docs/papers.md §2 Abstract symbols).

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

from pathlib import Path
from collections.abc import Callable
from typing import Any

import numpy as np

from reasonlab.report import plt
from reasonlab.studies.base import RunSpec, Scale
from reasonlab.train.config import TrainConfig

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


def config(scale: Scale, task: dict[str, Any], n_train: int, seed: int,
           model: dict[str, Any] | None = None, **train: Any) -> TrainConfig:
    """A run of the given scale: templates task + the paper's model shape + overrides."""
    return TrainConfig.build({
        **TRAIN[scale], **train, "seed": seed, "n_train": n_train,
        "task": {"name": "templates", **SYMBOLS[scale], **task},
        "model": {**MODEL[scale], **(model or {})}})


def by_n_train(spec: RunSpec) -> int:
    return spec.config.n_train


def final(results: list[tuple[RunSpec, dict[str, Any]]], arm: str,
          x: Callable[[RunSpec], int] = by_n_train, key: str = "acc") -> dict[int, list[float]]:
    """x -> final metric per seed for one arm (x: the swept quantity, n_train by default)."""
    out: dict[int, list[float]] = {}
    for spec, r in results:
        if spec.arm == arm:
            out.setdefault(x(spec), []).append(float(r["final"][key]))
    return dict(sorted(out.items()))


def plot_sweep(arms: dict[str, dict[int, list[float]]], path: Path, xlabel: str, title: str,
               chance: float | None = None, logx: bool = True) -> None:
    """Mean final accuracy against the swept quantity, one line per arm, band = ±1 std."""
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for arm, by_x in arms.items():
        xs = np.array(list(by_x))
        vals = [np.asarray(v) for v in by_x.values()]
        m = np.array([v.mean() for v in vals])
        s = np.array([v.std(ddof=1) if len(v) > 1 else 0.0 for v in vals])
        ax.plot(xs, m, marker="o", label=f"{arm} (seeds={len(vals[0])})")
        ax.fill_between(xs, m - s, m + s, alpha=0.2)
    if chance is not None:
        ax.axhline(chance, color="grey", ls="--", lw=1, label="chance")
    if logx:
        ax.set_xscale("log")
    ax.set(xlabel=xlabel, ylabel="test accuracy (unseen symbols)", ylim=(-0.02, 1.02),
           title=title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def sweep_table(arms: dict[str, dict[int, list[float]]], xname: str) -> tuple[list[str],
                                                                               list[list[str]]]:
    """Header (xname, x values) and one row per arm: mean ± std over seeds at each x."""
    xs = sorted({x for by_x in arms.values() for x in by_x})
    rows = [[arm, *(fmt_seeds(by_x[x]) if x in by_x else "-" for x in xs)]
            for arm, by_x in arms.items()]
    return [xname, *(str(x) for x in xs)], rows


def fmt_seeds(v: list[float]) -> str:
    return f"{np.mean(v):.3f} ± {np.std(v, ddof=1) if len(v) > 1 else 0.0:.3f}"


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
