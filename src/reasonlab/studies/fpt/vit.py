"""FPT on a ViT pretrained on images against GPT-2 pretrained on language (Lu et al. 2021,
slides "Importance of language pre-training", ViT row: ListOps 37.4, MNIST 97.8, CIFAR-10
72.5% against FPT's 38.4 / 98.0 / 68.2%).

Two rows, each the same FPT recipe on a frozen backbone (_support/other_backbones.py):
vit-base-patch16-224 (a pre-LN encoder; as the authors, a fresh zero position table that
trains) beside GPT-2 small. The claim: the ViT transfers about as GPT-2 does (within ABOUT).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt._support.backbone_verdicts import ABOUT, like_verdict
from reasonlab.studies.fpt._support.other_backbones import GPT2, VIT, OtherBackbones, row_options
from reasonlab.studies.kit.base import STUDIES, Report, Results
from reasonlab.studies.kit.claims import family_claims


@STUDIES.register("fpt-vit")
class FptVit(OtherBackbones):
    title = "FPT on a ViT pretrained on images vs GPT-2 pretrained on language"
    claims = family_claims(__package__)["fpt-vit"]
    rows = (GPT2, VIT)
    options = row_options(rows)
    task_names = {"smoke": ("bit XOR",), "paper": ("ListOps (fpt2021)", "MNIST", "CIFAR-10")}

    def analyse(self, results: Results, out: Path) -> Report:
        rep, values = self.table(results, out)
        rep.verdicts = [like_verdict(self.claim("vit"), values, VIT, GPT2, ABOUT)]
        return rep
