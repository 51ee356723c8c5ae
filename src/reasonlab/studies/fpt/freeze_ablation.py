"""FPT: which parameter groups must train? (Lu et al. 2021, slides: "Freezing more
parameters" and "Successive finetuning", each for the pretrained backbone (`fpt-freeze-ablation`)
and the frozen random one (`fpt-freeze-random`, the slides' tables of the same names ending
"- frozen random"); docs/papers.md §4).

Each offline backbone (fpt.backbones: SmolLM2 and MiniLM, factor `backbone`), pretrained or at
random init (factor `init`, one per study so that each fits the cpu budget), under the slides'
freeze policies (model/freeze.py): ONE group
trained beside the output layer per column -- output only, output + input, output + positions,
output + layernorm -- and the successive ones -- + layernorm, + input, + positions (= FPT). The
FPT policy's runs are fpt-universal's FPT and frozen random arms (same configs: trained once in
a shared runs folder).

One verdict per factor, each read from one-group arms and judged on both backbones: "layernorm
/ input / positions matter" is output + that group vs output only (a group that adds nothing
reads not reproduced), and "layernorm first" is the share of FPT's gain over output only that
output + layernorm already has. What "positions" and "layernorm" hold differs per backbone
(SmolLM2: a NEW zero table at the input and RMSNorm gains; MiniLM: its own pretrained position
table and LayerNorm with bias): fpt.backbones.backbone_line, printed over each table.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt.analysis import freeze_sections
from reasonlab.studies.fpt.backbones import resolve, results_note
from reasonlab.studies.fpt.common import recipe, tasks
from reasonlab.studies.fpt.freezing import (ALL, INITS, LAYOUTS, OUT, OUT_IN, OUT_LN, OUT_POS,
                                            POLICIES)
from reasonlab.studies.fpt.slides import SlideStudy, arm
from reasonlab.studies.fpt.verdicts import (FreezeRule, factor_verdict, freeze_verdicts,
                                            share_verdict)
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, grid
from reasonlab.studies.kit.claims import family_claims

TASKS: dict[Scale, tuple[str, ...]] = {
    "smoke": ("bit memory", "bit XOR"),
    "cpu": ("ListOps (fpt2021)", "digits"),
    "paper": ("bit memory", "bit XOR", "ListOps (fpt2021)", "MNIST"),
}
"""At cpu scale the slides' tasks that FPT learns with the recipe's dropout in a budget that
fits (common.tasks: bit XOR stays at chance for 3000 steps, bit memory needs 3000; digits
stands for MNIST)."""


@STUDIES.register("fpt-freeze-ablation")
class FptFreezeAblation(SlideStudy):
    title = "FPT: which parameter groups must train (one group, successive; pretrained)"
    claims = family_claims(__package__)["fpt-freeze-ablation"]
    # estimated: the measurement (1141 s on 2 quiet cores for the 68 runs of 72 that a 1-seed
    # fpt-universal had not trained) scaled to the 60 a 3-seed fpt-universal leaves (its FPT
    # arm is this study's FPT policy at every seed; fpt README, "Seeds and time")
    cpu_after = ("fpt-universal",)
    init = "pretrained"
    """The backbone's weights: a key of freezing.INITS."""
    rules: dict[str, tuple[FreezeRule, str]] = {
        "layernorm": (factor_verdict, OUT_LN), "input": (factor_verdict, OUT_IN),
        "positions": (factor_verdict, OUT_POS), "layernorm-first": (share_verdict, OUT_LN)}
    """Claim key -> (rule, arm): each factor from its one-group arm, "first" from the
    successive table's share."""

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = {k: v for k, v in tasks(scale).items() if k in TASKS[scale]}
        return [spec for name in self.backbones(scale) for spec in grid(
            recipe(scale),
            {a: arm(resolve(name), scale, INITS[self.init], p) for a, p in POLICIES.items()},
            sweep=points, seeds=seeds, factors={"backbone": name, "init": self.init},
            sweep_factor="task")]

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=results_note(results))
        per = freeze_sections(rep, results, {self.init: LAYOUTS[self.init]}, list(POLICIES),
                              out)
        rep.verdicts = freeze_verdicts(self.claim, per, {
            k: (rule, self.init, a) for k, (rule, a) in self.rules.items()}, OUT, ALL)
        return rep


@STUDIES.register("fpt-freeze-random")
class FptFreezeRandom(FptFreezeAblation):
    title = "FPT: which parameter groups must train (one group, successive; frozen random)"
    claims = family_claims(__package__)["fpt-freeze-random"]
    init = "frozen random"
    rules = {"random-layernorm": (factor_verdict, OUT_LN),
             "random-layernorm-first": (share_verdict, OUT_LN)}
