"""LEGO's root clause and the learning staircase (Zhang et al. 2022, §2; our finding).

The paper fixes the root point ("a_0 = 1 (we fix r = 1)", §2 Task 1), so the label of #0 is a
function of one token (its clause's op) and #k of k + 1 ops, each a one-hop step from #(k-1):
a staircase a gradient learner can climb position by position. The authors' code gives the
root as `a = val v` (identity op, random point): one token again. Drawing both the root's op
and its point (`task.root = "random"`, this project's generator before RESULTS_VERSION 3) makes
every label a parity of >= 2 tokens, none of which alone correlates with it -- the setting in
which gradient descent sits on long plateaus (Abbe et al. 2021, 2023; Barak et al. 2022).

Same recipe (`lego-extrapolation`'s BERT-like arm), 2 seeds per mode; the `fixed` arm IS
lego-extrapolation's BERT arm (same config, same run), so after that study only the `given`
and `random` runs train. Verdict from the step at which each chain position first passes
PASS on the test set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from reasonlab.report import table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.studies.lego_common import (PASS, accuracy_report, by_arm, first_pass_steps,
                                           one_hop_agreement, recipe, spec)
from reasonlab.studies.lego_extrapolation import lego_task

MODES = {"fixed (paper)": "fixed", "given (authors' code)": "given",
         "random (both drawn)": "random"}
SLOWER = 2.0
"""The random root 'stays on the plateau far longer': its first position passes PASS at least
this many times later than under the one-token roots (or never within the run)."""


@STUDIES.register("lego-staircase")
class LegoStaircase(Study):
    name = "lego-staircase"
    title = "LEGO: a one-token root makes a staircase, a random root a plateau"
    claims = (Claim("staircase", "With a one-token root (the paper's task) the chain is learned "
                    "position by position; with a random root (every label a parity of >= 2 "
                    "tokens) training stays on the plateau far longer",
                    "Zhang et al. 2022 §2 (root fixed); our finding"),)
    cpu_minutes = 10  # measured: 601 s after lego-extrapolation (4 new runs; README)
    cpu_after = "lego-extrapolation"
    default_seeds = {"smoke": 1, "cpu": 2, "paper": 2}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = recipe(scale)
        return [spec(arm, seed, base, {**lego_task(), "root": root})
                for arm, root in MODES.items() for seed in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        arms = by_arm(results)
        n_train = results[0][0].config.task.n_train_vars  # type: ignore[attr-defined]
        rep, _ = accuracy_report(self.title, arms, out, n_train)
        passes = {a: [first_pass_steps(r["curve"]) for r in rs] for a, rs in arms.items()}
        steps = results[0][0].config.steps
        plot_first_pass(passes, steps, out / "first_pass.png")
        rep.figures.insert(0, ("first_pass.png", f"Step at which each chain position first "
                               f"reaches {PASS} test accuracy (top row: never)"))
        rows = [[f"{a} seed {i}"] + [_step(x) for x in p]
                for a, ps in passes.items() for i, p in enumerate(ps)]
        n = len(rows[0]) - 1
        rep.sections.insert(0, f"## First step at which a position reaches {PASS}\n\n"
                            + table(["run"] + [f"#{k}" for k in range(n)], rows))
        agree = [[f"{a} seed {sp.seed}"]
                 + [f"{x:.2f}" for x in one_hop_agreement(Path(r["dir"]))]
                 for a in arms for sp, r in results if sp.arm == a]
        rep.sections.insert(1, "## Agreement with the one-hop rule\n\nFraction of 500 fresh "
                            "test sentences on which the model's answer equals value(#k) = "
                            "g_k . value(#0), its own op applied to the root's value, skipping "
                            "the ops in between (right on #0 and #1 only). 1.00 everywhere: the "
                            "model computes that shortcut, no variable lookup.\n\n"
                            + table(["run"] + [f"#{k}" for k in range(n)], agree))
        rep.verdicts = [staircase_verdict(self.claims[0], passes, steps)]
        return rep


def _step(x: float) -> str:
    return "never" if x == float("inf") else f"{x:.0f}"


def staircase_verdict(claim: Claim, passes: dict[str, list[list[float]]], steps: int
                      ) -> Verdict:
    """Reproduced when, in every seed of the one-token modes, #0 and #1 pass PASS in chain
    order (a staircase), and every random-root seed passes its first position at least SLOWER
    times later than the slowest one-token seed (or never). Not reproduced when a random-root
    seed passes some position no later than a one-token seed passes #0; else inconclusive."""
    one_token = {a: p for a, p in passes.items() if not a.startswith("random")}
    random = next(p for a, p in passes.items() if a.startswith("random"))
    stairs = all(p[0] < float("inf") and p[0] <= p[1] < float("inf")
                 for ps in one_token.values() for p in ps)
    slowest = max(p[0] for ps in one_token.values() for p in ps)
    fastest = min(p[0] for ps in one_token.values() for p in ps)
    random_first = [min(p) for p in random]
    ev = ("first step to " + f"{PASS} on #0 / #1 per seed: " + "; ".join(
        f"{a} " + ", ".join(f"{_step(p[0])} / {_step(p[1])}" for p in ps)
        for a, ps in one_token.items()) + "; random root, first position of any kind: "
        + ", ".join(_step(x) for x in random_first) + f" (of {steps} steps; needs >= "
        f"{SLOWER}x the slowest one-token #0, {_step(slowest)})")
    if stairs and all(x >= SLOWER * slowest for x in random_first):
        status = "reproduced"
    elif any(x <= fastest for x in random_first):
        status = "not reproduced"
    else:
        status = "inconclusive"
    return Verdict(claim, status, ev)  # type: ignore[arg-type]


def plot_first_pass(passes: dict[str, list[list[float]]], steps: int, path: Path) -> None:
    """First-pass step per chain position, one line per mode (mean over seeds; 'never' drawn
    at the top of the axis)."""
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
    ax.set(xlabel="chain position #", ylabel=f"first step with accuracy >= {PASS}",
           ylim=(0, never * 1.08), title="When each chain position is learned")
    ax.set_xticks(range(a.shape[1]))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
