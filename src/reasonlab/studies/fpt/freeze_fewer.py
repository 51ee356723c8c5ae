"""FPT: does training more of the backbone help? (Lu et al. 2021, slides: "Freezing fewer
parameters"; docs/papers.md §4).

Each offline pretrained backbone (_support/backbone.py: SmolLM2 and MiniLM) under FPT's policy and
three that train more of it (model/freeze.py): + feedforward (the MLP blocks), + attention
(Q, K, V, O), + both (every group: the pretrained transformer fine-tuned in full). The FPT runs
are fpt-universal's.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt._support.backbone import backbone_grid, backbone_line, results_note
from reasonlab.studies.fpt._support.slide_verdicts import both_backbones
from reasonlab.studies.fpt._support.slides import SlideStudy, arm, title
from reasonlab.studies.fpt.common import (FPT, FREEZE_TASKS, accuracy_table, by_backbone, by_task,
                                          finals, params_line, recipe, some_tasks,
                                          task_baselines)
from reasonlab.studies.fpt.paper import FEWER_TABLE
from reasonlab.studies.fpt.verdicts import no_help_verdict
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Verdict
from reasonlab.studies.kit.claims import family_claims

FF, ATTN, BOTH = "+ feedforward", "+ attention", "+ both"
POLICIES = {FPT: "fpt", FF: "fpt_mlp", ATTN: "fpt_attention", BOTH: "full"}


@STUDIES.register("fpt-freeze-fewer")
class FptFreezeFewer(SlideStudy):
    title = "FPT: training more of the pretrained backbone"
    claims = family_claims(__package__)["fpt-freeze-fewer"]
    # estimated: the measurement (910 s for the 44 runs a 1-seed fpt-universal had not
    # trained) scaled to the 36 a 3-seed fpt-universal leaves (fpt README, "Seeds and time")
    cpu_after = ("fpt-universal",)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return backbone_grid(recipe(scale), lambda b: {
            a: arm(b, scale, "pretrained", p) for a, p in POLICIES.items()},
            some_tasks(scale, FREEZE_TASKS), seeds, backbones=self.backbones(scale))

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=results_note(results))
        base = task_baselines(results)
        for name, runs_b in by_backbone(results).items():
            runs = by_task(runs_b)
            values = finals(runs)
            rep.add(f"Freezing fewer parameters: {title(name)}", f"{backbone_line(name)}\n\n"
                    "Test accuracy at the end of training (%), mean over seeds; bit memory on "
                    "MASKED bits. In brackets the slide's number (GPT-2; MNIST beside digits). "
                    "Last rows: the baselines on the same data.\n\n"
                    + accuracy_table(values, list(POLICIES), FEWER_TABLE, base))
            rep.add(f"Parameters trained per policy: {title(name)}", params_line(runs))
        rep.verdicts = self.judge_runs(results)
        return rep

    def judge_runs(self, results: Results) -> list[Verdict]:
        # backbone title -> task -> policy -> the metric per seed (what the tables print)
        per = {title(b): finals(by_task(runs)) for b, runs in by_backbone(results).items()}
        # "does not hurt": FPT is no better than FPT + feedforward
        rules = {"feedforward-no-harm": (FPT, FF), "attention-no-help": (ATTN, FPT),
                 "both-no-help": (BOTH, FPT)}
        return [both_backbones(self.claim(k), {
            b: no_help_verdict(self.claim(k), v, more, less, FPT) for b, v in per.items()})
            for k, (more, less) in rules.items()]
