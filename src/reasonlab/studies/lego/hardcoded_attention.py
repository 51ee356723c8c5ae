"""LEGO §5: BERT vs Hardcode vs Hybrid on masked-LM pretraining (Zhang et al. 2022, §5, Fig. 9;
docs/papers.md §1.1).

"The Hardcode model learns faster but gradually falls short, while the hybrid model achieves
the best of both worlds: it learns faster at the beginning and achieves even (slightly) lower
validation loss at the end" (1.49 BERT / 1.66 Hardcode / 1.47 Hybrid), with fewer FLOPs.

Recipe and arms: lego/_support/masked_lm.py. Every verdict is taken twice, on the curves against
optimiser steps and against training FLOPs (`Transformer.flops_per_token` x tokens seen), and
needs both (kit/curves.py, lego/verdicts.py). The two end-of-training claims are about trained
models: they are judged only once BERT has left the unigram plateau (lego.verdicts.left_plateau),
inconclusive before.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.sizes import flops_per_step
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.kit.curves import early_step, plot_loss_curves
from reasonlab.studies.kit.verdicts import requires
from reasonlab.studies.lego.analysis import loss_table, no_context_loss, plateau_section
from reasonlab.studies.lego._support.masked_lm import (BERT, HARDCODE, HYBRID, PAPER_TOKENS,
                                                       RECIPES, arms)
from reasonlab.studies.lego.verdicts import (EARLY, at_least_as_low, cheaper, faster_early,
                                             worse_at_end)
from reasonlab.tasks.base import build_task


@STUDIES.register("lego-hardcoded-attention")
class LegoHardcodedAttention(Study):
    title = "LEGO §5: hardcoded attention (Hardcode, Hybrid) vs BERT on masked-LM pretraining"

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(RECIPES[scale], arms(scale), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        curves = {a: [[(m["step"], m["loss"]) for m in c] for c in cs]
                  for a, cs in results.curves().items()}
        fps = {s.arm: flops_per_step(s.config) for s, _ in results}
        paper = {s.arm: flops_per_step(s.config) for s in grid(RECIPES["paper"], arms("paper"))}
        early = early_step(curves[BERT][0], results.first.config.steps, EARLY)
        rep = loss_table(Report(self.title, out).recipe(results), results, curves, fps, paper,
                         PAPER_TOKENS, early)
        plot_loss_curves(curves, fps, out / "val_loss.png", "Masked-LM pretraining: BERT vs "
                         "Hardcode vs Hybrid", ylabel="validation masked-LM loss (nats)")
        rep.figure("val_loss.png", "Validation masked-LM loss against optimiser steps (left) "
                   "and training FLOPs (right); thin lines: seeds")
        plateau = no_context_loss(build_task(results.first.config.task))
        trained = plateau_section(rep, curves[BERT], plateau)
        claim = self.claim
        rep.verdicts = [
            faster_early(claim("hardcode-early"), curves, fps, HARDCODE, BERT, early),
            requires(worse_at_end(claim("hardcode-late"), curves, fps, HARDCODE, BERT), *trained),
            requires(at_least_as_low(claim("hybrid-final"), curves, fps, HYBRID, BERT), *trained),
            cheaper(claim("hybrid-flops"), {"this scale": (fps[HYBRID], fps[BERT]),
                                            "BERT-base": (paper[HYBRID], paper[BERT])}),
        ]
        return rep
