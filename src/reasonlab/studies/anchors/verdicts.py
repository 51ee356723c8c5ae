"""The anchor studies' verdict rules (Zhang et al. 2024; docs/papers.md §3 Anchor functions),
tested on hand-made numbers in tests/unit/test_verdicts.py. Thresholds are constants fixed
before any run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from reasonlab.studies.anchors.analysis import mean_of, share_of
from reasonlab.studies.anchors.common import CLAIM_MAJORITY
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import (above, below, gain_status, requires, threshold_verdict,
                                            verdict)


def majority_verdict(claim: Claim, recs: list[dict[str, Any]], kind: str, other: str,
                     where: str, what: str) -> Verdict:
    """Reproduced when more than CLAIM_MAJORITY of the runs `recs` (one cell column of the
    phase grid) have the solution type `kind`; the evidence gives the mean fractions of `kind`
    and `other` beside it."""
    share = share_of(recs, kind)
    return threshold_verdict(
        claim, share, f"{where}: {share:.2f} of {len(recs)} {what} {kind} (needs > "
        f"{CLAIM_MAJORITY}); mean {kind} fraction {mean_of(recs, kind):.3f}, {other} "
        f"{mean_of(recs, other):.3f}", above(CLAIM_MAJORITY))


def phase_verdicts(claim: Callable[[str], Claim], cells, gammas, depths) -> list[Verdict]:
    """Fixed before results: each claim (by key) looks at one column/corner of the grid."""
    g_hi, g_lo, L_hi = max(gammas), min(gammas), max(depths)
    hi = [r for L in depths for r in cells[g_hi, L]]
    lo_fit = [r for L in depths for r in cells[g_lo, L] if r["verdict"] != "unfit"]
    corner = cells[g_lo, L_hi]
    other = cells[g_hi, L_hi]
    out = [majority_verdict(claim("small-init"), hi, "inferential", "symmetric",
                            f"gamma={g_hi:g}", "runs")]
    if lo_fit:
        out.append(majority_verdict(claim("large-init"), lo_fit, "symmetric", "inferential",
                                    f"gamma={g_lo:g}", "fitted runs"))
    else:
        out.append(Verdict(claim("large-init"), "inconclusive", f"gamma={g_lo:g}: 0 of "
                           f"{len(depths) * len(cells[g_lo, depths[0]])} runs fitted"))
    u_lo, u_hi = share_of(corner, "unfit"), share_of(other, "unfit")
    ok = u_lo > CLAIM_MAJORITY and u_lo > u_hi
    out.append(verdict(claim("no-fit"), ok,
                       f"depth {L_hi}: unfit share {u_lo:.2f} at gamma={g_lo:g} vs {u_hi:.2f} at "
                       f"gamma={g_hi:g} (needs > {CLAIM_MAJORITY} and larger); seen acc "
                       f"{mean_of(corner, 'seen_acc'):.3f} vs {mean_of(other, 'seen_acc'):.3f}"))
    return out


MIN_RESID_GAP = 0.1
"""anchors-mechanism: how much smaller the held-out additive residual of inferential models
must be."""
MIN_ORDER_GAP = 0.2
"""anchors-mechanism: how much larger the embeddings' shift-order correlation of inferential
models must be."""


def group_gap_verdict(claim: Claim, inf: list[dict[str, Any]], sym: list[dict[str, Any]], key: str,
                      sign: int, gap: float) -> Verdict:
    """Inferential vs symmetric runs (grouped by measured solution type): their means of `key`
    must differ by more than `gap` in the direction `sign` (-1: inferential lower)."""
    if not inf or not sym:
        return Verdict(claim, "inconclusive", f"needs at least one inferential and one "
                       f"symmetric run; got {len(inf)} inferential, {len(sym)} symmetric")
    a = float(np.mean([r[key] for r in inf]))
    b = float(np.mean([r[key] for r in sym]))
    diff = sign * (a - b)
    ev = (f"{key}: inferential models {a:.3f} (n={len(inf)}), symmetric {b:.3f} "
          f"(n={len(sym)}); {'lower' if sign < 0 else 'higher'} by {diff:+.3f}, needs > {gap}")
    return verdict(claim, diff > gap, ev)


def effect_verdict(claim: Claim, recs: list[dict[str, Any]], field: str, levels: list[float],
                   min_gain: float) -> Verdict:
    """Does raising `field` from its lowest to its highest level raise the mean inferential
    fraction? gain_status of the rise with the paired SE (runs matched by the other factors
    and seed, in record order)."""
    lo = [r for r in recs if r[field] == levels[0]]
    hi = [r for r in recs if r[field] == levels[-1]]
    a, b = mean_of(lo, "inferential"), mean_of(hi, "inferential")
    d = np.array([r["inferential"] for r in hi]) - np.array([r["inferential"]
                                                             for r in lo])
    se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0
    ev = (f"mean inferential fraction {a:.3f} at {field}={levels[0]:g} -> {b:.3f} at "
          f"{levels[-1]:g} (gain {b - a:+.3f}, paired SE {se:.3f}; needs > {min_gain} "
          f"and > 2 SE); symmetric {mean_of(lo, 'symmetric'):.3f} -> "
          f"{mean_of(hi, 'symmetric'):.3f}")
    return Verdict(claim, gain_status(b - a, se, min_gain, len(d)), ev)


def undoes_verdict(claim: Claim, without: list[dict[str, Any]], with_: list[dict[str, Any]]
                   ) -> Verdict:
    """A layer undoes small initialization: reproduced when the runs without it are mostly
    inferential (share > CLAIM_MAJORITY) and those with it are not (< CLAIM_MAJORITY);
    inconclusive when even the runs without it have no inferential majority."""
    sa, sb = share_of(without, "inferential"), share_of(with_, "inferential")
    ev = (f"inferential share {sa:.2f} without the embedding LayerNorm vs {sb:.2f} with it "
          f"(needs > {CLAIM_MAJORITY} without, < {CLAIM_MAJORITY} with); " + "; ".join(
              f"{what} {mean_of(without, k):.3f} vs {mean_of(with_, k):.3f}" for what, k in (
                  ("mean inferential fraction", "inferential"),
                  ("layer-1 input RMS", "layer1_rms"), ("seen acc", "seen_acc"))))
    return requires(threshold_verdict(claim, sb, ev, below(CLAIM_MAJORITY)), sa > CLAIM_MAJORITY,
                    "without it small init gives no inferential majority either")
