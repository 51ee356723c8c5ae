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
from reasonlab.studies.fpt.analysis import plot_policies, slide_table
from reasonlab.studies.fpt.backbones import BACKBONES, NO_GPT2, backbone_line
from reasonlab.studies.fpt.common import by_task, finals, recipe, task_baselines, tasks
from reasonlab.studies.fpt.paper import (FREEZE_MORE, FREEZE_MORE_RANDOM, ONE_GROUP,
                                         SUCCESSIVE, SUCCESSIVE_RANDOM, SUCCESSIVE_TABLE)
from reasonlab.studies.fpt.slide_verdicts import both_backbones
from reasonlab.studies.fpt.slides import SlideStudy, arm, title
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
INITS = {"pretrained": "pretrained", "frozen random": "random"}
"""The backbone's weights, a factor of every run (`init`) -> model/fpt.py Init."""
TASKS: dict[Scale, tuple[str, ...]] = {
    "smoke": ("bit memory", "bit XOR"),
    "cpu": ("ListOps (fpt2021)", "digits"),
    "paper": ("bit memory", "bit XOR", "ListOps (fpt2021)", "digits", "Fashion-MNIST"),
}
"""At cpu scale the slides' tasks that FPT learns with the recipe's dropout in a budget that
fits (common.tasks: bit XOR stays at chance for 3000 steps, bit memory needs 3000; digits
stands for MNIST)."""
SLIDES = "Lu et al. 2021, slides"


def _claim(key: str, group: str, init: str) -> Claim:
    table = "Freezing more parameters" + (" - frozen random" if init != "pretrained" else "")
    return Claim(key, f"Training the {group} beside the output layer beats the output layer "
                 f"alone ({init} backbone)", f"{SLIDES}, {table} (output + {group} vs "
                 "output only)")


@STUDIES.register("fpt-freeze-ablation")
class FptFreezeAblation(SlideStudy):
    title = "FPT: which parameter groups must train (one group, successive; both inits)"
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
    cpu_minutes = None  # not measured at today's budgets (README)
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
        base = task_baselines(results)
        note = ("Test accuracy at the end of training (%), mean over seeds; bit memory on MASKED "
                "bits. In brackets the slide's number (GPT-2; all bits on bit memory; MNIST "
                "beside digits). Last columns: the baselines on the same data.")
        tables = ((FREEZE_MORE, SUCCESSIVE_TABLE), (FREEZE_MORE_RANDOM, SUCCESSIVE_RANDOM))
        per: dict[str, dict[str, dict]] = {}
        for name, runs_b in results.by("backbone").items():
            values = {i: finals(by_task(runs_b.where(init=i))) for i in INITS}
            per[title(name)] = values
            head = f"{backbone_line(name)}\n\n{note}\n\n"
            for i, (more, succ) in zip(INITS, tables, strict=True):
                suffix = "" if i == "pretrained" else " - frozen random"
                rep.add(f"Freezing more parameters{suffix}: {title(name)}", head + slide_table(
                    values[i], ONE_GROUP_ARMS, more, base))
                rep.add(f"Successive finetuning{suffix}: {title(name)}", head + slide_table(
                    values[i], SUCCESSIVE_ARMS, succ, base))
            plot_policies(values, list(POLICIES), out / f"policies_{name}.png", title(name))
            rep.figure(f"policies_{name}.png", f"Final test accuracy per freeze policy, one "
                       f"line per task, {title(name)}; left: pretrained, right: frozen random")
        rules = {"layernorm": (factor_verdict, "pretrained", OUT_LN),
                 "input": (factor_verdict, "pretrained", OUT_IN),
                 "positions": (factor_verdict, "pretrained", OUT_POS),
                 "layernorm-first": (share_verdict, "pretrained", OUT_LN),
                 "random-layernorm": (factor_verdict, "frozen random", OUT_LN),
                 "random-layernorm-first": (share_verdict, "frozen random", OUT_LN)}
        rep.verdicts = [both_backbones(self.claim(k), {
            b: rule(self.claim(k), v[init], group, OUT, ALL) for b, v in per.items()})
            for k, (rule, init, group) in rules.items()]
        return rep
