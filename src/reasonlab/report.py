"""Figures for study reports (PNG) and small statistics helpers shared by the studies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on CI machines
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def mean_std(rows: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation over seeds of per-position values: rows [seeds, positions]."""
    a = np.asarray(rows, dtype=float)
    return a.mean(0), (a.std(0, ddof=1) if len(a) > 1 else np.zeros(a.shape[1]))


def final_by_depth(results: list[dict[str, Any]]) -> list[list[float]]:
    return [r["final"]["acc_by_depth"] for r in results]


def plot_positions(arms: dict[str, list[list[float]]], path: Path, title: str,
                   trained: int | None = None) -> None:
    """Final accuracy per chain position for each arm: mean line, band = +-1 std over seeds."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for arm, rows in arms.items():
        m, s = mean_std(rows)
        x = np.arange(len(m))
        ax.plot(x, m, marker="o", label=f"{arm} (n={len(rows)})")
        ax.fill_between(x, m - s, m + s, alpha=0.2)
    if trained is not None:
        ax.axvspan(-0.5, trained - 0.5, color="grey", alpha=0.1, label="supervised")
    ax.set(xlabel="chain position #", ylabel="test accuracy", ylim=(0.4, 1.02), title=title)
    ax.set_xticks(range(len(m)))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_curves(arms: dict[str, list[list[dict[str, Any]]]], path: Path, title: str) -> None:
    """Accuracy per chain position over training, one panel per arm, averaged over seeds."""
    fig, axes = plt.subplots(1, len(arms), figsize=(5 * len(arms), 3.6), sharey=True,
                             squeeze=False)
    for ax, (arm, curves) in zip(axes[0], arms.items(), strict=True):
        steps = [m["step"] for m in curves[0]]
        acc = np.mean([[m["acc_by_depth"] for m in c] for c in curves], axis=0)  # [evals, P]
        cmap = plt.get_cmap("viridis")
        for p in range(acc.shape[1]):
            ax.plot(steps, acc[:, p], color=cmap(p / max(1, acc.shape[1] - 1)), label=f"#{p}")
        ax.set(title=arm, xlabel="step", ylim=(0.4, 1.02))
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("test accuracy")
    axes[0][-1].legend(fontsize=7, ncol=2, loc="lower right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def fmt(m: float, s: float) -> str:
    return f"{m:.3f} ± {s:.3f}"


def plot_heatmap(values: np.ndarray, path: Path, title: str, xlabels: list[str],
                 ylabels: list[str], xlabel: str, ylabel: str, vmin: float = 0.0,
                 vmax: float = 1.0, cmap: str = "viridis",
                 annot: list[list[str]] | None = None) -> None:
    """A [rows, cols] grid of values in [vmin, vmax], one cell per (y, x), annotated."""
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(xlabels), 1.0 + 0.7 * len(ylabels)))
    im = ax.imshow(values, vmin=vmin, vmax=vmax, cmap=cmap, origin="lower", aspect="auto")
    ax.set_xticks(range(len(xlabels)), xlabels)
    ax.set_yticks(range(len(ylabels)), ylabels)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            text = annot[i][j] if annot is not None else f"{values[i, j]:.2f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="w"
                    if values[i, j] < vmin + 0.5 * (vmax - vmin) else "k")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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


def fmt_sweep(by_x: dict[Any, list[float]], x: str = "n") -> str:
    """"n=1000: 0.500 ± 0.010, n=10000: ..." (mean ± std over seeds at each swept value)."""
    return ", ".join(f"{x}={k}: {fmt_seeds(v)}" for k, v in by_x.items())


def plot_first_pass(passes: dict[str, list[list[float]]], steps: int, path: Path,
                    threshold: float = 0.9, log: bool = False) -> None:
    """First step at which each chain position reaches `threshold`, one line per arm (mean
    over seeds, dots: seeds; 'never' drawn at the top of the axis); `log`: a log step axis
    (plateaus that lengthen geometrically read as a straight line)."""
    never = steps * 1.1
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for arm, ps in passes.items():
        a = np.asarray(ps, dtype=float)
        a[~np.isfinite(a)] = never
        x = np.arange(a.shape[1])
        (line,) = ax.plot(x, a.mean(0), marker="o", label=f"{arm} (n={len(ps)})")
        for row in a:  # each seed, in its mode's colour
            ax.scatter(x, row, s=10, alpha=0.5, color=line.get_color())
    ax.axhline(never, color="grey", ls="--", lw=0.8)
    ax.text(0, never, " never", va="bottom", fontsize=8, color="grey")
    ax.set(xlabel="chain position #", ylabel=f"first step with accuracy >= {threshold}",
           ylim=(0, never * 1.08), title="When each chain position is learned")
    if log:
        low = min([x for ps in passes.values() for p in ps for x in p if x < never] or [1])
        ax.set(yscale="log", ylim=(max(low, 1) / 1.5, never * 1.3))
    ax.set_xticks(range(a.shape[1]))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_matrices(mats: dict[str, np.ndarray], path: Path) -> None:
    """Matrices side by side, one panel each titled by its key, with a colour bar."""
    fig, axes = plt.subplots(1, len(mats), figsize=(3.2 * len(mats), 3.0))
    for ax, (title, m) in zip(axes, mats.items(), strict=True):
        im = ax.imshow(m, cmap="viridis")
        ax.set(title=title, xticks=[], yticks=[])
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_perplexity(ppl: dict[str, np.ndarray], steps: list[int], path: Path) -> None:
    """Validation perplexity against step, one line per arm (mean; band: min-max over seeds)."""
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for arm, p in ppl.items():
        ax.plot(steps, p.mean(0), marker="o", label=f"{arm} (seeds={len(p)})")
        ax.fill_between(steps, p.min(0), p.max(0), alpha=0.2)
    ax.set(xlabel="step", ylabel="validation perplexity (per character)", yscale="log",
           title="character LM on held-out WordNet glosses")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def grouped_bars(ax: Any, values: dict[str, dict[str, float]]) -> None:
    """One group of bars per outer key (x axis), one bar per inner key (legend)."""
    names = list(values)
    kinds = list(next(iter(values.values())))
    w = 0.8 / len(kinds)
    for k, kind in enumerate(kinds):
        ax.bar(np.arange(len(names)) + k * w, [values[n][kind] for n in names], w, label=kind)
    ax.set_xticks(np.arange(len(names)) + 0.4 - w / 2, names, rotation=30, fontsize=8)
    ax.legend(fontsize=8)
