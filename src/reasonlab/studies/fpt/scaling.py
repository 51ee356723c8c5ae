"""FPT: do larger backbones transfer better? (Lu et al. 2021, slides "Scaling with size",
CIFAR-10: GPT-2 Small / Medium / Large, 12 / 24 / 36 layers, FPT 68.2 / 69.8 / 72.1%, Random
61.7 / 64.0 / 65.7%.)

Paper scale: the slide's experiment, GPT-2 small, medium and large (each whole, frozen as FPT),
beside the same architectures at random init (Random), on CIFAR-10. The sizes whose weights
this machine has are run (small is always asked for: `reasonlab run` says where it looked);
the report says which.

Offline (smoke, cpu, or `backbone=` naming other backbones): the backbones come in one size
each, so the lever is depth: the first k layers of the checkpoint (k = 1, 2, 4 at cpu scale; a
third, two thirds and all of them at paper scale), frozen as FPT, beside Random, on each
backbone (_support/backbone.py). Width stays the checkpoint's, so the trained parameters
grow only with the norms (and, on MiniLM, not at all with the positions). CIFAR-10 is not
available offline: Fashion-MNIST stands in.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.model.fpt import Backbone
from reasonlab.model.pretrained import checkpoint
from reasonlab.studies.fpt._support.backbone import resolve, results_note
from reasonlab.studies.fpt._support.slide_verdicts import (both_backbones, lead_verdict,
                                                           scaling_verdict)
from reasonlab.studies.fpt._support.slides import SlideStudy, arm, title
from reasonlab.studies.fpt.analysis import accuracy_by_size, scaling_sections
from reasonlab.studies.fpt.common import FPT, RANDOM, by_backbone, recipe, tasks
from reasonlab.studies.kit.base import (STUDIES, Report, Results, RunSpec, Scale, Verdict,
                                        grid)
from reasonlab.studies.kit.claims import family_claims

TASK: dict[Scale, str] = {"smoke": "bit XOR", "cpu": "Fashion-MNIST", "paper": "CIFAR-10"}
SIZES = ("gpt2", "gpt2-medium", "gpt2-large")
"""The slide's GPT-2 sizes (FPT_BACKBONES entries)."""


def sizes(backbone: Backbone, scale: Scale) -> tuple[int, ...]:
    """The depths compared: the slide's three sizes (a third, two thirds, all of the layers at
    paper scale)."""
    n = backbone.architecture["n_layers"]
    return {"smoke": (1, 2), "cpu": (1, 2, 4), "paper": (n // 3, 2 * n // 3, n)}[scale]


@STUDIES.register("fpt-scaling")
class FptScaling(SlideStudy):
    title = "FPT: accuracy against backbone size (depth)"
    claims = family_claims(__package__)["fpt-scaling"]
    # estimated for 3 seeds: 3 x the 1-seed measurement (218 s after fpt-init, 2 quiet cores;
    # fpt README, "Seeds and time"). To be replaced by the 3-seed run's measurement
    cpu_after = ("fpt-init",)  # its 2-layer Fashion-MNIST runs are this study's middle size

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        task = TASK[scale]
        base = {**recipe(scale), **tasks(scale)[task]}
        if scale == "paper" and self.chosen_backbones is None:  # the slide's three sizes
            present = [n for n in SIZES if n == SIZES[0] or checkpoint(n).available()]
            return [spec for name in present for spec in grid(
                base, {FPT: arm(resolve(name), scale), RANDOM: arm(resolve(name), scale,
                                                                   "random")},
                seeds=seeds, factors={"backbone": SIZES[0], "size": name, "task": task,
                                      "layers": resolve(name).architecture["n_layers"]})]
        return [spec for name in self.backbones(scale) for k in sizes(resolve(name), scale)
                for spec in grid(base, {FPT: arm(resolve(name), scale, n_layers=k),
                                        RANDOM: arm(resolve(name), scale, "random",
                                                    n_layers=k)},
                                 seeds=seeds, factors={"backbone": name, "layers": k,
                                                       "task": task})]

    def analyse(self, results: Results, out: Path) -> Report:
        stand_in = ("" if results.scale == "paper" else
                    " CIFAR-10 is not available offline: Fashion-MNIST stands in.")
        rep = Report(self.title, out).recipe(results, note=results_note(results) + stand_in)
        scaling_sections(rep, results, FPT, RANDOM)
        rep.verdicts = self.judge_runs(results)
        return rep

    def judge_runs(self, results: Results) -> list[Verdict]:
        # backbone title -> (its task, arm -> depth -> final accuracy per seed)
        per = {title(b): (runs.first.factors["task"], accuracy_by_size(runs, (FPT, RANDOM)))
               for b, runs in by_backbone(results).items()}
        grow, lead = self.claim("scaling"), self.claim("scaling-lead")
        return [
            both_backbones(grow, {b: scaling_verdict(grow, task, acc[FPT])
                                  for b, (task, acc) in per.items()}),
            both_backbones(lead, {b: lead_verdict(lead, task, acc[FPT], acc[RANDOM])
                                  for b, (task, acc) in per.items()})]
