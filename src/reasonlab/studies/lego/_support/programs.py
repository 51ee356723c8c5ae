"""Program execution for LEGO's earlier version (abstract; docs/papers.md §1.1): the recipe per
scale, the two arms at equal parameter count, the verdict rule and the figures of
`lego-conv-qkv-programs`. The program task is tasks/programs.py; `conv_qkv` is
model/conv_attention.py.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.studies.kit.base import Claim, Scale, Verdict
from reasonlab.studies.kit.verdicts import gain_verdict, requires

SOFTMAX, CONV = "softmax (params matched)", "conv_qkv"
KERNEL = 3
EDGE = 0.02
"""'An edge': the gain in final test accuracy must reach this, the lower bound of its interval
over seeds clear 0 (kit gain_verdict)."""
ABOVE_MAJORITY = 0.05
"""The comparison tests something only when some arm beats the majority class by this."""

RECIPES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(task=dict(name="programs", n_vars=2, max_length=2, max_nesting=1, seq_len=48),
                  model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32, norm_position="pre"),
                  optim=dict(lr=3e-3, warmup_steps=2), n_train=256, n_test=64,
                  batch_size=16, steps=12, eval_every=6, ckpt_every=6, threads=1),
    # cpu: sized for 2 arms x 2 seeds on 2 cores in 15 minutes (3 seeds: about 4.3): 2
    # variables, up to 4 assignments, nesting up to 1, loops of at most 3 (programs of ~35
    # tokens; the 1% above 64 redrawn).
    "cpu": dict(task=dict(name="programs", n_vars=2, max_length=4, max_nesting=1, seq_len=64),
                model=dict(d_model=64, n_layers=3, n_heads=4, d_mlp=256, norm_position="pre"),
                optim=dict(lr=1e-3, warmup_steps=50, weight_decay=0.01),
                n_train=44_800, n_test=2_000, batch_size=64, steps=700, eval_every=70,
                ckpt_every=140, threads=1),
    # A GPU-sized version (our choice: the paper gives none): 3 variables, up to 8 statements,
    # nesting 3.
    "paper": dict(task=dict(name="programs", n_vars=3, max_length=8, max_nesting=3,
                            seq_len=200),
                  model=dict(d_model=256, n_layers=6, n_heads=8, d_mlp=1024, norm_position="pre"),
                  optim=dict(lr=5e-4, warmup_steps=1_000, weight_decay=0.01),
                  n_train=1_000_000, n_test=10_000, batch_size=256, steps=50_000,
                  eval_every=1_000, ckpt_every=5_000),
}


def matched_d_mlp(d_model: int, d_mlp: int, kernel: int) -> int:
    """The softmax arm's feed-forward width: conv_qkv adds 3 d_model (kernel + 1) parameters
    per layer (three depthwise convolutions and their biases); a unit of d_mlp adds
    2 d_model + 1 (a row of W_in with its bias, a column of W_out)."""
    return d_mlp + round(3 * d_model * (kernel + 1) / (2 * d_model + 1))


def arms(scale: Scale) -> dict[str, dict[str, Any]]:
    m = RECIPES[scale]["model"]
    return {SOFTMAX: {"model": {"d_mlp": matched_d_mlp(m["d_model"], m["d_mlp"], KERNEL)}},
            CONV: {"model": {"attention": {"name": "conv_qkv", "kernel": KERNEL}}}}


def by_value(results: list[dict[str, Any]], key: str) -> dict[int, list[float]]:
    """value of `key` (length, nesting) -> final accuracy per seed, values that occur."""
    rows = [r["final"][f"acc_by_{key}"] for r in results]
    return {v: [row[v] for row in rows] for v in range(len(rows[0]))
            if not any(math.isnan(row[v]) for row in rows)}


def edge_verdict(claim: Claim, finals: dict[str, list[float]], majority: float) -> Verdict:
    """Convolutional Q/K/V maps give an edge (LEGO, earlier version, abstract): the final test
    accuracy of conv_qkv minus softmax over seeds, kit gain_verdict with min_gain EDGE (the
    lower bound above 0 and the gain >= EDGE). Precondition: some arm's mean beats the majority
    class by ABOVE_MAJORITY (else nothing was learned to compare: inconclusive)."""
    v = gain_verdict(claim, np.asarray(finals[CONV]), np.asarray(finals[SOFTMAX]),
                     (CONV, SOFTMAX), "final test accuracy", min_gain=EDGE)
    best = max(np.mean(f) for f in finals.values())
    return requires(v, best >= majority + ABOVE_MAJORITY,
                    f"no arm beats the majority class ({majority:.3f}) by {ABOVE_MAJORITY}")


def plot_by_program(by: dict[str, list[dict[str, Any]]], majority: float, path: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, key in zip(axes, ("length", "nesting")):
        for arm, rs in by.items():
            vals = by_value(rs, key)
            xs = list(vals)
            ax.plot(xs, [np.mean(vals[x]) for x in xs], marker="o",
                    label=f"{arm} (seeds={len(rs)})")
        ax.axhline(majority, color="grey", ls="--", lw=1, label="majority class")
        ax.set(xlabel=f"program {key}", xticks=xs)
        ax.grid(alpha=0.3)
    axes[0].set(ylabel="final test accuracy", ylim=(-0.02, 1.02))
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
