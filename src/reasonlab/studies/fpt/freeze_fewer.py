"""FPT: does training more of the backbone help? (Lu et al. 2021, slides: "Freezing fewer
parameters"; docs/papers.md §4).

The pretrained backbone (fpt.common) under FPT's policy and three that train more of it
(model/freeze.py): + feedforward (the MLP blocks), + attention (Q, K, V, O), + both (every
group: the pretrained transformer fine-tuned in full). The FPT runs are fpt-universal's.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt.common import (FPT, NO_GPT2, FPTStudy, accuracy_table, by_task,
                                          finals, fpt_arm, params_line, recipe, task_baselines,
                                          tasks)
from reasonlab.studies.fpt.freeze_ablation import TASKS
from reasonlab.studies.fpt.paper import FEWER_TABLE
from reasonlab.studies.fpt.verdicts import no_help_verdict
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, grid

FF, ATTN, BOTH = "+ feedforward", "+ attention", "+ both"
POLICIES = {FPT: "fpt", FF: "fpt_mlp", ATTN: "fpt_attention", BOTH: "full"}
SOURCE = "Lu et al. 2021, slides, Freezing fewer parameters"


@STUDIES.register("fpt-freeze-fewer")
class FptFreezeFewer(FPTStudy):
    title = "FPT: training more of the pretrained backbone"
    claims = (
        Claim("feedforward-no-harm", "Training the feedforward layers as well does not hurt",
              SOURCE, "+ Feedforward: ListOps 36.0%, MNIST 98.3% (FPT 38.4 / 98.0%)"),
        Claim("attention-no-help", "Training the attention as well does not help", SOURCE,
              "+ Attention: ListOps 36.8%, MNIST 89.0% (FPT 38.4 / 98.0%)"),
        Claim("both-no-help", "Training attention and feedforward together does not help",
              SOURCE, "+ Both: ListOps 35.8%, MNIST 93.1% (FPT 38.4 / 98.0%)"),
    )
    cpu_minutes = None  # not measured on a quiet machine (README)
    cpu_after = "fpt-universal"
    default_seeds = {"cpu": 3, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = {k: v for k, v in tasks(scale).items() if k in TASKS[scale]}
        arms = {a: fpt_arm(scale, p) for a, p in POLICIES.items()}
        return grid(recipe(scale), arms, sweep=points, seeds=seeds, sweep_factor="task")

    def analyse(self, results: Results, out: Path) -> Report:
        runs = by_task(results)
        values = finals(runs)
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        rep.add("Freezing fewer parameters", "Test accuracy at the end of training (%), mean "
                "over seeds; bit memory on MASKED bits. In brackets the slide's number (GPT-2; "
                "MNIST beside digits). Last rows: the baselines on the same data.\n\n"
                + accuracy_table(values, list(POLICIES), FEWER_TABLE, task_baselines(results)))
        rep.add("Parameters trained per policy", params_line(runs))
        rep.verdicts = [
            # "does not hurt": FPT is no better than FPT + feedforward
            no_help_verdict(self.claim("feedforward-no-harm"), values, FPT, FF, FPT),
            no_help_verdict(self.claim("attention-no-help"), values, ATTN, FPT, FPT),
            no_help_verdict(self.claim("both-no-help"), values, BOTH, FPT, FPT),
        ]
        return rep
