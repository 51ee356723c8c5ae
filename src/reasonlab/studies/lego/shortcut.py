"""LEGO shortcut solutions (Zhang et al. 2022, §4.3 and Appendix A).

(a) Random-init models supervised on all 12 variables learn the LAST variable of the chain
    early: it appears only once and its value is the parity of the minus signs. The paper's
    claim covers BERT and ALBERT, so (a) has a BERT-like and an ALBERT-like (tied) arm, at
    every scale (3 seeds each, like every arm: the study's 12 runs of its own take about 20
    minutes on 2 cores, within the 45 allowed where seeds need it). At paper scale accuracy
    is evaluated every 120 steps (one epoch of 120k sentences at batch 1000, the paper's
    per-epoch curves); a position passing 0.9 at the same evaluation as #11 is a tie, and #11
    is not before it (lego.verdicts.last_first_verdict: only strict precedence bounds how
    often a last position that is nothing special would look early).
(b) Supervising #0-#4 plus #11 (the shortcut is available) instead of #0-#5 degrades
    extrapolation to the unsupervised middle #6-#10.
(c) Mimicking initialisation (association + manipulation heads, train/mimic.py) prevents
    that damage. (Pretrained init is studied in `lego-pretraining`; it needs the MiniLM
    architecture, so it is not mixed into this study's small recipe.)
All arms but the ALBERT-like one are BERT-like with the `lego-extrapolation` recipe.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid, merge
from reasonlab.studies.lego.analysis import pass_order_section, per_position, positions_section
from reasonlab.studies.lego.common import (MIMIC_RECIPE, N_CLAUSES, SEEDS, WITH_LONG, albert,
                                           mimic, recipe)
from reasonlab.studies.lego.verdicts import last_first_every_arm, span_gain

ALL, FIRST6, SHORTCUT, SHORTCUT_MIMIC = "#0-#11", "#0-#5", "#0-#4 + #11", "#0-#4 + #11, mimic"
ALL_TIED = "#0-#11, ALBERT"
ARMS = (ALL, ALL_TIED, FIRST6, SHORTCUT, SHORTCUT_MIMIC)  # display order
EVAL_EVERY: dict[Scale, int] = {"paper": 120}
"""Evaluation period overriding the recipe's: the paper's curves are per epoch (120 steps)."""
SHORTCUT_POS = [0, 1, 2, 3, 4, N_CLAUSES - 1]
MIDDLE = slice(6, N_CLAUSES - 1)  # #6-#10: unsupervised in both (b) arms
COMMON = slice(0, 5)  # #0-#4: supervised in every arm


@STUDIES.register("lego-shortcut")
class LegoShortcut(Study):
    title = "LEGO: shortcut solutions through the last variable"
    scales = WITH_LONG
    cpu_after = ("lego-extrapolation",)
    # lego-extrapolation's seeds, so its BERT runs are this study's #0-#5 arm
    default_seeds = SEEDS

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        # (a) reads curves: its arms evaluate every EVAL_EVERY steps; the others keep the
        # recipe's period (their verdicts read final accuracy; #0-#5 stays lego-extrapolation's)
        curve = {"eval_every": EVAL_EVERY[scale]} if scale in EVAL_EVERY else {}
        all12 = {"task": {"n_train_vars": N_CLAUSES}, **curve}
        shortcut = {"task": {"supervised": SHORTCUT_POS}}
        arms = {ALL: all12, ALL_TIED: merge(all12, albert(scale)), FIRST6: {},
                SHORTCUT: shortcut, SHORTCUT_MIMIC: {**shortcut, **mimic(MIMIC_RECIPE[scale])}}
        # the longest runs (mimicking first) start first, so that 2 workers finish together
        return sorted(grid(recipe(scale), arms, seeds=seeds), key=lambda s: s.arm != SHORTCUT_MIMIC)

    def analyse(self, results: Results, out: Path) -> Report:
        finals = per_position(results)
        finals = {arm: finals[arm] for arm in ARMS}  # display order: the evidence follows it
        rep = Report(self.title, out).recipe(results)
        positions_section(rep, {a: finals[a] for a in (FIRST6, SHORTCUT, SHORTCUT_MIMIC)},
                          heading="Final test accuracy per chain position (mean over seeds; arm "
                          "= supervised positions)", caption="Final accuracy per position under "
                          "#0-#5, #0-#4 + #11, and #0-#4 + #11 after mimicking init")
        curves = pass_order_section(
            rep, results, (ALL, ALL_TIED), "all 12 variables supervised: accuracy per chain "
            "position", "All 12 supervised, BERT-like and ALBERT-like: accuracy per position "
            "during training (#11 is the brightest)", "curves_all12.png", "all 12 supervised")
        rep.verdicts = [
            last_first_every_arm(self.claim("last-first"), curves),
            span_gain(self.claim("shortcut-hurts"), finals, FIRST6, SHORTCUT, MIDDLE, COMMON),
            span_gain(self.claim("mimic-prevents"), finals, SHORTCUT_MIMIC, SHORTCUT, MIDDLE,
                      COMMON),
        ]
        return rep
