"""Phase diagram of solution types over initialization rate gamma x depth (Zhang et al. 2024,
arXiv 2405.05409, §3, the phase diagram figure).

Every cell (gamma, depth) trains several seeds on the anchor task; each run's held-out pair
(4,3) is classified as inferential / symmetric / neither / unfit (analysis/solutions.py).
Below d_model 400 the paper's gammas are run under both readings (anchors.common.READINGS:
mapped to the same scale relative to 1/sqrt(d_in), and used directly), in one grid, and each
claim is judged on each reading's columns.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.anchors.analysis import phase_cells, phase_figures, phase_section
from reasonlab.studies.anchors.common import (PHASE, PHASE_SEEDS, ReadingsStudy, cell,
                                              phase_gammas, recipe)
from reasonlab.studies.anchors.verdicts import phase_verdicts
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, merge
from reasonlab.train.config import TrainConfig


@STUDIES.register("anchors-init-phase")
class AnchorsInitPhase(ReadingsStudy):
    title = "Anchor functions: solution type over initialization rate x depth"
    # measured at 3 seeds: 636 s, both readings (24 runs x 2400 steps), 2 workers; at
    # PHASE_SEEDS (96 runs) estimated 4 x 10.6 = 42.4 min, not yet measured
    default_seeds = {"cpu": PHASE_SEEDS, "paper": PHASE_SEEDS}
    unit = ("the training seed: one run per seed of each (gamma, depth) cell, each depth with "
            "seeds of its own; small-init and large-init pool the runs of both depths at one "
            "gamma, each run one unit")

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        """Every (gamma, depth) cell, `seeds` runs each. Each depth gets seeds of its own (the
        first depth 0 .. seeds-1, the next seeds .. 2 seeds-1, ...): small-init and large-init
        pool a gamma's runs over the depths as independent units, and two runs of one seed
        would share its data and initialization draws. The first depth is DEPTH, whose runs
        anchors-mechanism and anchors-embedding-norm reuse with seeds from 0."""
        gammas = sorted(set(sum(phase_gammas(scale).values(), ())))
        return [RunSpec(arm, seed, TrainConfig.build(merge(recipe(scale), over, {"seed": seed})),
                        {"arm": arm})
                for i, L in enumerate(PHASE[scale][1])
                for arm, over in {f"gamma={g} L={L}": cell(g, L) for g in gammas}.items()
                for seed in range(i * seeds, (i + 1) * seeds)]

    def analyse(self, results: Results, out: Path) -> Report:
        cells = phase_cells(results, out)
        read = phase_gammas(results.scale)
        gammas = sorted({g for g, _ in cells})
        depths = sorted({L for _, L in cells})
        rep = Report(self.title, out).recipe(results)
        rep.sections.append(phase_section(cells, gammas, depths, read))
        rep.figures += phase_figures(cells, gammas, depths, out, read)
        rep.verdicts = [v for r in self.readings() for v in phase_verdicts(
            lambda key, r=r: self.claim(f"{key}.{r}"), cells, list(read[r]), depths)]
        return rep
