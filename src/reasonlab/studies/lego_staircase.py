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

import numpy as np

from reasonlab.report import plot_first_pass
from reasonlab.studies.base import (STUDIES, Claim, Report, Results, RunSpec, Scale, Study,
                                    Verdict, grid)
from reasonlab.studies.lego_common import (PASS, accuracy_report, first_pass_steps,
                                           one_hop_section, recipe)

MODES = {"fixed (paper)": "fixed", "given (authors' code)": "given",
         "random (both drawn)": "random"}
SLOWER = 2.0
"""The random root 'stays on the plateau far longer': its first position passes PASS at least
this many times later than under the one-token roots (or never within the run)."""


@STUDIES.register("lego-staircase")
class LegoStaircase(Study):
    title = "LEGO: a one-token root makes a staircase, a random root a plateau"
    claims = (Claim("staircase", "With a one-token root (the paper's task) the chain is learned "
                    "position by position; with a random root (every label a parity of >= 2 "
                    "tokens) training stays on the plateau far longer",
                    "Zhang et al. 2022 §2 (root fixed); our finding"),)
    cpu_minutes = 10  # measured: 601 s after lego-extrapolation (4 new runs; README)
    cpu_after = "lego-extrapolation"
    default_seeds = {"cpu": 2, "paper": 2}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(recipe(scale), {arm: {"task": {"root": root}} for arm, root in MODES.items()},
                    seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        n_train = results.first.config.task.n_train_vars  # type: ignore[attr-defined]
        passes = {a: [first_pass_steps(c) for c in cs] for a, cs in results.curves().items()}
        steps = results.first.config.steps
        plot_first_pass(passes, steps, out / "first_pass.png", PASS)
        rep, _ = accuracy_report(self.title, results, out, n_train)
        rep.figures.insert(0, ("first_pass.png", f"Step at which each chain position first "
                               f"reaches {PASS} test accuracy (top row: never)"))
        rows = [[f"{a} seed {i}"] + [_step(x) for x in p]
                for a, ps in passes.items() for i, p in enumerate(ps)]
        rep.table(f"First step at which a position reaches {PASS}",
                  ["run"] + [f"#{k}" for k in range(len(rows[0]) - 1)], rows)
        one_hop_section(rep, results)
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
