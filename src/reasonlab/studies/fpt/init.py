"""FPT: does pretraining matter beyond the weights' scale? (Lu et al. 2021, slides "Weight
initialization": Pretrained / Statistics Only / Default.)

Three frozen backbones of the same architecture, trained as FPT (input, output, positions,
norms), on each offline backbone (_support/backbone.py), on common.INIT_TASKS:
  Pretrained       the checkpoint
  Statistics Only  every tensor of the checkpoint redrawn from a normal with that tensor's mean
                   and std (model/pretrained.py StatisticsOnly)
  Default          the architecture's default random init (the paper's "Random")
The Pretrained and Default arms are fpt-universal's FPT and Random arms on SmolLM2 when
the recipes agree (shared runs folder).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.model.fpt import INIT_ROWS
from reasonlab.studies.fpt._support.backbone import backbone_grid, results_note
from reasonlab.studies.fpt._support.slide_verdicts import both_backbones, statistics_verdict
from reasonlab.studies.fpt._support.slides import SlideStudy, arm, backbone_tables, title
from reasonlab.studies.fpt.common import INIT_TASKS, recipe, some_tasks
from reasonlab.studies.fpt.paper import INIT_TABLE
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale
from reasonlab.studies.kit.claims import family_claims

@STUDIES.register("fpt-init")
class FptInit(SlideStudy):
    title = "FPT: pretrained vs Statistics Only vs default initialization"
    claims = family_claims(__package__)["fpt-init"]
    # estimated for 3 seeds: 3 x the 1-seed measurement (350 s, an empty store, 2 quiet cores;
    # fpt README, "Seeds and time"). To be replaced by the 3-seed run's measurement

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return backbone_grid(recipe(scale), lambda b: {
            label: arm(b, scale, init) for init, label in INIT_ROWS.items()},
            some_tasks(scale, INIT_TASKS), seeds, backbones=self.backbones(scale))

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=results_note(results))
        m = backbone_tables(rep, results, list(INIT_ROWS.values()), INIT_TABLE, "Accuracy",
                            "Test accuracy at the end of training, mean over seeds; bit memory "
                            "on MASKED bits. In brackets the slide's number (GPT-2; MNIST "
                            "for our digits and Fashion-MNIST).")
        claim = self.claim("statistics-only")
        rep.verdicts = [both_backbones(claim, {
            title(b): statistics_verdict(claim, v, *INIT_ROWS.values())
            for b, v in m.items()})]
        return rep
