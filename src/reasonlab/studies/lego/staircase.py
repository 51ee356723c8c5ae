"""LEGO's root clause and the learning staircase (Zhang et al. 2022, §2; our finding).

The paper fixes the root point ("a_0 = 1 (we fix r = 1)", §2 Task 1), so the label of #0 is a
function of one token (its clause's op) and #k of k + 1 ops, each a one-hop step from #(k-1):
a staircase a gradient learner can climb position by position. The authors' code gives the
root as `a = val v` (identity op, random point): one token again. Drawing both the root's op
and its point (`task.root = "random"`, this project's generator before RESULTS_VERSION 3) makes
every label a parity of >= 2 tokens, none of which alone correlates with it -- the setting in
which gradient descent sits on long plateaus (Abbe et al. 2021, 2023; Barak et al. 2022).

Same recipe (`lego-extrapolation`'s BERT-like arm), 3 seeds per mode; the `fixed` arm IS
lego-extrapolation's BERT arm (same config, same run), so after that study only the `given`
and `random` runs train. Verdict from the step at which each chain position first passes
PASS on the test set. At `long` scale (3 seeds) the study also measures the levers that might
shorten the plateaus past #1 (lego.common.LEVERS, arms on the fixed root): the report's lever
table and its split of each position's accuracy by the ops along the chain, which tells a
shortcut from a lookup (README, "Past the second step").
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid, merge
from reasonlab.studies.lego.analysis import (accuracy_report, first_pass_section, lever_section,
                                             one_hop_section, op_split_section)
from reasonlab.studies.lego.common import LEVERS, PASS, SEEDS, WITH_LONG, recipe
from reasonlab.studies.lego.verdicts import first_pass_steps, staircase_verdict

FIXED = "fixed (paper)"
MODES = {FIXED: "fixed", "given (authors' code)": "given",
         "random (both drawn)": "random"}


@STUDIES.register("lego-staircase")
class LegoStaircase(Study):
    title = "LEGO: a one-token root makes a staircase, a random root a plateau"
    # cores (2572 s wall on a machine loaded ~9; 601 s wall at 2 seeds with older code)
    scales = WITH_LONG
    cpu_after = ("lego-extrapolation",)
    default_seeds = {**SEEDS, "paper": 3}  # lego-extrapolation's: its BERT runs are `fixed`

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        arms = {arm: {"task": {"root": root}} for arm, root in MODES.items()}
        if scale == "long":  # the levers, on the paper's fixed root (lego.common.LEVERS)
            arms |= {lever: merge(arms[FIXED], o) for lever, o in LEVERS.items()}
        return grid(recipe(scale), arms, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        n_train = results.first.config.task.n_train_vars  # type: ignore[attr-defined]
        passes = {a: [first_pass_steps(c) for c in cs] for a, cs in results.curves().items()}
        steps = results.first.config.steps
        rep, _ = accuracy_report(self.title, results, out, n_train)
        first_pass_section(rep, passes, PASS, f"First step at which a position reaches {PASS}",
                           steps, log=True)
        one_hop_section(rep, results)
        op_split_section(rep, results)
        lever_section(rep, results, [FIXED, *LEVERS], PASS)
        modes = {a: p for a, p in passes.items() if a in MODES}  # the levers are no root mode
        rep.verdicts = [staircase_verdict(self.claim("staircase"), modes, steps)]
        return rep


