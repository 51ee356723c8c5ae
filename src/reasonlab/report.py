"""Figures for study reports (PNG) and small statistics helpers shared by the studies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; no display on CI machines. The one place it is set: every
# module that draws imports pyplot after this module (the studies) or as `report.plt`.
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from cycler import cycler  # noqa: E402

# ----------------------------------------------------------------------------- figure style
# One style for every figure of the project (studies, sweeps, `reasonlab attention`), set here
# on import: rcParams are global, and every module that draws imports this one (the studies
# through studies/kit/reporting.py, sweeps and analysis/attention.py directly).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
             "#000000")
"""Okabe & Ito's colour-blind-safe palette (Color Universal Design, 2008): distinct under
protanopia, deuteranopia and tritanopia; lines past the 8th change dash instead."""
LINESTYLES = ("-", "--", ":", "-.")
plt.rcParams.update({
    "axes.prop_cycle": cycler(linestyle=LINESTYLES[:2]) * cycler(color=OKABE_ITO),
    "grid.alpha": 0.3,  # grids on line plots only (ax.grid()): none over a heatmap
    "axes.titlesize": 10, "axes.labelsize": 9,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 8, "legend.frameon": False,
    "image.cmap": "viridis",  # perceptually uniform and colour-blind safe, for heatmaps
    "savefig.dpi": 120, "savefig.bbox": "tight",  # tight: a legend outside the axes is kept
})


def legend_outside(ax: Any, **kw: Any) -> None:
    """The legend right of the axes, never over the data."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)


def save(fig: Any, path: Path) -> None:
    fig.savefig(path)
    plt.close(fig)


def seeds_text(n: int) -> str:
    """"1 seed", "3 seeds"."""
    return f"{n} seed" + ("" if n == 1 else "s")


def pm(values: Any, digits: int = 3) -> str:
    """Mean ± std over seeds; the mean alone for one seed (a std of one value is no spread)."""
    v = np.asarray(values, dtype=float).ravel()
    if len(v) < 2:
        return f"{v.mean():.{digits}f}"
    return f"{v.mean():.{digits}f} ± {v.std(ddof=1):.{digits}f}"



