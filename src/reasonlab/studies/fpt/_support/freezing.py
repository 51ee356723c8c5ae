"""The freeze slides' arms and study (Lu et al. 2021, slides: "Freezing more parameters" and
"Successive finetuning", each for the pretrained (fpt-freeze-ablation) and the frozen random
backbone (fpt-freeze-random)): which parameter groups each arm trains beside the output layer,
how the slides' columns map onto our arms, and the study both run (`FreezeStudy`).

The one-group arms are named as the slides' columns; the successive table's columns are our
cumulative arms (+ layernorm = output + layernorm, ...; + positions = FPT, all four groups).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt._support.backbone import backbone_grid, results_note
from reasonlab.studies.fpt._support.slides import SlideStudy, arm
from reasonlab.studies.fpt.analysis import SlideLayout, freeze_sections
from reasonlab.studies.fpt.common import FREEZE_TASKS, recipe, some_tasks
from reasonlab.studies.fpt.paper import (FREEZE_MORE, FREEZE_MORE_RANDOM, ONE_GROUP,
                                         SUCCESSIVE, SUCCESSIVE_RANDOM, SUCCESSIVE_TABLE)
from reasonlab.studies.fpt.verdicts import FreezeRule, freeze_verdicts
from reasonlab.studies.kit.base import Report, Results, RunSpec, Scale

OUT, OUT_IN, OUT_POS, OUT_LN = ONE_GROUP
OUT_LN_IN, ALL = "output + layernorm + input", "FPT (all four)"
POLICIES = {OUT: "output_only", OUT_IN: "input_output", OUT_POS: "output_positions",
            OUT_LN: "output_norms", OUT_LN_IN: "input_output_norms", ALL: "fpt"}
"""Arm -> freeze preset (model/freeze.py)."""
ONE_GROUP_ARMS = dict(zip(ONE_GROUP, (OUT, OUT_IN, OUT_POS, OUT_LN), strict=True))
SUCCESSIVE_ARMS = dict(zip(SUCCESSIVE, (OUT, OUT_LN, OUT_LN_IN, ALL), strict=True))
"""The slides' column -> our arm, per table."""
WEIGHTS = {"pretrained": "pretrained", "frozen random": "random"}
"""The backbone's weights, a factor of every run (`init`, as the slides title the tables) ->
model/fpt.py Init."""
RANDOM_SUFFIX = " - frozen random"
"""The slides title each table of the frozen random backbone as the pretrained one's, so."""
LAYOUTS: dict[str, SlideLayout] = {
    "pretrained": {"Freezing more parameters": (ONE_GROUP_ARMS, FREEZE_MORE),
                   "Successive finetuning": (SUCCESSIVE_ARMS, SUCCESSIVE_TABLE)},
    "frozen random": {
        f"Freezing more parameters{RANDOM_SUFFIX}": (ONE_GROUP_ARMS, FREEZE_MORE_RANDOM),
        f"Successive finetuning{RANDOM_SUFFIX}": (SUCCESSIVE_ARMS, SUCCESSIVE_RANDOM)}}
"""Init label -> the slides the report prints for its runs, in the slides' layout."""


class FreezeStudy(SlideStudy):
    """Each backbone at one `init` (one study per init, so that each fits the cpu budget) under
    every freeze policy (POLICIES) on FREEZE_TASKS; one verdict per claim of `rules`, each
    judged on both backbones."""

    cpu_after = ("fpt-universal",)
    init = "pretrained"
    """The backbone's weights: a key of WEIGHTS."""
    rules: dict[str, tuple[FreezeRule, str]] = {}
    """Claim key -> (rule, arm): each factor from its one-group arm, "first" from the
    successive table's share."""

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return backbone_grid(recipe(scale), lambda b: {
            a: arm(b, scale, WEIGHTS[self.init], p) for a, p in POLICIES.items()},
            some_tasks(scale, FREEZE_TASKS), seeds, factors={"init": self.init},
            backbones=self.backbones(scale))

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=results_note(results))
        per = freeze_sections(rep, results, {self.init: LAYOUTS[self.init]}, list(POLICIES),
                              out)
        rep.verdicts = freeze_verdicts(self.claim, per, {
            k: (rule, self.init, a) for k, (rule, a) in self.rules.items()}, OUT, ALL)
        return rep
