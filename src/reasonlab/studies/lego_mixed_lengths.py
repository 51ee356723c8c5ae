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

from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study
from reasonlab.studies.lego_common import accuracy_report, by_arm, extrapolation_gain, recipe, spec
from reasonlab.studies.lego_extrapolation import N_CLAUSES, N_TRAIN_VARS, lego_task

FIXED, MIXED = "fixed length 12", f"mixed lengths {N_TRAIN_VARS}-{N_CLAUSES}"


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
        rep, finals = accuracy_report(self.title, by_arm(results), out, N_TRAIN_VARS)
        rep.verdicts = [extrapolation_gain(self.claims[0], finals, MIXED, FIXED, N_TRAIN_VARS)]
        return rep
