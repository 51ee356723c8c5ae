"""LEGO: ALBERT with stochastic depth vs fixed depth (Zhang et al. 2022, §4.1 Q3, Fig. 5).

"We uniformly sample depth between 6 and 12 per batch during training while fixing it at 12
during test." Both arms are ALBERT-like (one block applied n_layers times) with the
`lego-extrapolation` recipe; the stochastic arm draws its depth per batch in
[n_layers // 2, n_layers] (the paper's 6..12 for 12 layers) and evaluates at full depth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.report import final_by_depth, mean_std, plot_curves, plot_positions, table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study
from reasonlab.studies.lego_common import (by_arm, gain_verdict, needs_fit, recipe, span_means,
                                           spec)
from reasonlab.studies.lego_extrapolation import N_TRAIN_VARS, lego_task

FIXED, STOCHASTIC = "ALBERT", "ALBERT + stochastic depth"
SPAN = slice(N_TRAIN_VARS, N_TRAIN_VARS + 3)  # #6-#8, where extrapolation shows (§3 Fig. 3)


@STUDIES.register("lego-stochastic-depth")
class LegoStochasticDepth(Study):
    name = "lego-stochastic-depth"
    title = "LEGO: stochastic depth for ALBERT"
    claims = (Claim("stochastic-depth", "Stochastic depth improves ALBERT's extrapolation to "
                    "#6 and beyond (#6-#8)", "Zhang et al. 2022, §4.1 Q3, Fig. 5"),)
    cpu_minutes = 4.7  # measured; its 2 ALBERT runs reused
    cpu_after = "lego-extrapolation"
    # cpu: the 2 seeds of lego-extrapolation, so its runs serve as this study's baseline arm
    default_seeds = {"smoke": 1, "cpu": 2, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = recipe(scale)
        L = base["model"]["n_layers"]
        arms = {FIXED: None, STOCHASTIC: [max(1, L // 2), L]}
        return [spec(arm, seed, base, lego_task(),
                     model={"tie_layers": True, "depth_range": depth})
                for arm, depth in arms.items() for seed in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        arms = by_arm(results)
        finals = {arm: final_by_depth(rs) for arm, rs in arms.items()}
        plot_positions(finals, out / "accuracy_by_position.png",
                       "final test accuracy per chain position", trained=N_TRAIN_VARS)
        plot_curves({a: [r["curve"] for r in rs] for a, rs in arms.items()}, out / "curves.png",
                    "test accuracy per chain position during training")
        rep = Report(self.title)
        n = len(next(iter(finals.values()))[0])
        rows = [[arm] + [f"{x:.3f}" for x in mean_std(f)[0]] for arm, f in finals.items()]
        rep.sections.append("## Final test accuracy per chain position (mean over seeds)\n\n"
                            + table(["arm"] + [f"#{i}" for i in range(n)], rows))
        rep.figures += [("accuracy_by_position.png", "Final accuracy per chain position"),
                        ("curves.png", "Accuracy per chain position during training")]
        rep.verdicts = [needs_fit(gain_verdict(self.claims[0], span_means(finals[STOCHASTIC], SPAN),
                                               span_means(finals[FIXED], SPAN),
                                               (STOCHASTIC, FIXED), "mean accuracy #6-#8"),
                                  finals, slice(0, N_TRAIN_VARS))]
        return rep
