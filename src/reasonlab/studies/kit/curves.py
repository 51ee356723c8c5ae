"""Validation-loss curves of several arms, read at the same optimiser step and at the same
training FLOPs: an arm that is cheaper per step (LEGO §5's Hardcode and Hybrid) may be ahead
per step and behind per FLOP, so a claim about learning speed reads both. Unit-tested on
hand-made curves (tests/unit/studies/lego/test_section5_verdicts.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reasonlab.report import legend_outside, plt, save

Curve = list[tuple[float, float]]
"""(step, validation loss) per evaluation."""


def early_step(curve: Curve, steps: int, fraction: float) -> float:
    """The first evaluation step at or after `fraction` x steps."""
    return next(s for s, _ in curve if s >= fraction * steps)


def loss_at(curve: Curve, x: float, scale: float = 1.0) -> float:
    """Loss at abscissa x of the curve whose points are (step x scale, loss), linearly
    interpolated; NaN outside the evaluated range."""
    xs = np.array([s for s, _ in curve]) * scale
    if not xs[0] <= x <= xs[-1]:
        return float("nan")
    return float(np.interp(x, xs, [v for _, v in curve]))


def paired_losses(curves: dict[str, list[Curve]], fps: dict[str, float], a: str, b: str,
                  step: float | None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Validation loss of arms a and b per seed (fps: training FLOPs per step of each arm), in
    two views: at the same optimiser step (`step`; None = the last), and at the same training
    FLOPs -- early on, the FLOPs the costlier arm spends by `step`; at the end, the smaller of
    the two arms' totals (the largest budget both reached)."""
    last = curves[a][0][-1][0]
    budget = last * min(fps[a], fps[b]) if step is None else step * max(fps[a], fps[b])
    step = last if step is None else step
    return {f"at step {step:.0f}": (np.array([loss_at(c, step) for c in curves[a]]),
                                    np.array([loss_at(c, step) for c in curves[b]])),
            f"at {budget:.3g} FLOPs": (np.array([loss_at(c, budget, fps[a]) for c in curves[a]]),
                                       np.array([loss_at(c, budget, fps[b]) for c in curves[b]]))}


def plot_loss_curves(curves: dict[str, list[Curve]], fps: dict[str, float], path: Path,
                     title: str, ylabel: str = "validation loss (nats)") -> None:
    """Mean over seeds (thick) and each seed (thin) of every arm, against optimiser steps
    (left) and training FLOPs (right)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for arm, cs in curves.items():
        for k, (ax, scale) in enumerate(zip(axes, (1.0, fps[arm]))):
            steps = np.array([s for s, _ in cs[0]])
            mean = np.mean([[v for _, v in c] for c in cs], axis=0)
            (line,) = ax.plot(steps * scale, mean, label=f"{arm} (seeds={len(cs)})" if k == 0
                              else None, lw=2)
            for c in cs:
                ax.plot(steps * scale, [v for _, v in c], color=line.get_color(), lw=0.7,
                        alpha=0.4)
    axes[0].set(xlabel="optimiser step", ylabel=ylabel)
    axes[1].set(xlabel="training FLOPs")
    for ax in axes:
        ax.grid()
    legend_outside(axes[1])
    fig.suptitle(title)
    save(fig, path)
