"""FPT: which parameter groups must train? (Lu et al. 2021, slides: "Freezing more
parameters" and "Successive finetuning", each for the pretrained and the frozen random
backbone; docs/papers.md §4).

Both backbones (fpt.common: pretrained SmolLM2, and the same architecture at random init) under
the slides' freeze policies (model/freeze.py), ONE group trained beside the output layer per
column -- output only, output + input, output + positions, output + layernorm -- and the
successive ones -- + layernorm, + input, + positions (= FPT). The FPT policy's runs are
fpt-universal's FPT and frozen random arms (same configs: trained once in a shared runs
folder).

One verdict per factor, each read from one-group arms: "layernorm / input / positions matter"
is output + that group vs output only (a group that adds nothing reads not reproduced), and
"layernorm first" is the share of FPT's gain over output only that output + layernorm already
has. SmolLM2's "positions" is a NEW zero-initialised table added at the input (its rotary
positions stay frozen), its "layernorm" RMSNorm gains: fpt.common.NO_GPT2.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt.analysis import plot_policies, slide_table
from reasonlab.studies.fpt.common import (NO_GPT2, FPTStudy, by_task, finals, fpt_arm, recipe,
                                          random_arm, task_baselines, tasks)
from reasonlab.studies.fpt.paper import (FREEZE_MORE, FREEZE_MORE_RANDOM, ONE_GROUP,
                                         SUCCESSIVE, SUCCESSIVE_RANDOM, SUCCESSIVE_TABLE)
from reasonlab.studies.fpt.verdicts import factor_verdict, share_verdict
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, grid

OUT, OUT_IN, OUT_POS, OUT_LN = ONE_GROUP
OUT_LN_IN, ALL = "output + layernorm + input", "FPT (all four)"
POLICIES = {OUT: "output_only", OUT_IN: "input_output", OUT_POS: "output_positions",
            OUT_LN: "output_norms", OUT_LN_IN: "input_output_norms", ALL: "fpt"}
"""Arm -> freeze preset (model/freeze.py)."""
ONE_GROUP_ARMS = dict(zip(ONE_GROUP, (OUT, OUT_IN, OUT_POS, OUT_LN), strict=True))
SUCCESSIVE_ARMS = dict(zip(SUCCESSIVE, (OUT, OUT_LN, OUT_LN_IN, ALL), strict=True))
"""The slides' column -> our arm, per table."""
INITS = ("pretrained", "frozen random")
"""The backbone's weights, a factor of every run (`init`)."""
TASKS: dict[Scale, tuple[str, ...]] = {
    "smoke": ("bit memory", "bit XOR"),
    "cpu": ("ListOps (fpt2021)", "digits"),
    "paper": ("bit memory", "bit XOR", "ListOps (fpt2021)", "digits", "Fashion-MNIST"),
}
"""At cpu scale the slides' tasks that FPT learns with the recipe's dropout in a budget that
fits (common.tasks: bit XOR stays at chance for 3000 steps, bit memory needs 3000; digits
stands for MNIST)."""
SLIDES = "Lu et al. 2021, slides"


def _claim(key: str, group: str, backbone: str) -> Claim:
    table = "Freezing more parameters" + (" - frozen random" if backbone != "pretrained"
                                          else "")
    return Claim(key, f"Training the {group} beside the output layer beats the output layer "
                 f"alone ({backbone} backbone)", f"{SLIDES}, {table} (output + {group} vs "
                 "output only)")


@STUDIES.register("fpt-freeze-ablation")
class FptFreezeAblation(FPTStudy):
    title = "FPT: which parameter groups must train (one group, successive; both backbones)"
    claims = (
        _claim("layernorm", "layernorm", "pretrained"),
        _claim("input", "input layer", "pretrained"),
        _claim("positions", "positions", "pretrained"),
        Claim("layernorm-first", "Layernorm alone recovers most of what layernorm, input and "
              "positions together add to the output layer (pretrained backbone)",
              f"{SLIDES}, Successive finetuning", "output only / + layernorm / + input / + "
              "positions: Bit XOR 56 / 98 / 98 / 100%, ListOps 15 / 36 / 36 / 38%, MNIST 23 / "
              "96 / 98 / 98%"),
        _claim("random-layernorm", "layernorm", "frozen random"),
        Claim("random-layernorm-first", "On a frozen random transformer layernorm alone "
              "recovers most of what the three groups add", f"{SLIDES}, Successive finetuning "
              "- frozen random", "Bit XOR 50 / 100 / 100 / 100%, ListOps 17 / 35 / 36 / 37%, "
              "MNIST 25 / 83 / 92 / 92%"),
    )
    cpu_minutes = None  # not measured on a quiet machine since the arms changed (README)
    cpu_after = "fpt-universal"
    default_seeds = {"cpu": 3, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = {k: v for k, v in tasks(scale).items() if k in TASKS[scale]}
        inits = {"pretrained": fpt_arm, "frozen random": random_arm}
        return [spec for b, arm in inits.items()
                for spec in grid(recipe(scale), {a: arm(scale, p) for a, p in POLICIES.items()},
                                 sweep=points, seeds=seeds, factors={"init": b},
                                 sweep_factor="task")]

    def analyse(self, results: Results, out: Path) -> Report:
        values = {b: finals(by_task(results.where(init=b))) for b in INITS}
        base = task_baselines(results.where(init="pretrained"))
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        note = ("Test accuracy at the end of training (%), mean over seeds; bit memory on MASKED "
                "bits. In brackets the slide's number (GPT-2; all bits on bit memory; MNIST "
                "beside digits). Last columns: the baselines on the same data.")
        for b, (more, succ) in zip(INITS, ((FREEZE_MORE, SUCCESSIVE_TABLE),
                                               (FREEZE_MORE_RANDOM, SUCCESSIVE_RANDOM)),
                                   strict=True):
            suffix = "" if b == "pretrained" else " - frozen random"
            rep.add(f"Freezing more parameters{suffix}", note + "\n\n" + slide_table(
                values[b], ONE_GROUP_ARMS, more, base))
            rep.add(f"Successive finetuning{suffix}", note + "\n\n" + slide_table(
                values[b], SUCCESSIVE_ARMS, succ, base))
        plot_policies(values, list(POLICIES), out / "policies.png")
        rep.figure("policies.png", "Final test accuracy per freeze policy, one line per task; "
                   "left: pretrained backbone, right: frozen random")
        pre, rnd = values["pretrained"], values["frozen random"]
        rep.verdicts = [
            factor_verdict(self.claim("layernorm"), pre, OUT_LN, OUT, ALL),
            factor_verdict(self.claim("input"), pre, OUT_IN, OUT, ALL),
            factor_verdict(self.claim("positions"), pre, OUT_POS, OUT, ALL),
            share_verdict(self.claim("layernorm-first"), pre, OUT_LN, OUT, ALL),
            factor_verdict(self.claim("random-layernorm"), rnd, OUT_LN, OUT, ALL),
            share_verdict(self.claim("random-layernorm-first"), rnd, OUT_LN, OUT, ALL),
        ]
        return rep
