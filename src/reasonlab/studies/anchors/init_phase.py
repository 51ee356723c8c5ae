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
from reasonlab.studies.anchors.common import PHASE, by_reading, cell, phase_gammas, recipe
from reasonlab.studies.anchors.verdicts import phase_verdicts
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.kit.claims import family_claims


@STUDIES.register("anchors-init-phase")
class AnchorsInitPhase(Study):
    title = "Anchor functions: solution type over initialization rate x depth"
    claims_by_reading = by_reading(family_claims(__package__)["anchors-init-phase"])
    claims = sum(claims_by_reading.values(), ())
    cpu_minutes = 10.6  # measured: 636 s, both readings (24 runs x 2400 steps), 2 workers

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        gammas = sorted(set(sum(phase_gammas(scale).values(), ())))
        return grid(recipe(scale), {f"gamma={g} L={L}": cell(g, L) for L in PHASE[scale][1]
                                    for g in gammas}, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        cells = phase_cells(results, out)
        read = phase_gammas(results.scale)
        gammas = sorted({g for g, _ in cells})
        depths = sorted({L for _, L in cells})
        rep = Report(self.title, out).recipe(results)
        rep.sections.append(phase_section(cells, gammas, depths, read))
        rep.figures += phase_figures(cells, gammas, depths, out, read)
        rep.verdicts = [v for r in self.claims_by_reading for v in phase_verdicts(
            lambda key, r=r: self.claim(f"{key}.{r}"), cells, list(read[r]), depths)]
        return rep
