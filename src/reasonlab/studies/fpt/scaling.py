"""FPT: do larger backbones transfer better? (Lu et al. 2021, slides "Scaling with size",
CIFAR-10: GPT-2 Small / Medium / Large, 12 / 24 / 36 layers, FPT 68.2 / 69.8 / 72.1%, Random
61.7 / 64.0 / 65.7%.)

The offline backbones come in one size each, so the lever is depth: the first k layers of the
checkpoint (k = 1, 2, 4 at cpu scale; a third, two thirds and all of them at paper scale),
frozen as FPT, beside the same architecture at random init (Random), on each backbone
(studies/fpt/backbones.py). Width stays the checkpoint's, so the trained parameters grow only
with the norms (and, on MiniLM, not at all with the positions). CIFAR-10 is not available
offline: Fashion-MNIST stands in.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reasonlab.model.fpt import FPT_BACKBONES, Backbone
from reasonlab.studies.fpt.backbones import BACKBONES, NO_GPT2
from reasonlab.studies.fpt.common import recipe, tasks
from reasonlab.studies.fpt.paper import SCALING_TABLE
from reasonlab.studies.fpt.slide_verdicts import both_backbones, lead_verdict, scaling_verdict
from reasonlab.studies.fpt.slides import SlideStudy, arm, by_backbone, title
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, grid

FPT, RANDOM = "FPT", "Random"
TASK: dict[Scale, str] = {"smoke": "bit XOR", "cpu": "Fashion-MNIST", "paper": "Fashion-MNIST"}


def sizes(backbone: Backbone, scale: Scale) -> tuple[int, ...]:
    """The depths compared: the slide's three sizes (a third, two thirds, all of the layers at
    paper scale)."""
    n = backbone.architecture["n_layers"]
    return {"smoke": (1, 2), "cpu": (1, 2, 4), "paper": (n // 3, 2 * n // 3, n)}[scale]


@STUDIES.register("fpt-scaling")
class FptScaling(SlideStudy):
    title = "FPT: accuracy against backbone size (depth)"
    claims = (
        Claim("scaling", "Larger pretrained backbones transfer better",
              "Lu et al. 2021, slides, Scaling with size (CIFAR-10)",
              "FPT: Small 68.2%, Medium 69.8%, Large 72.1%"),
        Claim("scaling-lead", "Pretrained backbones keep their lead over random ones at every "
              "size", "Lu et al. 2021, slides, Scaling with size (CIFAR-10)",
              "FPT / Random: Small 68.2 / 61.7%, Medium 69.8 / 64.0%, Large 72.1 / 65.7%"),
    )
    # measured: 345 s after fpt-init (8 new runs), on the 2-core machine shared with five other
    # sessions (load average ~20; README): not a quiet-machine time
    cpu_minutes = 5.8
    cpu_after = "fpt-init"  # its 2-layer Fashion-MNIST runs are this study's middle size
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        task = TASK[scale]
        base = {**recipe(scale), **tasks(scale)[task]}
        return [spec for name in BACKBONES for k in sizes(FPT_BACKBONES[name], scale)
                for spec in grid(base, {FPT: arm(FPT_BACKBONES[name], scale, n_layers=k),
                                        RANDOM: arm(FPT_BACKBONES[name], scale, "random",
                                                    n_layers=k)},
                                 seeds=seeds, factors={"backbone": name, "layers": k,
                                                       "task": task})]

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=NO_GPT2 + " CIFAR-10 is not "
                                             "available offline: Fashion-MNIST stands in.")
        rows, grow, lead = [], {}, {}
        for b, runs in by_backbone(results).items():
            task = runs.first.factors["task"]
            acc: dict[str, dict[int, float]] = {FPT: {}, RANDOM: {}}
            for k, rs in runs.by("layers").items():
                arms = rs.arms()
                for a in acc:
                    acc[a][k] = float(np.mean([r["final"]["acc"] for r in arms[a]]))
                f = arms[FPT][0]["final"]
                rows.append([title(b), str(k), f"{f['params_total']:,}",
                             f"{f['params_trained']:,}", f"{100 * acc[FPT][k]:.1f}",
                             f"{100 * acc[RANDOM][k]:.1f}"])
            grow[title(b)] = scaling_verdict(self.claim("scaling"), task, acc[FPT])
            lead[title(b)] = lead_verdict(self.claim("scaling-lead"), task, acc[FPT],
                                          acc[RANDOM])
        header = ["backbone", "# layers", "total params", "trained params", "FPT", "Random"]
        rep.table(f"Accuracy by size (%), ours ({TASK[results.scale]})", header, rows,
                  before="Test accuracy at the end of training, mean over seeds; parameters "
                  "of the FPT arm.")
        rep.table("Accuracy by size (%), the slide (CIFAR-10)", ["model size", *header[1:]],
                  SCALING_TABLE)
        rep.verdicts = [both_backbones(self.claim("scaling"), grow),
                        both_backbones(self.claim("scaling-lead"), lead)]
        return rep
