"""LEGO length extrapolation: BERT-like vs ALBERT-like (Zhang et al. 2022, §3, Fig. 3).

Both models are trained on Task 1 (Z2 acting on {+1, -1}), n = 12 clauses, with the loss on the
first 6 chain variables only, and tested on all 12 chain positions (recipe: lego.common).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.lego.analysis import (curves_figure, one_hop_section, op_split_section,
                                             per_position, positions_section)
from reasonlab.studies.lego.common import N_TRAIN_VARS, SEEDS, WITH_LONG, bert_albert, recipe
from reasonlab.studies.lego.verdicts import classical_verdict, extrapolation_gain

ROTARY_NOTE = ("Rotary positions depart from the paper's BERT (learned positions): with learned "
               "positions the CPU-sized runs learned #0 and #1 later or not at all (README, "
               "'Choosing the CPU scale'). The arms differ only in weight tying (and, at paper "
               "scale, ALBERT's factorised embedding, d_embed of albert-base-v1); the paper "
               "fixes the root clause, r = 1.")


@STUDIES.register("lego-extrapolation")
class LegoExtrapolation(Study):
    title = "LEGO length extrapolation: BERT-like vs ALBERT-like"
    scales = WITH_LONG
    default_seeds = SEEDS

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(recipe(scale), bert_albert(scale), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        finals = per_position(results)
        rotary = results.first.config.model.positions == "rotary"
        rep = Report(self.title, out).recipe(results, ROTARY_NOTE if rotary else "")
        positions_section(rep, finals, trained=N_TRAIN_VARS, std=True, heading="Final test "
                          "accuracy per chain position (mean and std over seeds)", caption="Final "
                          "accuracy per chain position (band: ±1 std over seeds; grey: supervised "
                          "positions)")
        op_split_section(one_hop_section(curves_figure(rep, results.curves()), results), results)
        rep.verdicts = [classical_verdict(self.claim("classical"), finals),
                        extrapolation_gain(self.claim("extrapolation"), finals, "ALBERT", "BERT",
                                           N_TRAIN_VARS)]  # #6-#8
        return rep


