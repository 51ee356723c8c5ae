"""LEGO: ALBERT with stochastic depth vs fixed depth (Zhang et al. 2022, §4.1 Q3, Fig. 5).

"We uniformly sample depth between 6 and 12 per batch during training while fixing it at 12
during test." Both arms are ALBERT-like (one block applied n_layers times) with the
`lego-extrapolation` recipe; the stochastic arm draws its depth per batch in
[n_layers // 2, n_layers] (the paper's 6..12 for 12 layers) and evaluates at full depth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study
from reasonlab.studies.lego_common import (accuracy_report, arm_model, by_arm, extrapolation_gain,
                                           recipe, spec)
from reasonlab.studies.lego_extrapolation import N_TRAIN_VARS, lego_task

FIXED, STOCHASTIC = "ALBERT", "ALBERT + stochastic depth"


@STUDIES.register("lego-stochastic-depth")
class LegoStochasticDepth(Study):
    name = "lego-stochastic-depth"
    title = "LEGO: stochastic depth for ALBERT"
    claims = (Claim("stochastic-depth", "Stochastic depth improves ALBERT's extrapolation to "
                    "#6 and beyond (#6-#8)", "Zhang et al. 2022, §4.1 Q3, Fig. 5"),)
    cpu_minutes = 3.0  # measured: 178 s; its 2 ALBERT runs reused
    cpu_after = "lego-extrapolation"
    # cpu: the 2 seeds of lego-extrapolation, so its runs serve as this study's baseline arm
    default_seeds = {"smoke": 1, "cpu": 2, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = recipe(scale)
        L = base["model"]["n_layers"]
        arms = {FIXED: None, STOCHASTIC: [max(1, L // 2), L]}
        return [spec(arm, seed, base, lego_task(),
                     model={**arm_model(True, scale), "depth_range": depth})
                for arm, depth in arms.items() for seed in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        rep, finals = accuracy_report(self.title, by_arm(results), out, N_TRAIN_VARS)
        rep.verdicts = [extrapolation_gain(self.claims[0], finals, STOCHASTIC, FIXED,
                                           N_TRAIN_VARS)]
        return rep
