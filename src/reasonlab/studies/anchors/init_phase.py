"""Phase diagram of solution types over initialization rate gamma x depth (Zhang et al. 2024,
arXiv 2405.05409, §3, the phase diagram figure).

Every cell (gamma, depth) trains several seeds on the anchor task; each run's held-out pair
(4,3) is classified as inferential / symmetric / neither / unfit (analysis/solutions.py).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.anchors.analysis import phase_cells, phase_figures, phase_section
from reasonlab.studies.anchors.common import GRID, cell, recipe
from reasonlab.studies.anchors.verdicts import phase_verdicts
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Study, grid


@STUDIES.register("anchors-init-phase")
class AnchorsInitPhase(Study):
    title = "Anchor functions: solution type over initialization rate x depth"
    claims = (
        Claim("small-init", "Small initialization (large gamma) gives inferential solutions on "
              "the held-out pair (4,3)", "Zhang et al. 2024, §3 phase diagram"),
        Claim("large-init", "Large initialization (small gamma) gives symmetric solutions "
              "(4,3) -> x-6", "Zhang et al. 2024, §3 phase diagram"),
        Claim("no-fit", "Very large initialization in deep models fails to fit the seen pairs",
              "Zhang et al. 2024, §3 phase diagram"),
    )
    cpu_minutes = 10  # measured: 598 s (12 runs x 2400 steps)
    # on one busy core, two runs side by side: 10-15 min (README)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        gammas, depths = GRID[scale]
        return grid(recipe(scale), {f"gamma={g} L={L}": cell(g, L) for L in depths
                                    for g in gammas}, seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        cells = phase_cells(results, out)
        gammas = sorted({g for g, _ in cells})
        depths = sorted({L for _, L in cells})
        rep = Report(self.title, out).recipe(results)
        rep.sections.append(phase_section(cells, gammas, depths))
        rep.figures += phase_figures(cells, gammas, depths, out)
        rep.verdicts = phase_verdicts(self.claim, cells, gammas, depths)
        return rep


