"""Inside an inferential and a symmetric anchor model (Zhang et al. 2024, arXiv 2405.05409,
§4-5; docs/papers.md §3 Anchor functions: inferential solutions have lower complexity, the
anchor embeddings being arranged so that composition is nearly additive).

Two arms: a small initialization (large gamma) and a larger one (smaller gamma); where an arm
equals a cell of `anchors-init-phase` it has the same content-addressed run id, so a shared
`runs` folder trains it once (README). The analysis groups runs by their *measured* solution
type, not by arm, and compares the inferential with the symmetric models:

  - cosine similarity of the anchor embeddings and their 2-D PCA projection;
  - attention of the read-out (last) position to the key, anchor 1, anchor 2, other items;
  - additivity: the final read-out representation averaged per pair, fitted as
    c + u[a1] + v[a2] on the compositional pairs; how well that predicts the held-out pair
    (relative residual) and how close the held-out pair sits to its mirror (3,4).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.studies.anchors.analysis import (mechanism_figures, mechanism_record,
                                                mechanism_tables)
from reasonlab.studies.anchors.common import DEPTH, GRID, PHASE_SEEDS, cell, recipe
from reasonlab.studies.anchors.verdicts import MIN_ORDER_GAP, MIN_RESID_GAP, group_gap_verdict
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid


def arms(scale: Scale) -> dict[str, dict[str, Any]]:
    """The two ends of the phase study's grid at DEPTH (at cpu scale its runs, shared)."""
    gammas = GRID[scale][0]
    return {"small init": cell(max(gammas), DEPTH[scale]),
            "large init": cell(min(gammas), DEPTH[scale])}


@STUDIES.register("anchors-mechanism")
class AnchorsMechanism(Study):
    title = "Anchor functions: mechanisms of inferential vs symmetric solutions"
    # measured at 3 seeds: 4 s; every run is a depth-2 cell of anchors-init-phase, so at
    # PHASE_SEEDS nothing trains (analysis only, estimated under 1 min); not yet measured
    default_seeds = {"cpu": PHASE_SEEDS, "paper": PHASE_SEEDS}
    unit = ("one run per training seed (a depth-2 cell of anchors-init-phase), grouped by its "
            "measured solution type")
    cpu_after = ("anchors-init-phase",)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(recipe(scale), arms(scale), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        recs = [mechanism_record(spec, result, out) for spec, result in results]
        rep = mechanism_tables(Report(self.title, out).recipe(results), recs)
        rep.figures += mechanism_figures(recs, out)
        inf = [r for r in recs if r["verdict"] == "inferential"]
        sym = [r for r in recs if r["verdict"] == "symmetric"]
        rep.verdicts = [group_gap_verdict(self.claim("additive"), inf, sym, "heldout_resid", -1,
                                          MIN_RESID_GAP),
                        group_gap_verdict(self.claim("embedding"), inf, sym, "order_corr", +1,
                                          MIN_ORDER_GAP)]
        return rep


