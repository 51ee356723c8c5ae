"""Phase diagram of solution types over initialization rate gamma x depth (Zhang et al. 2024,
arXiv 2405.05409, §3, the phase diagram figure).

Every cell (gamma, depth) trains several seeds on the anchor task; each run's held-out pair
(4,3) is classified as inferential / symmetric / neither / unfit (analysis/solutions.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.analysis.solutions import FIT_THRESHOLD, MAJORITY, SOLUTION_TYPES
from reasonlab.report import plot_heatmap, table
from reasonlab.studies.anchors_common import (
    SCALES, anchor_config, equivalent_gamma, run_solution)
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict

PAPER_GAMMAS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
"""The paper's grid at d_model 400 (§3)."""
GRID: dict[Scale, tuple[tuple[float, ...], tuple[int, ...]]] = {
    "smoke": ((0.3, 0.8), (1, 2)),
    # The ends of the paper's grid moved to d_model 64 so that the initial scale relative to
    # 1/sqrt(d_in), d_in^(0.5 - gamma), spans the paper's 400^0.2 = 3.3 .. 400^-0.3 = 0.17:
    # gamma 0.21 and 0.93 (`equivalent_gamma`). The inner points are left out for the budget
    # (12 runs of 2400 steps); no claim reads them.
    "cpu": (tuple(equivalent_gamma(g, SCALES["cpu"]["model"]["d_model"])
                  for g in (min(PAPER_GAMMAS), max(PAPER_GAMMAS))), (2, 3)),
    "paper": (PAPER_GAMMAS, (2, 3, 4, 5, 6)),
}
"""(gammas, depths) per scale."""

CLAIM_MAJORITY = 0.5
"""A claim about a set of runs holds when more than this fraction of them has the type."""


