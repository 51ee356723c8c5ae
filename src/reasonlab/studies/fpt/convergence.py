"""FPT converges faster than a frozen random transformer (Lu et al. 2021, "Training duration"
table; docs/papers.md §4).

The FPT and frozen random arms of fpt-universal (the same configs, so the same runs in a shared
runs folder: nothing new trains after it), read through their test curves: the step at which
each first reaches a fixed accuracy, TARGET of the way from chance to the better arm's final
accuracy, and the speedup = random's step / FPT's step (a run that never reaches it counts as
the run's length x 2, a lower bound on the speedup when it is the random one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.studies.kit.base import (STUDIES, Claim, Report, Results, RunSpec, Scale, Verdict,
                                        grid)
from reasonlab.studies.fpt.common import (CHANCE, NO_GPT2, FPTStudy, by_task, fpt_arm, metric,
                                          random_arm, recipe, tasks)
from reasonlab.studies.kit.verdicts import at_least, at_most, requires, threshold_verdict

FPT, RANDOM = "FPT", "Frozen random"
TARGET = 0.8
"""The fixed accuracy: chance + TARGET x (better arm's final - chance)."""
FASTER = 1.5
"""Reproduced when the geometric-mean speedup over the tasks is at least this; not reproduced
at <= 1 (random as fast or faster); inconclusive between."""
LEARNED = 0.1
"""A task counts only if the better arm ends at least this far above chance."""
PAPER_STEPS = {"bit memory": ("1e4", "4e4", "4x"), "bit XOR": ("5e2", "2e4", "40x"),
               "ListOps (fpt2021)": ("2e3", "6e3", "3x"), "digits": ("MNIST 5e3", "2e4", "4x")}
"""The paper's steps to convergence (FPT, random) and speedup."""


@STUDIES.register("fpt-convergence")
class FptConvergence(FPTStudy):
    title = "FPT: convergence, pretrained vs random frozen backbone"
    claims = (Claim("faster", "FPT converges faster than random initialisation",
                    "Lu et al. 2021, Training duration"),)
    cpu_minutes = 0.1  # measured: 5 s after fpt-universal (trains nothing new; README)
    cpu_after = "fpt-universal"
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        arms = {FPT: fpt_arm(scale), RANDOM: random_arm(scale, "fpt")}
        return grid(recipe(scale), arms, sweep=tasks(scale).values(), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        runs = by_task(results, results.scale)
        steps = {t: {a: [first_step(r["curve"], target(t, arms)) for r in rs]
                     for a, rs in arms.items()} for t, arms in runs.items()}
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        rows = []
        for t, s in steps.items():
            paper = PAPER_STEPS.get(t, ("-", "-", "-"))
            rows.append([t, f"{target(t, runs[t]):.3f}", _fmt(s[FPT]), _fmt(s[RANDOM]),
                         f"{speedup(s, _length(runs[t])):.1f}x", *paper])
        rep.table("Steps to the target accuracy", ["task", "target", "FPT", "frozen random",
                                                    "speedup", "paper FPT", "paper random",
                                                    "paper speedup"], rows,
                  before=f"Target: chance + {TARGET} x (better arm's final accuracy - chance); "
                  "bit memory on masked bits. 'never': not reached within the run.")
        plot_curves(runs, out / "convergence.png")
        rep.figure("convergence.png", "Test accuracy during training, FPT vs frozen random")
        rep.verdicts = [convergence_verdict(self.claim("faster"), steps, runs)]
        return rep


def target(task: str, arms: dict[str, list[dict[str, Any]]]) -> float:
    best = max(np.mean([metric(r["final"]) for r in rs]) for rs in arms.values())
    return CHANCE[task] + TARGET * (best - CHANCE[task])


def first_step(curve: list[dict[str, Any]], level: float) -> float:
    """The first evaluated step whose metric reaches `level` (inf: never)."""
    return next((float(p["step"]) for p in curve if metric(p) >= level), float("inf"))


def _length(arms: dict[str, list[dict[str, Any]]]) -> int:
    return int(next(iter(arms.values()))[0]["final"]["step"])


def speedup(steps: dict[str, list[float]], length: int) -> float:
    """Mean random steps / mean FPT steps; 'never' counts as 2 x the run's length."""
    def mean(xs: list[float]) -> float:
        return float(np.mean([x if np.isfinite(x) else 2 * length for x in xs]))
    return mean(steps[RANDOM]) / mean(steps[FPT])


def convergence_verdict(claim: Claim, steps: dict[str, dict[str, list[float]]],
                        runs: dict[str, dict[str, list[dict[str, Any]]]]) -> Verdict:
    counted = [t for t, arms in runs.items()
               if max(np.mean([metric(r["final"]) for r in rs]) for rs in arms.values())
               >= CHANCE[t] + LEARNED]
    ups = {t: speedup(steps[t], _length(runs[t])) for t in counted}
    geo = float(np.exp(np.mean(np.log(list(ups.values()))))) if ups else float("nan")
    ev = ("speedup (random steps / FPT steps to the target) per task: "
          + (", ".join(f"{t} {u:.2f}x" for t, u in ups.items()) or "none")
          + f"; geometric mean {geo:.2f}x (needs >= {FASTER}; <= 1 fails); left out (no arm "
          f"{LEARNED} above chance): " + (", ".join(t for t in runs if t not in counted)
                                          or "none"))
    return requires(threshold_verdict(claim, geo, ev, at_least(FASTER), at_most(1.0)),
                    bool(ups), "no task was learned by either arm")


def _fmt(xs: list[float]) -> str:
    return ", ".join("never" if not np.isfinite(x) else f"{x:.0f}" for x in xs)


def plot_curves(runs: dict[str, dict[str, list[dict[str, Any]]]], path: Path) -> None:
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

