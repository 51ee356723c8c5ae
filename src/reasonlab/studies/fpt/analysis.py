"""The FPT studies' figures and slide-layout tables from finished runs (Lu et al. 2021;
docs/papers.md §4)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.report import grouped_bars, table
from reasonlab.studies.fpt._support.backbone import backbone_line, slug
from reasonlab.studies.fpt._support.first_layer import plot_maps, run_masses
from reasonlab.studies.fpt._support.slides import baselines_text, title
from reasonlab.studies.fpt.common import (BASELINES, CHANCE, FPT, FULL, LSTM, RANDOM,
                                          RANDOM_LSTM, accuracy_table, by_backbone, by_task,
                                          choose_full, chosen_line, finals, metric, params_line,
                                          task_baselines)
from reasonlab.studies.fpt.paper import (ARCHITECTURE_TABLE, PERFORMANCE_TABLE, PRETRAINING_TABLE,
                                         FITTING_TABLE, SCALING_TABLE)
from reasonlab.studies.kit.base import Report, Results


def plot_accuracy(values: dict[str, dict[str, list[float]]], arms: list[str], path: Path,
                  backbone: str) -> None:
    """Bars: the verdict metric per task (x) and arm (bar), mean over seeds; chance ticked."""
    fig, ax = plt.subplots(figsize=(max(7.0, 1.8 * len(values)), 3.8))
    grouped_bars(ax, {t: {a: float(np.mean(v[a])) for a in arms if a in v}
                      for t, v in values.items()})
    for i, t in enumerate(values):
        ax.hlines(CHANCE[t], i - 0.05, i + 0.75, color="k", lw=1.5)
    ax.set(ylabel="final test accuracy", ylim=(0, 1.02),
           title=f"{' vs '.join(arms)} ({backbone} backbone)")
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
    for ax, (init, per_task) in zip(axes[0], values.items(), strict=True):
        for t, by_arm in per_task.items():
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


FREEZE_NOTE = ("Test accuracy at the end of training (%), mean over seeds; bit memory on MASKED "
               "bits. In brackets the slide's number (GPT-2; all bits on bit memory; MNIST "
               "beside digits). Last columns: the baselines on the same data.")

SlideLayout = dict[str, tuple[dict[str, str], dict[str, dict[str, str]]]]
"""A freeze slide per heading: (slide column -> our arm, the slide's numbers)."""


def freeze_sections(rep: Report, results: Results, layouts: dict[str, SlideLayout],
                    arms: list[str], out: Path) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Per backbone: each init's freeze slides (`layouts`: init label -> heading -> layout) as
    tables in the slides' layout, and one figure of every policy (`arms`) per init; returns
    backbone title -> init -> task -> arm -> the verdict metric per seed."""
    base = task_baselines(results)
    per = {}
    for name, runs in by_backbone(results).items():
        values = {i: finals(by_task(runs.where(init=i))) for i in layouts}
        per[title(name)] = values
        head = f"{backbone_line(name)}\n\n{FREEZE_NOTE}\n\n"
        for i, slides in layouts.items():
            for heading, (columns, paper) in slides.items():
                rep.add(f"{heading}: {title(name)}",
                        head + slide_table(values[i], columns, paper, base))
        plot_policies(values, arms, out / f"policies_{slug(name)}.png", title(name))
        rep.figure(f"policies_{slug(name)}.png", f"Final test accuracy per freeze policy, one "
                   f"line per task, {title(name)}; panels: {', '.join(layouts)} backbone")
    return per


UNIVERSAL_NOTE = (
    "Test accuracy at the end of training (%), mean over seeds; bit memory: MASKED query bits "
    "only (all bits in the last table). In brackets: the slide's number for that cell (GPT-2 "
    "backbone; MNIST where we have digits and Fashion-MNIST, whose files the paper used are "
    "not available offline; the slides' bit memory is on all bits). Last rows: the baselines "
    "on the same data.")

SlideRows = tuple[str, list[str], dict[str, dict[str, str]]]
"""One slide table: (its title, our arms as its rows, the slide's numbers)."""
UNIVERSAL_SLIDES: list[SlideRows] = [
    ("Performance on Multimodal Sequence Benchmarks", [FPT, FULL], PERFORMANCE_TABLE),
    ("Importance of language pre-training", [FPT, RANDOM], PRETRAINING_TABLE)]
"""fpt-universal's slides (the Performance slide's LSTM row is fpt-lstm's)."""
LSTM_SLIDES: list[SlideRows] = [
    ("Performance on Multimodal Sequence Benchmarks, LSTM row", [FPT, LSTM], PERFORMANCE_TABLE),
    ("Importance of architecture: random weights", [RANDOM, RANDOM_LSTM], ARCHITECTURE_TABLE)]
"""fpt-lstm's slides."""


def universal_sections(rep: Report, results: Results, out: Path, slides: list[SlideRows]
                       ) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Per backbone (the LSTMs, which have none, in each): the `slides` as tables, the Full
    arm's chosen learning rate where it ran, bit memory on all bits, the parameter counts and
    a bar figure; returns backbone title -> task -> arm -> the verdict metric per seed (Full:
    the chosen rate's)."""
    arms = list(dict.fromkeys(a for _, rows, _ in slides for a in rows))
    base = task_baselines(results)
    per = {}
    for name, runs_b in by_backbone(results).items():
        kept, chosen = choose_full(runs_b)
        runs = by_task(kept)
        values = finals(runs)
        head = f"{backbone_line(name)}\n\n{UNIVERSAL_NOTE}\n\n"
        for heading, rows, paper in slides:
            rep.add(f"{heading}: {title(name)}", head
                    + accuracy_table(values, rows, paper, base)
                    + (f"\n\n{chosen_line(chosen, runs_b)}" if FULL in rows else ""))
        if "bit memory" in runs:
            all_bits = {"bit memory (all bits)": {a: [r["final"]["acc"] for r in rs]
                                                  for a, rs in runs["bit memory"].items()}}
            rep.add(f"Bit memory on all bits (%): {title(name)}", "Copying the visible "
                    "query bits and guessing the rest scores 75% here.\n\n"
                    + accuracy_table(all_bits, arms))
        rep.add(f"Parameters: {title(name)}", params_line(runs))
        plot_accuracy(values, arms, out / f"accuracy_{slug(name)}.png", title(name))
        rep.figure(f"accuracy_{slug(name)}.png", f"Final test accuracy per task and model, "
                   f"{title(name)} backbone (bit memory: masked bits); black ticks: chance")
        per[title(name)] = values
    return per


# -- first-layer attention ----------------------------------------------------------------------
ATTENTION_HEADER = ["backbone", "task", "seed", "trained", "before training", "uniform",
                    "accuracy"]


Masses = tuple[list[float], list[float], float, list[float]]
"""(mass after training per seed, before training per seed, uniform attention's, accuracy per
seed): what attention_verdict reads."""


def attention_sections(rep: Report, results: Results, n: int, out: Path
                       ) -> dict[str, dict[str, Masses]]:
    """Each run's first-layer mass on the needed keys (after, before training, uniform) in one
    table, one row per seed, and seed 0's trained map of one test input in one figure; returns
    backbone title -> task -> Masses, what the verdicts read."""
    rows, maps, per = [], {}, {}
    for b, runs in by_backbone(results).items():
        per[title(b)] = {}
        for t, rs in runs.by("task").items():
            after, before, accs, flat = [], [], [], 0.0
            for spec, result in rs:
                (a, i, flat), trained = run_masses(spec, result, n)
                acc = metric(result["final"])
                rows.append([title(b), t, str(spec.seed), f"{a:.3f}", f"{i:.3f}", f"{flat:.3f}",
                             f"{acc:.3f}"])
                after.append(a)
                before.append(i)
                accs.append(acc)
                if (title(b), t) not in maps:
                    maps[title(b), t] = trained[0]
            # uniform attention's mass depends on the test inputs (drawn with seed 0) and the
            # mask alone: the same for every seed
            per[title(b)][t] = (after, before, flat, accs)
    rep.table("First-layer attention on the needed keys (mean over heads and test inputs)",
              ATTENTION_HEADER, rows, before=f"{n} test inputs; accuracy: bit memory on masked "
              "bits.", after=baselines_text(results))
    plot_maps(maps, out / "first_layer.png")
    rep.figure("first_layer.png", "First-layer attention, mean over heads, of one test input "
               "after training (row = query, column = key), as the slides' figures")
    return per


# -- over- and underfitting -------------------------------------------------------------------
def train_test_accuracy(runs: Results) -> dict[str, tuple[list[float], list[float]]]:
    """arm -> (train accuracy per seed, test accuracy per seed) at the end of training."""
    return {a: ([float(r["final"]["train_acc"]) for r in rs],
                [float(r["final"]["acc"]) for r in rs])
            for a, rs in runs.arms().items()}


FITTING_HEADER = ["model", "# layers", "test accuracy", "train accuracy"]


def fitting_sections(rep: Report, results: Results
                     ) -> dict[str, tuple[str, dict[str, tuple[list[float], list[float]]]]]:
    """Per backbone the Full arm's chosen learning rate, then one table of every arm's test and
    train accuracy (means over seeds) with the baselines, and the slide's; returns backbone
    title -> (its task, arm -> (train per seed, test per seed)), the Full arm at its chosen
    rate."""
    rows, per = [], {}
    for b, all_runs in by_backbone(results).items():
        runs, chosen = choose_full(all_runs)
        rep.add(f"Full arm's learning rate: {title(b)}", chosen_line(chosen, all_runs))
        acc = train_test_accuracy(runs)
        layers = str(runs.first.config.model.n_layers)
        rows += [[f"{a} ({title(b)})", layers, f"{100 * np.mean(te):.1f}",
                  f"{100 * np.mean(tr):.1f}"] for a, (tr, te) in acc.items()]
        per[title(b)] = (runs.first.factors["task"], acc)
    base = task_baselines(results)[results.first.factors["task"]]
    rows += [[f"*{k}*", "-", f"{100 * v:.1f}", "-"] for k, v in base.items()]
    rep.table("Test and train accuracy (%), ours", FITTING_HEADER, rows,
              before="Mean over seeds; train accuracy on the first n_test training examples.")
    rep.table("Test and train accuracy (%), the slide (CIFAR-10 LRA)", FITTING_HEADER,
              FITTING_TABLE)
    return per


# -- scaling with size -------------------------------------------------------------------------
def accuracy_by_size(runs: Results, arms: Sequence[str]) -> dict[str, dict[int, list[float]]]:
    """arm -> backbone depth (the `layers` factor) -> final test accuracy per seed."""
    by_layers = {k: rs.arms() for k, rs in runs.by("layers").items()}
    return {a: {k: [float(r["final"]["acc"]) for r in by_arm[a]]
                for k, by_arm in by_layers.items()} for a in arms}


def scaling_sections(rep: Report, results: Results, fpt: str, random: str
                     ) -> dict[str, tuple[str, dict[str, dict[int, list[float]]]]]:
    """Accuracy by depth per backbone beside the slide's (CIFAR-10) by size, with the FPT arm's
    parameter counts; returns backbone title -> (its task, arm -> depth -> accuracy per
    seed)."""
    rows, per = [], {}
    for b, runs in by_backbone(results).items():
        acc = accuracy_by_size(runs, (fpt, random))
        for k, rs in runs.by("layers").items():
            f = rs.arms()[fpt][0]["final"]
            rows.append([title(rs.first.factors.get("size", b)), str(k),
                         f"{f['params_total']:,}", f"{f['params_trained']:,}",
                         f"{100 * np.mean(acc[fpt][k]):.1f}",
                         f"{100 * np.mean(acc[random][k]):.1f}"])
        per[title(b)] = (runs.first.factors["task"], acc)
    header = ["backbone", "# layers", "total params", "trained params", fpt, random]
    rep.table(f"Accuracy by size (%), ours ({results.first.factors['task']})", header, rows,
              before="Test accuracy at the end of training, mean over seeds; parameters "
              "of the FPT arm.", after=baselines_text(results))
    rep.table("Accuracy by size (%), the slide (CIFAR-10)", ["model size", *header[1:]],
              SCALING_TABLE)
    return per


# -- convergence -----------------------------------------------------------------------------
def steps_rows(steps: dict[str, dict[str, list[float]]], levels: dict[str, float],
               speedups: dict[str, float | None], paper: dict[str, tuple[str, str, str]],
               base: dict[str, dict[str, float]]) -> list[list[str]]:
    """Per task: the level, FPT's and random's steps to it per seed ('never'), the speedup
    (none unless every run reached the level), the slides' three, the baselines."""
    def fmt(xs: list[float]) -> str:
        return ", ".join(f"{x:.0f}" if math.isfinite(x) else "never" for x in xs)

    return [[t, f"{levels[t]:.3f}", fmt(s[FPT]), fmt(s[RANDOM]),
             "-" if speedups[t] is None else f"{speedups[t]:.1f}x",
             *paper.get(t, ("-", "-", "-")),
             *(f"{base[t][b]:.3f}" if t in base else "-" for b in BASELINES)]
            for t, s in steps.items()]


STEPS_HEADER = ["task", "level", "FPT steps", "Random steps", "speedup",
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