@STUDIES.register("anchors-init-phase")
class AnchorsInitPhase(Study):
    name = "anchors-init-phase"
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
    default_seeds = {"smoke": 1, "cpu": 3, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        gammas, depths = GRID[scale]
        return [RunSpec(f"gamma={g} L={L}", s, anchor_config(scale, s, g, L))
                for L in depths for g in gammas for s in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        cells = phase_cells(results, out)
        gammas = sorted({g for g, _ in cells})
        depths = sorted({L for _, L in cells})
        rep = Report(self.title)
        rep.sections.append(phase_section(cells, gammas, depths))
        rep.figures += phase_figures(cells, gammas, depths, out)
        rep.verdicts = phase_verdicts(self.claims, cells, gammas, depths)
        return rep


def phase_cells(results: list[tuple[RunSpec, dict[str, Any]]], out: Path
                ) -> dict[tuple[float, int], list[dict[str, Any]]]:
    """(gamma, depth) -> one record per seed: verdict and fractions."""
    cells: dict[tuple[float, int], list[dict[str, Any]]] = {}
    for spec, result in results:
        m = spec.config.model
        sol = run_solution(spec, result, out)
        cells.setdefault((m.init.gamma, m.n_layers), []).append(
            {"seed": spec.seed, **sol.to_json()})
    return cells


def _mean(recs: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([r[key] for r in recs]))


def _majority_type(recs: list[dict[str, Any]]) -> str:
    counts = {t: sum(r["verdict"] == t for r in recs) for t in SOLUTION_TYPES}
    return max(SOLUTION_TYPES, key=lambda t: counts[t])


def _counts(recs: list[dict[str, Any]]) -> str:
    return " ".join(f"{t[:3]}{n}" for t in SOLUTION_TYPES
                    if (n := sum(r["verdict"] == t for r in recs)))


def phase_section(cells, gammas, depths) -> str:
    header = ["depth", "gamma", "verdicts (seeds)", "inferential", "symmetric", "neither",
              "seen acc"]
    rows = [[str(L), f"{g:g}", _counts(cells[g, L])] +
            [f"{_mean(cells[g, L], k):.3f}" for k in ("inferential", "symmetric", "neither",
                                                      "seen_acc")]
            for L in depths for g in gammas]
    return (f"## Phase diagram (held-out pair (4,3); means over seeds)\n\nVerdict per run: "
            f"unfit if seen-pair accuracy < {FIT_THRESHOLD}, else inferential / symmetric if "
            f"that answer is >= {MAJORITY} of the held-out predictions, else neither "
            "(counts: inf/sym/nei/unf).\n\n" + table(header, rows))


def phase_figures(cells, gammas, depths, out: Path) -> list[tuple[str, str]]:
    xl, yl = [f"{g:g}" for g in gammas], [str(L) for L in depths]
    code = {t: i for i, t in enumerate(SOLUTION_TYPES)}
    kinds = np.array([[code[_majority_type(cells[g, L])] for g in gammas] for L in depths])
    annot = [[f"{_majority_type(cells[g, L])[:3]}\n{_counts(cells[g, L])}" for g in gammas]
             for L in depths]
    plot_heatmap(kinds / (len(SOLUTION_TYPES) - 1), out / "phase_type.png",
                 "majority solution type", xl, yl,
                 "initialization rate gamma", "depth", cmap="coolwarm", annot=annot)
    figs = [("phase_type.png", "Majority solution type per (gamma, depth) (colour: 0 "
             "inferential, 1/3 symmetric, 2/3 neither, 1 unfit; ties go to the earlier type); "
             "cell text: type and per-seed counts")]
    for key in ("inferential", "symmetric", "seen_acc"):
        vals = np.array([[_mean(cells[g, L], key) for g in gammas] for L in depths])
        plot_heatmap(vals, out / f"phase_{key}.png", f"mean {key} fraction" if key !=
                     "seen_acc" else "mean seen-pair test accuracy", xl, yl,
                     "initialization rate gamma", "depth")
        figs.append((f"phase_{key}.png", f"Mean {key.replace('_', ' ')} per (gamma, depth)"))
    return figs


def _share(recs: list[dict[str, Any]], kind: str) -> float:
    return sum(r["verdict"] == kind for r in recs) / len(recs) if recs else float("nan")


def phase_verdicts(claims, cells, gammas, depths) -> list[Verdict]:
    """Fixed before results: each claim looks at one column/corner of the grid."""
    g_hi, g_lo, L_hi = max(gammas), min(gammas), max(depths)
    hi = [r for L in depths for r in cells[g_hi, L]]
    lo_fit = [r for L in depths for r in cells[g_lo, L] if r["verdict"] != "unfit"]
    corner = cells[g_lo, L_hi]
    other = cells[g_hi, L_hi]
    out = []
    share = _share(hi, "inferential")
    out.append(Verdict(claims[0], "reproduced" if share > CLAIM_MAJORITY else "not reproduced",
                       f"gamma={g_hi:g}: {share:.2f} of {len(hi)} runs inferential (needs > "
                       f"{CLAIM_MAJORITY}); mean inferential fraction "
                       f"{_mean(hi, 'inferential'):.3f}, symmetric {_mean(hi, 'symmetric'):.3f}"))
    if lo_fit:
        share = _share(lo_fit, "symmetric")
        out.append(Verdict(claims[1], "reproduced" if share > CLAIM_MAJORITY
                           else "not reproduced",
                           f"gamma={g_lo:g}: {share:.2f} of {len(lo_fit)} fitted runs symmetric "
                           f"(needs > {CLAIM_MAJORITY}); mean symmetric fraction "
                           f"{_mean(lo_fit, 'symmetric'):.3f}, inferential "
                           f"{_mean(lo_fit, 'inferential'):.3f}"))
    else:
        out.append(Verdict(claims[1], "inconclusive", f"gamma={g_lo:g}: 0 of "
                           f"{len(depths) * len(cells[g_lo, depths[0]])} runs fitted"))
    u_lo, u_hi = _share(corner, "unfit"), _share(other, "unfit")
    ok = u_lo > CLAIM_MAJORITY and u_lo > u_hi
    out.append(Verdict(claims[2], "reproduced" if ok else "not reproduced",
                       f"depth {L_hi}: unfit share {u_lo:.2f} at gamma={g_lo:g} vs {u_hi:.2f} at "
                       f"gamma={g_hi:g} (needs > {CLAIM_MAJORITY} and larger); seen acc "
                       f"{_mean(corner, 'seen_acc'):.3f} vs {_mean(other, 'seen_acc'):.3f}"))
    return out
