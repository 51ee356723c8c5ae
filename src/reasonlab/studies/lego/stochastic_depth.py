"""LEGO: ALBERT with stochastic depth vs fixed depth (Zhang et al. 2022, §4.1 Q3, Fig. 5).

"We uniformly sample depth between 6 and 12 per batch during training while fixing it at 12
during test." Both arms are ALBERT-like (one block applied n_layers times) with the LEGO recipe
(lego.common); the stochastic arm draws its depth per batch in [n_layers // 2, n_layers] (the
paper's 6..12 for 12 layers) and evaluates at full depth.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import (STUDIES, Report, Results, RunSpec, Scale, Study,
                                        Verdict, grid, merge)
from reasonlab.studies.lego.analysis import accuracy_report, per_position
from reasonlab.studies.lego.common import N_TRAIN_VARS, SEEDS, WITH_LONG, albert, recipe
from reasonlab.studies.lego.verdicts import extrapolation_gain

FIXED, STOCHASTIC = "ALBERT", "ALBERT + stochastic depth"


@STUDIES.register("lego-stochastic-depth")
class LegoStochasticDepth(Study):
    title = "LEGO: stochastic depth for ALBERT"
    scales = WITH_LONG
    cpu_after = ("lego-extrapolation",)
    default_seeds = SEEDS  # lego-extrapolation's, so its ALBERT runs are this study's baseline

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = recipe(scale)
        L = base["model"]["n_layers"]
        depth = {"model": {"depth_range": [max(1, L // 2), L]}}
        return grid(base, {FIXED: albert(scale), STOCHASTIC: merge(albert(scale), depth)},
                    seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        rep, _ = accuracy_report(self.title, results, out, N_TRAIN_VARS)
        rep.verdicts = self.judge_runs(results)
        return rep

    def judge_runs(self, results: Results) -> list[Verdict]:
        return [extrapolation_gain(self.claim("stochastic-depth"), per_position(results),
                                   STOCHASTIC, FIXED, N_TRAIN_VARS)]
