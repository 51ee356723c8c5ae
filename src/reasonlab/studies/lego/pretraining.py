"""LEGO: fine-tuning pretrained weights vs random init (Zhang et al. 2022, §4.2, Figs. 6-7).

The architecture is the one pretrained checkpoint that reaches us offline, all-MiniLM-L6-v2
(a 6-layer, d_model 384 BERT; model/pretrained.py), in three arms: random init (BERT's
N(0, 0.02)), pretrained, and pretrained with `=`, `,` and the operators renamed to arbitrary
real words (task.rename_ops, the paper's control for token semantics). Task 1's points are the
real BERT tokens `0` / `1`, as the authors write them (model/pretrained.py, TOKEN_ALIASES).
A fourth claim looks at the pretrained model before any fine-tuning: its best association and
manipulation heads against a random-init model of the same shape on the same sentences, and
against positional controls (lego_heads.py).

Scales (lego.common.MINILM_SCALES): MiniLM is ~11M non-embedding parameters, ~4 s per batch-32
step on one core at 62 tokens, so the `cpu` scale shortens the chain (n = 8, first 4
supervised, extrapolation measured on #4-#6) and runs 3 seeds (the fewest a verdict decides
from); `paper` is the paper's n = 12 with 6 supervised. The heads claim compares the one fixed
checkpoint (read exactly) with random-init models of its shape, one per seed.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, grid
from reasonlab.studies.lego.analysis import (accuracy_report, association_table, head_evidence,
                                             substitution_note)
from reasonlab.studies.lego.common import (PRETRAINED, RANDOM, NeedsMiniLM, extrapolation_span,
                                           minilm_arms, minilm_recipe)
from reasonlab.studies.lego.verdicts import (converge_steps, converge_verdict, extrapolation_gain,
                                             heads_verdict)

RENAMED = "pretrained, renamed ops"


@STUDIES.register("lego-pretraining")
class LegoPretraining(NeedsMiniLM):
    title = "LEGO: pretrained (all-MiniLM-L6-v2) vs random init"

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        arms = minilm_arms(scale, self.source)
        arms[RENAMED] = {**arms[PRETRAINED], "task": {"rename_ops": True}}
        return grid(minilm_recipe(scale), arms, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        n_train = extrapolation_span(results.first).start
        rep, finals = accuracy_report(self.title, results, out, n_train)
        first = results.first.config
        ckpt = next(s.config.init_checkpoint for s, _ in results if s.config.init_checkpoint)
        scores, controls = head_evidence(first.task.model_dump(), out, n=min(64, first.n_test),
                                         inits=results.seeds, ckpt=ckpt)
        pre = next(s for s, _ in results if s.config.init_checkpoint)
        rep.sections += [association_table(controls), substitution_note(pre)]
        rep.figure("pretrained_heads.png", "Pretrained model before fine-tuning: best "
                   "association (variable queries) and manipulation heads")
        steps = {a: [converge_steps(r["curve"]) for r in rs] for a, rs in results.arms().items()}
        rep.verdicts = [
            extrapolation_gain(self.claim("extrapolation"), finals, PRETRAINED, RANDOM, n_train),
            converge_verdict(self.claim("convergence"), steps[PRETRAINED], steps[RANDOM],
                             (PRETRAINED, RANDOM)),
            extrapolation_gain(self.claim("renaming"), finals, RENAMED, RANDOM, n_train),
            heads_verdict(self.claim("heads"), scores, controls),
        ]
        return rep
