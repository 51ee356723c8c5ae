"""The FPT studies' figures and tables from finished runs (Lu et al. 2021; docs/papers.md §4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.report import grouped_bars
from reasonlab.studies.fpt.common import CHANCE, FPT, POLICIES, RANDOM, metric
from reasonlab.studies.fpt.paper import STEPS_TABLE
from reasonlab.studies.fpt.verdicts import TARGET, run_length, speedup, target


def plot_accuracy(values: dict[str, dict[str, list[float]]], arms: list[str], path: Path
                  ) -> None:
    """Bars: the verdict metric per task (x) and arm (bar), mean over seeds; chance ticked."""
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 * len(values)), 3.8))
    grouped_bars(ax, {t: {a: float(np.mean(v[a])) for a in arms if a in v}
                      for t, v in values.items()})
    for i, t in enumerate(values):
        ax.hlines(CHANCE[t], i - 0.05, i + 0.75, color="k", lw=1.5)
    ax.set(ylabel="final test accuracy", ylim=(0, 1.02),
           title="FPT vs fully trained vs frozen random vs LSTM (SmolLM2 backbone)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_policies(values: dict[str, dict[str, list[float]]], path: Path) -> None:
    """One line per task: the final accuracy under each freeze policy, in POLICIES order."""
    fig, ax = plt.subplots(figsize=(7.5, 4))
    x = np.arange(len(POLICIES))
    for t, arms in values.items():
        ax.plot(x, [np.mean(arms.get(a, [np.nan])) for a in POLICIES], marker="o", label=t)
    ax.set_xticks(x, list(POLICIES), rotation=20, ha="right")
    ax.set(ylabel="final test accuracy", ylim=(0, 1.02), title="Freeze policies (SmolLM2)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def steps_rows(steps: dict[str, dict[str, list[float]]],
               runs: dict[str, dict[str, list[dict[str, Any]]]]) -> list[list[str]]:
    """Per task: target, FPT's and random's steps to it, the speedup, the paper's three."""
    def fmt(xs: list[float]) -> str:
        return ", ".join("never" if not np.isfinite(x) else f"{x:.0f}" for x in xs)

    return [[t, f"{target(t, runs[t]):.3f}", fmt(s[FPT]), fmt(s[RANDOM]),
             f"{speedup(s, run_length(runs[t])):.1f}x", *STEPS_TABLE.get(t, ("-", "-", "-"))]
            for t, s in steps.items()]


STEPS_HEADER = ["task", "target", "FPT", "frozen random", "speedup", "paper FPT",
                "paper random", "paper speedup"]
STEPS_NOTE = (f"Target: chance + {TARGET} x (better arm's final accuracy - chance); bit memory "
              "on masked bits. 'never': not reached within the run.")


def plot_curves(runs: dict[str, dict[str, list[dict[str, Any]]]], path: Path) -> None:
    """Test accuracy during training per task, FPT against frozen random; target dashed."""
    n = len(runs)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n, 3), squeeze=False)
    for ax, (t, arms) in zip(axes[0], runs.items(), strict=True):
        for a, rs in arms.items():
            for i, r in enumerate(rs):
                ax.plot([p["step"] for p in r["curve"]], [metric(p) for p in r["curve"]],
                        color="C0" if a == FPT else "C3", alpha=0.8,
                        label=a if i == 0 else None)
        ax.axhline(target(t, arms), color="grey", ls="--", lw=0.8)
        ax.set(title=t, xlabel="step", ylim=(0, 1.02))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test accuracy")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
