"""FPT on other pretrained transformers than GPT-2: BERT and Longformer, and why not T5 (Lu et
al. 2021, slides "Model - differences with GPT": GPT-2 / BERT / T5 / Longformer, ListOps 38.4 /
38.3 / 15.4 / 17.0%, CIFAR-10 68.2 / 68.8 / 64.7 / 66.8%).

One row per frozen backbone, each the same FPT recipe (_support/other_backbones.py says how
each maps onto our Transformer and where its folder comes from): BERT should transfer about
as GPT-2 does (within LIKE), Longformer less. T5's row is printed, not run: its relative
position buckets do not map onto our attention (claims.toml: untested, with that reason).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt._support.backbone_verdicts import LIKE, less_verdict, like_verdict
from reasonlab.studies.fpt._support.other_backbones import (BERT, GPT2, LONGFORMER, T5,
                                                            OtherBackbones, row_options)
from reasonlab.studies.kit.base import STUDIES, Report, Results
from reasonlab.studies.kit.claims import family_claims


@STUDIES.register("fpt-backbones")
class FptBackbones(OtherBackbones):
    title = "FPT on other pretrained transformers: BERT, Longformer (and why not T5) vs GPT-2"
    claims = family_claims(__package__)["fpt-backbones"]
    rows = (GPT2, BERT, LONGFORMER)
    options = row_options(rows)
    slide_rows = (T5,)
    not_run = ("T5 does not map onto our Transformer; Longformer maps only while a sequence "
               "fits its sliding window, not ListOps' 512 tokens")
    task_names = {"smoke": ("bit XOR",), "paper": ("ListOps (fpt2021)", "CIFAR-10")}

    def analyse(self, results: Results, out: Path) -> Report:
        rep, values = self.table(results, out)
        rep.verdicts = [
            like_verdict(self.claim("bert-like-gpt2"), values, BERT, GPT2, LIKE),
            less_verdict(self.claim("longformer-less"), values, LONGFORMER, GPT2)]
        return rep
