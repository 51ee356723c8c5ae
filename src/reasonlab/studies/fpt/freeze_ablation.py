"""FPT: which parameters must train? (Lu et al. 2021, "Freezing more parameters", "Successive
finetuning" and "Freezing fewer parameters" tables; docs/papers.md §4).

The pretrained SmolLM2 backbone (fpt.common) under seven freeze policies (model/freeze.py):
output only, + input, + positions, + norms (= FPT), FPT + attention, FPT + mlp, full. The FPT
policy's runs are fpt-universal's FPT arm (same configs: trained once in a shared runs folder).

Claims: "LayerNorm, input and position parameters matter most" -- training them (FPT)
recovers most of what training everything gains over training the read-out alone; "training
the attention as well does not help" -- FPT + attention is no better than FPT.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt.analysis import plot_policies
from reasonlab.studies.fpt.common import (ABLATION_TASKS, NO_GPT2, POLICIES, FPTStudy,
                                          accuracy_table, by_task, finals, fpt_arm, params_line,
                                          recipe, task_baselines, tasks)
from reasonlab.studies.fpt.paper import FREEZE_TABLE
from reasonlab.studies.fpt.verdicts import ablation_verdicts
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, grid


@STUDIES.register("fpt-freeze-ablation")
class FptFreezeAblation(FPTStudy):
    title = "FPT: which parameter groups must train"
    claims = (
        Claim("norms-input-positions", "LayerNorm, input and position parameters matter most",
              "Lu et al. 2021, Freezing more parameters / Successive finetuning"),
        Claim("attention-no-help", "Training the attention as well does not help",
              "Lu et al. 2021, Freezing fewer parameters",
              "+ Attention: ListOps 36.8% vs FPT 38.4%, MNIST 89.0% vs 98.0%"),
    )
    cpu_minutes = 3.3  # measured: 200 s after fpt-universal, machine otherwise idle (README)
    cpu_after = "fpt-universal"
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = {k: v for k, v in tasks(scale).items() if k in ABLATION_TASKS[scale]}
        arms = {arm: fpt_arm(scale, preset) for arm, preset in POLICIES.items()}
        return grid(recipe(scale), arms, sweep=points, seeds=seeds, sweep_factor="task")

    def analyse(self, results: Results, out: Path) -> Report:
        runs = by_task(results)
        values = finals(runs)
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        rep.add("Accuracy per policy (%)", "Mean over seeds; bit memory on MASKED bits. In "
                "brackets the paper's number (GPT-2; MNIST for our digits).\n\n"
                + accuracy_table(values, list(POLICIES), FREEZE_TABLE, task_baselines(results)))
        rep.add("Parameters trained per policy", params_line(runs))
        plot_policies(values, out / "policies.png")
        rep.figure("policies.png", "Final test accuracy per freeze policy, one line per task")
        rep.verdicts = ablation_verdicts(self.claim, values)
        return rep
