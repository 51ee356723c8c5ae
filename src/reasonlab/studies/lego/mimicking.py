"""LEGO: mimicking initialisation vs random and pretrained (Zhang et al. 2022, §4.2.2, Fig. 6).

Three arms of the all-MiniLM-L6-v2 architecture (see `lego-pretraining`): random init,
pretrained, and random init followed by mimicking (train/mimic.py): head 0 of every layer
learns the manipulation pattern (kernel [1, 2, 4, 2, 1]) and head 1 the association pattern on
random LEGO sentences, with no pretraining data, before the same fine-tuning. Mimicking runs as
the authors' script does (train mode, cosine lr, KL summed over layers and heads); at paper
scale the fine-tuning of all three arms uses that script's batch of 400 (FINETUNE: 300 steps an
epoch of 120k sentences, 200 epochs), not lego-pretraining's 1000.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, grid
from reasonlab.studies.lego.analysis import accuracy_report, mimicked_heads, substitution_note
from reasonlab.studies.lego.common import (MIMIC, MINILM_FINETUNE, MINILM_MIMIC, RANDOM,
                                           NeedsMiniLM, extrapolation_span, mimic, minilm_arms,
                                           minilm_recipe)
from reasonlab.studies.lego.verdicts import closed_verdict


@STUDIES.register("lego-mimicking")
class LegoMimicking(NeedsMiniLM):
    title = "LEGO: mimicking initialisation vs random and pretrained init"
    # and pretrained runs are lego-pretraining's)
    cpu_after = ("lego-pretraining",)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        arms = minilm_arms(scale, self.source)
        arms[MIMIC] = {**arms[RANDOM], **mimic(MINILM_MIMIC[scale])}
        return grid(minilm_recipe(scale), arms, [MINILM_FINETUNE.get(scale, {})], seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        span = extrapolation_span(results.first)
        rep, finals = accuracy_report(self.title, results, out, span.start)
        rep.sections += [mimicked_heads(*next((s, r) for s, r in results if s.arm == MIMIC)),
                         substitution_note(next(s for s, _ in results
                                                if s.config.init_checkpoint))]
        rep.verdicts = [closed_verdict(self.claim("closes-gap"), finals, span,
                                       f"mean accuracy #{span.start}-#{span.stop - 1}")]
        return rep
