"""Learning rate and weight decay at a gamma near the phase boundary (Zhang et al. 2024,
arXiv 2405.05409, §3: larger learning rate and weight decay favour inferential solutions).

A 2 x 2 grid (small/large lr) x (small/large weight decay) at one gamma and depth; the held-out
pair (4,3) is classified per run as in the phase study.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.studies.anchors.analysis import (cells_by, heldout_section, mean_heatmaps,
                                                run_solution)
from reasonlab.studies.anchors.common import SCALES, cell, equivalent_gamma, recipe
from reasonlab.studies.anchors.verdicts import effect_verdict
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Study, grid

SETTINGS: dict[Scale, dict[str, Any]] = {
    "smoke": dict(gamma=0.5, n_layers=1, lrs=(1e-3, 3e-3), wds=(0.01, 1.0)),
    # gamma: the paper's 0.55 moved to d_model 64 (same scale relative to 1/sqrt(d_in))
    "cpu": dict(gamma=equivalent_gamma(0.55, SCALES["cpu"]["model"]["d_model"]), n_layers=2,
                lrs=(1e-3, 3e-3), wds=(0.01, 1.0)),
    "paper": dict(gamma=0.5, n_layers=3, lrs=(5e-5, 2.5e-4), wds=(0.01, 0.1)),
}
"""gamma near the boundary, depth, (small, large) lr and (small, large) weight decay."""

MIN_INFERENTIAL_GAIN = 0.1
"""Rise in the mean inferential fraction (over seeds and the other factor) that counts."""


@STUDIES.register("anchors-lr-weight-decay")
class AnchorsLrWeightDecay(Study):
    title = "Anchor functions: learning rate and weight decay near the phase boundary"
    claims = (
        Claim("lr", "A larger learning rate pushes towards inferential solutions",
              "Zhang et al. 2024, §3"),
        Claim("wd", "A larger weight decay pushes towards inferential solutions",
              "Zhang et al. 2024, §3"),
    )
    cpu_minutes = 8.3  # measured: 498 s (12 runs x 2400 steps)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        s = SETTINGS[scale]
        return grid(recipe(scale), {
            f"lr={lr:g} wd={wd:g}": cell(s["gamma"], s["n_layers"],
                                         optim={"lr": lr, "weight_decay": wd})
            for lr in s["lrs"] for wd in s["wds"]}, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        recs = [{"lr": spec.config.optim.lr, "wd": spec.config.optim.weight_decay,
                 **run_solution(spec, result, out).to_json()} for spec, result in results]
        (lrs, wds), cells = cells_by(recs, "lr", "wd")
        rep = heldout_section(Report(self.title, out).recipe(results), results, cells,
                              ["lr", "weight decay"], ("inferential", "symmetric", "seen_acc"))
        mean_heatmaps(rep, cells, ("learning rate", "weight decay"), ("inferential", "symmetric"))
        rep.verdicts = [effect_verdict(self.claim("lr"), recs, "lr", lrs, MIN_INFERENTIAL_GAIN),
                        effect_verdict(self.claim("wd"), recs, "wd", wds, MIN_INFERENTIAL_GAIN)]
        return rep
