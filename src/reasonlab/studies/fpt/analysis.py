"""The FPT studies' figures and slide-layout tables from finished runs (Lu et al. 2021;
docs/papers.md §4)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.report import grouped_bars, table
from reasonlab.studies.fpt.common import BASELINES, CHANCE, FPT, RANDOM, metric


def plot_accuracy(values: dict[str, dict[str, list[float]]], arms: list[str], path: Path,
                  backbone: str) -> None:
    """Bars: the verdict metric per task (x) and arm (bar), mean over seeds; chance ticked."""
    fig, ax = plt.subplots(figsize=(max(7.0, 1.8 * len(values)), 3.8))
    grouped_bars(ax, {t: {a: float(np.mean(v[a])) for a in arms if a in v}
                      for t, v in values.items()})
    for i, t in enumerate(values):
        ax.hlines(CHANCE[t], i - 0.05, i + 0.75, color="k", lw=1.5)
    ax.set(ylabel="final test accuracy", ylim=(0, 1.02),
           title=f"FPT vs fully trained vs frozen random vs LSTM ({backbone} backbone)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_policies(values: dict[str, dict[str, dict[str, list[float]]]], arms: list[str],
                  path: Path, backbone: str) -> None:
    """One panel per init (pretrained, frozen random), one line per task: the final accuracy
    under each policy."""
    fig, axes = plt.subplots(1, len(values), figsize=(6.5 * len(values), 4.2), squeeze=False,
                             sharey=True)
    x = np.arange(len(arms))
    for ax, (init, by_task) in zip(axes[0], values.items(), strict=True):
        for t, by_arm in by_task.items():
            ax.plot(x, [np.mean(by_arm.get(a, [np.nan])) for a in arms], marker="o", label=t)
        ax.set_xticks(x, arms, rotation=25, ha="right", fontsize=8)
        ax.set(ylim=(0, 1.02), title=f"{backbone}, {init}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("final test accuracy")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def slide_table(values: dict[str, dict[str, list[float]]], columns: dict[str, str],
                paper: dict[str, dict[str, str]], base: dict[str, dict[str, float]]) -> str:
    """Markdown in a freeze slide's layout: one row per task, one column per slide column
    (`columns`: slide column -> our arm), "ours (slide's)" in %, mean over seeds; then one
    column per baseline."""
    rows = []
    for t, arms in values.items():
        cells = []
        for col, arm in columns.items():
            v = arms.get(arm)
            ours = f"{100 * np.mean(v):.1f}" if v else "-"
            ref = paper.get(t, {}).get(col)
            cells.append(f"{ours} ({ref})" if ref else ours)
        rows.append([t, *cells, *(f"{100 * base[t][b]:.1f}" if t in base else "-"
                                  for b in BASELINES)])
    return table(["task", *columns, *(f"*{b}*" for b in BASELINES)], rows)


# -- convergence -----------------------------------------------------------------------------
def steps_rows(steps: dict[str, dict[str, list[float]]], levels: dict[str, float],
               speedups: dict[str, float | None], paper: dict[str, tuple[str, str, str]],
               base: dict[str, dict[str, float]]) -> list[list[str]]:
    """Per task: the level, FPT's and random's steps to it per seed ('never'), the speedup
    (none without a reaching run in each arm), the slides' three, the baselines."""
    def fmt(xs: list[float]) -> str:
        return ", ".join(f"{x:.0f}" if math.isfinite(x) else "never" for x in xs)

    return [[t, f"{levels[t]:.3f}", fmt(s[FPT]), fmt(s[RANDOM]),
             "-" if speedups[t] is None else f"{speedups[t]:.1f}x",
             *paper.get(t, ("-", "-", "-")),
             *(f"{base[t][b]:.3f}" if t in base else "-" for b in BASELINES)]
            for t, s in steps.items()]


STEPS_HEADER = ["task", "level", "FPT steps", "frozen random steps", "speedup",
                "slides FPT", "slides Random", "slides speedup", *(f"*{b}*" for b in BASELINES)]


def plot_curves(runs: dict[str, dict[str, list[dict[str, Any]]]], levels: dict[str, float],
                path: Path) -> None:
    """Test accuracy during training per task, FPT against frozen random; the level dashed."""
    n = len(runs)
    fig, axes = plt.subplots(1, n, figsize=(3.4 * n, 3.2), squeeze=False)
    for ax, (t, arms) in zip(axes[0], runs.items(), strict=True):
        for a, rs in arms.items():
            for i, r in enumerate(rs):
                ax.plot([p["step"] for p in r["curve"]], [metric(p) for p in r["curve"]],
                        color="C0" if a == FPT else "C3", alpha=0.8,
                        label=a if i == 0 else None)
        ax.axhline(levels[t], color="grey", ls="--", lw=0.8, label="level")
        ax.set(title=t, xlabel="step", ylim=(0, 1.02))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test accuracy")
    axes[0][0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
