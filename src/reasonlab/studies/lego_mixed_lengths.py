"""LEGO dataset composition: mixed chain lengths vs fixed length (Zhang et al. 2022, §1, §4).

"BERT-like models without special data preparation do not extrapolate to longer sequences,
while other models like ALBERT, or BERT with carefully selected data (such as diverse sequence
lengths ...) do extrapolate." Both arms are BERT-like with the `lego-extrapolation` recipe and
supervise the first 6 chain variables. The fixed arm trains on 12-clause sentences; the mixed
arm's training sentences draw their length uniformly in [6, 12] (task.min_clauses; padded,
with masks). Both are tested on 12-clause sentences. The exact mixture the authors used is not
in the text we have: this one is our reading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.report import final_by_depth, mean_std, plot_curves, plot_positions, table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study
from reasonlab.studies.lego_common import (by_arm, gain_verdict, needs_fit, recipe, span_means,
                                           spec)
from reasonlab.studies.lego_extrapolation import N_CLAUSES, N_TRAIN_VARS, lego_task

FIXED, MIXED = "fixed length 12", f"mixed lengths {N_TRAIN_VARS}-{N_CLAUSES}"
SPAN = slice(N_TRAIN_VARS, N_TRAIN_VARS + 3)  # #6-#8


@STUDIES.register("lego-mixed-lengths")
class LegoMixedLengths(Study):
    name = "lego-mixed-lengths"
    title = "LEGO: mixed chain lengths in training vs fixed length (BERT-like)"
    claims = (Claim("mixed-lengths", "Training on mixed chain lengths improves BERT's "
                    "extrapolation (#6-#8)", "Zhang et al. 2022, §1 and §4"),)
    cpu_minutes = 5.8  # measured; its 2 BERT runs reused
    cpu_after = "lego-extrapolation"
    # cpu: the 2 seeds of lego-extrapolation, so its runs serve as this study's baseline arm
    default_seeds = {"smoke": 1, "cpu": 2, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = recipe(scale)
        arms = {FIXED: lego_task(), MIXED: {**lego_task(), "min_clauses": N_TRAIN_VARS}}
        return [spec(arm, seed, base, task, model={"tie_layers": False})
                for arm, task in arms.items() for seed in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        arms = by_arm(results)
        finals = {arm: final_by_depth(rs) for arm, rs in arms.items()}
        plot_positions(finals, out / "accuracy_by_position.png",
                       "final test accuracy per chain position (12-clause test sentences)",
                       trained=N_TRAIN_VARS)
        plot_curves({a: [r["curve"] for r in rs] for a, rs in arms.items()}, out / "curves.png",
                    "test accuracy per chain position during training")
        rep = Report(self.title)
        rows = [[arm] + [f"{x:.3f}" for x in mean_std(f)[0]] for arm, f in finals.items()]
        rep.sections.append("## Final test accuracy per chain position (mean over seeds)\n\n"
                            + table(["arm"] + [f"#{i}" for i in range(N_CLAUSES)], rows))
        rep.figures += [("accuracy_by_position.png", "Final accuracy per chain position"),
                        ("curves.png", "Accuracy per chain position during training")]
        rep.verdicts = [needs_fit(gain_verdict(self.claims[0], span_means(finals[MIXED], SPAN),
                                               span_means(finals[FIXED], SPAN), (MIXED, FIXED),
                                               "mean accuracy #6-#8"),
                                  finals, slice(0, N_TRAIN_VARS))]
        return rep