def mean_std(rows: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation over seeds of per-position values: rows [seeds, positions]."""
    a = np.asarray(rows, dtype=float)
    return a.mean(0), (a.std(0, ddof=1) if len(a) > 1 else np.zeros(a.shape[1]))


def plot_positions(arms: dict[str, list[list[float]]], path: Path, title: str,
                   trained: int | None = None) -> None:
    """Final accuracy per chain position for each arm: mean line, band = +-1 std over seeds."""
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for arm, rows in arms.items():
        m, s = mean_std(rows)
        x = np.arange(len(m))
        (line,) = ax.plot(x, m, marker="o", label=f"{arm} ({seeds_text(len(rows))})")
        if len(rows) > 1:  # a band of ±1 std over seeds; one seed has none
            ax.fill_between(x, m - s, m + s, alpha=0.2, color=line.get_color())
    if trained is not None:
        ax.axvspan(-0.5, trained - 0.5, color="grey", alpha=0.1, label="supervised positions")
    ax.set(xlabel="chain position #", ylabel="test accuracy", ylim=(0.4, 1.02), title=title)
    ax.set_xticks(range(len(m)))
    ax.grid()
    legend_outside(ax)
    save(fig, path)


def plot_curves(arms: dict[str, list[list[dict[str, Any]]]], path: Path, title: str) -> None:
    """Accuracy per chain position over training, one panel per arm, averaged over seeds; one
    colour per position (the palette, then dashes past 8), the legend right of the panels."""
    fig, axes = plt.subplots(1, len(arms), figsize=(4.2 * len(arms) + 1.2, 3.6), sharey=True,
                             squeeze=False)
    for ax, (arm, curves) in zip(axes[0], arms.items(), strict=True):
        steps = [m["step"] for m in curves[0]]
        acc = np.mean([[m["acc_by_depth"] for m in c] for c in curves], axis=0)  # [evals, P]
        for p in range(acc.shape[1]):
            ax.plot(steps, acc[:, p], label=f"#{p}", lw=1.4)
        ax.set(title=f"{arm} ({seeds_text(len(curves))})", xlabel="step", ylim=(0.4, 1.02))
        ax.grid()
    axes[0][0].set_ylabel("test accuracy")
    legend_outside(axes[0][-1], title="chain position", ncol=1 if acc.shape[1] <= 12 else 2)
    fig.suptitle(title)
    fig.tight_layout()
    save(fig, path)


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown (GFM) table. A "|" inside a cell (an arm named "lego | ALBERT") is escaped
    as "\\|", which GitHub and markdown-it render as the character, not a column break."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header)] + [line(r) for r in rows])


def fmt(m: float, s: float, n: int = 2) -> str:
    """Mean ± std over n seeds (the mean alone for one seed)."""
    return f"{m:.3f}" if n < 2 else f"{m:.3f} ± {s:.3f}"


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
    save(fig, path)


def plot_sweep(arms: dict[str, dict[int, list[float]]], path: Path, xlabel: str, title: str,
               chance: float | None = None, logx: bool = True) -> None:
    """Mean final accuracy against the swept quantity, one line per arm, band = ±1 std."""
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for arm, by_x in arms.items():
        xs = np.array(list(by_x))
        vals = [np.asarray(v) for v in by_x.values()]
        m = np.array([v.mean() for v in vals])
        s = np.array([v.std(ddof=1) if len(v) > 1 else 0.0 for v in vals])
        (line,) = ax.plot(xs, m, marker="o", label=f"{arm} ({seeds_text(len(vals[0]))})")
        if len(vals[0]) > 1:
            ax.fill_between(xs, m - s, m + s, alpha=0.2, color=line.get_color())
    if chance is not None:
        ax.axhline(chance, color="grey", ls="--", lw=1, label="chance")
    if logx:
        ax.set_xscale("log")
    ax.set(xlabel=xlabel, ylabel="test accuracy (unseen symbols)", ylim=(-0.02, 1.02),
           title=title)
    ax.grid()
    legend_outside(ax)
    save(fig, path)


def sweep_table(arms: dict[str, dict[int, list[float]]], xname: str) -> tuple[list[str],
                                                                               list[list[str]]]:
    """Header (xname, x values) and one row per arm: mean ± std over seeds at each x."""
    xs = sorted({x for by_x in arms.values() for x in by_x})
    rows = [[arm, *(fmt_seeds(by_x[x]) if x in by_x else "-" for x in xs)]
            for arm, by_x in arms.items()]
    return [xname, *(str(x) for x in xs)], rows


def fmt_seeds(v: list[float]) -> str:
    return pm(v)


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
        (line,) = ax.plot(x, a.mean(0), marker="o", label=f"{arm} ({seeds_text(len(ps))})")
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
    ax.grid()
    legend_outside(ax)
    save(fig, path)


def plot_matrices(mats: dict[str, np.ndarray], path: Path) -> None:
    """Matrices side by side, one panel each titled by its key, with a colour bar."""
    fig, axes = plt.subplots(1, len(mats), figsize=(3.2 * len(mats), 3.0))
    for ax, (title, m) in zip(axes, mats.items(), strict=True):
        im = ax.imshow(m, cmap="viridis")
        ax.set(title=title, xticks=[], yticks=[])
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    save(fig, path)


def plot_perplexity(ppl: dict[str, np.ndarray], steps: list[int], path: Path) -> None:
    """Validation perplexity against step, one line per arm (mean; band: min-max over seeds)."""
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for arm, p in ppl.items():
        (line,) = ax.plot(steps, p.mean(0), marker="o", label=f"{arm} ({seeds_text(len(p))})")
        if len(p) > 1:
            ax.fill_between(steps, p.min(0), p.max(0), alpha=0.2, color=line.get_color())
    ax.set(xlabel="step", ylabel="validation perplexity (per character)", yscale="log",
           title="character LM on held-out WordNet glosses")
    ax.grid()
    legend_outside(ax)
    save(fig, path)


def grouped_bars(ax: Any, values: dict[str, dict[str, float]]) -> None:
    """One group of bars per outer key (x axis), one bar per inner key (legend); a group may
    lack some inner keys (an arm run on some tasks only), whose bars are left out."""
    names = list(values)
    kinds = list(dict.fromkeys(kind for group in values.values() for kind in group))
    w = 0.8 / len(kinds)
    for k, kind in enumerate(kinds):
        ax.bar(np.arange(len(names)) + k * w, [values[n].get(kind, np.nan) for n in names], w,
               label=kind)
    ax.set_xticks(np.arange(len(names)) + 0.4 - w / 2, names, rotation=30, fontsize=8)
    legend_outside(ax)
