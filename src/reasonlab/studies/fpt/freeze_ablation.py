"""FPT: which parameter groups must train? (Lu et al. 2021, slides: "Freezing more
parameters" and "Successive finetuning", each for the pretrained and the frozen random
backbone; docs/papers.md §4).

Each offline backbone (fpt.backbones: SmolLM2 and MiniLM, factor `backbone`), pretrained and at
random init (factor `init`), under the slides' freeze policies (model/freeze.py): ONE group
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

from reasonlab.model.fpt import FPT_BACKBONES
from reasonlab.studies.fpt.analysis import freeze_sections
from reasonlab.studies.fpt.backbones import BACKBONES, NO_GPT2
from reasonlab.studies.fpt.common import recipe, tasks
from reasonlab.studies.fpt.freezing import (ALL, INITS, LAYOUTS, OUT, OUT_IN, OUT_LN, OUT_POS,
                                            POLICIES)
from reasonlab.studies.fpt.slides import SlideStudy, arm
from reasonlab.studies.fpt.verdicts import factor_verdict, freeze_verdicts, share_verdict
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, grid
from reasonlab.studies.kit.claims import family_claims

TASKS: dict[Scale, tuple[str, ...]] = {
    "smoke": ("bit memory", "bit XOR"),
    "cpu": ("ListOps (fpt2021)", "digits"),
    "paper": ("bit memory", "bit XOR", "ListOps (fpt2021)", "digits", "Fashion-MNIST"),
}
"""At cpu scale the slides' tasks that FPT learns with the recipe's dropout in a budget that
fits (common.tasks: bit XOR stays at chance for 3000 steps, bit memory needs 3000; digits
stands for MNIST)."""


@STUDIES.register("fpt-freeze-ablation")
class FptFreezeAblation(SlideStudy):
    title = "FPT: which parameter groups must train (one group, successive; both inits)"
    claims = family_claims(__package__)["fpt-freeze-ablation"]
    # measured: 2142 s for the 136 runs fpt-universal had not trained, 2 quiet cores (README);
    # over the 30 minutes budgeted
    cpu_minutes = 35.7
    cpu_after = "fpt-universal"
    default_seeds = {"cpu": 3, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = {k: v for k, v in tasks(scale).items() if k in TASKS[scale]}
        return [spec for name in BACKBONES for label, init in INITS.items()
                for spec in grid(recipe(scale), {
                    a: arm(FPT_BACKBONES[name], scale, init, p) for a, p in POLICIES.items()},
                    sweep=points, seeds=seeds, factors={"backbone": name, "init": label},
                    sweep_factor="task")]

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        per = freeze_sections(rep, results, LAYOUTS, list(POLICIES), out)
        # each factor from its one-group arm, "first" from the successive table's share
        rep.verdicts = freeze_verdicts(self.claim, per, {
            "layernorm": (factor_verdict, "pretrained", OUT_LN),
            "input": (factor_verdict, "pretrained", OUT_IN),
            "positions": (factor_verdict, "pretrained", OUT_POS),
            "layernorm-first": (share_verdict, "pretrained", OUT_LN),
            "random-layernorm": (factor_verdict, "frozen random", OUT_LN),
            "random-layernorm-first": (share_verdict, "frozen random", OUT_LN)}, OUT, ALL)
        return rep
