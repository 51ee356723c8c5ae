"""The anchor studies' verdict rules (Zhang et al. 2024; docs/papers.md §3 Anchor functions).

The unit. Every rule reads runs: one run per training seed of a cell (a (gamma, depth) cell of
the phase grid, an (lr, weight decay) cell, a model structure), each classified on the held-out
pair (4,3) as inferential, symmetric, neither or unfit (analysis/solutions.py). A seed draws its
run's data, initialization and example order, so runs of different seeds are independent. A
claim about a column of the grid (both depths at one gamma) pools that column's runs, each one
unit; each depth has seeds of its own (anchors-init-phase `runs`), so no two pooled runs share
a seed. Two cells compared as arms (two gammas at one depth, the model with and without the
embedding LayerNorm) do share seeds: their runs share the seed's data and initialization draws
(scaled), and an unpaired comparison of such arms is conservative when their outcomes
correlate positively. Where the design crosses two factors over each seed (learning rate x
weight decay), the seed is the unit and the rule pairs by it.

The decisions, one-sided at 2.5% each (kit/stats.py):
  - a share of runs is a majority when its exact (Clopper-Pearson) lower bound is above
    CLAIM_MAJORITY (stats.majority): 6 of 6 runs is the least that clears one half;
  - one share is larger than another when the exact unconditional interval of their difference
    lies above zero (_support/shares.py; 3 of 3 against 0 of 3 is the least that clears it);
  - a mean (a fraction, a mechanism measure) is decided by its t interval against the claim's
    minimum effect (stats.better_by).
Preconditions (the runs the claim reads fit the seen pairs) are stated with `requires`.
Thresholds are constants fixed before any run. Calibrated by simulation in
anchors/calibration.py; unit-tested on noisy numbers in tests/unit/studies/anchors/.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from reasonlab.report import pm
from reasonlab.studies.anchors.analysis import mean_of, type_counts
from reasonlab.studies.anchors.common import CLAIM_MAJORITY
from reasonlab.studies.anchors._support.shares import more_often, share_difference
from reasonlab.studies.kit import sequential, stats
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.stats import Decision
from reasonlab.studies.kit.verdicts import all_of, decided, requires

Run = Mapping[str, Any]

MIN_FITTED = 3
"""Fitted runs the large-init share needs before it is read at all (the kit's minimum of
replication units: fewer decide nothing)."""


def count(recs: Sequence[Run], kind: str) -> int:
    """Runs whose solution type is `kind`."""
    return sum(r["verdict"] == kind for r in recs)


def fitted(recs: Sequence[Run]) -> list[Run]:
    """The runs that fit the seen pairs (every type but unfit)."""
    return [r for r in recs if r["verdict"] != "unfit"]


def means_text(recs: Sequence[Run], keys: Sequence[str]) -> str:
    """'mean inferential fraction 0.320, symmetric 0.248' (nothing for no runs)."""
    if not recs:
        return "no runs"
    return "mean " + ", ".join(f"{k}{' fraction' if i == 0 else ''} {mean_of(list(recs), k):.3f}"
                               for i, k in enumerate(keys))


def majority_of(recs: Sequence[Run], kind: str, what: str) -> Decision:
    """More than CLAIM_MAJORITY of the runs have the type `kind`, by the share's exact lower
    bound (stats.majority; fewer than 3 runs decide nothing)."""
    return stats.majority(stats.proportion(count(recs, kind), len(recs), what), CLAIM_MAJORITY)


def majority_verdict(claim: Claim, recs: Sequence[Run], kind: str, other: str, where: str,
                     what: str) -> Verdict:
    """More than CLAIM_MAJORITY of the runs `recs` have the solution type `kind` (Zhang et al.
    2024 §3: a region of the phase diagram "gives" a solution type): reproduced when the exact
    lower bound of the share is above it, not reproduced when the upper bound is at or below
    it. The runs of a column of the grid are pooled, each one unit; the evidence gives the mean
    fractions of `kind` and `other` and the per-run types beside it."""
    d = majority_of(recs, kind, f"share of {what} {kind}")
    types = f" ({type_counts(list(recs))})" if recs else ""
    ev = f"{where}: {count(recs, kind)} of {len(recs)} {what} {kind}{types}; " + means_text(
        recs, (kind, other))
    return decided(claim, d, ev)


def phase_verdicts(claim: Callable[[str], Claim], cells: Mapping[tuple[float, int], list[Run]],
                   gammas: Sequence[float], depths: Sequence[int]) -> list[Verdict]:
    """The phase diagram's three claims (Zhang et al. 2024 §3), each on the cells fixed here
    before any result:
      - small-init: the runs at the largest gamma, both depths pooled, are mostly inferential;
      - large-init: the FITTED runs at the smallest gamma, both depths pooled, are mostly
        symmetric (an unfit run has no solution type); needs at least MIN_FITTED fitted runs;
      - no-fit: at the deepest depth, the runs at the smallest gamma are mostly unfit, and
        more often unfit than the runs at the largest gamma (the same depth: only the
        initialization differs), by the exact interval of the difference of the two shares."""
    g_hi, g_lo, deep = max(gammas), min(gammas), max(depths)
    small = [r for L in depths for r in cells[g_hi, L]]
    large = [r for L in depths for r in cells[g_lo, L]]
    large_fit = fitted(large)
    pooled = f" (depths {', '.join(map(str, depths))} pooled, one unit per run)"
    out = [majority_verdict(claim("small-init"), small, "inferential", "symmetric",
                            f"gamma={g_hi:g}{pooled}", "runs")]
    v = majority_verdict(claim("large-init"), large_fit, "symmetric", "inferential",
                         f"gamma={g_lo:g}{pooled}", "fitted runs")
    # each unit to come adds one run per depth at the smallest gamma: out of reach when all
    # of them fitting leaves fewer than MIN_FITTED (deterministic curtailment)
    v = requires(v, len(large_fit) >= MIN_FITTED,
                 f"{len(large_fit)} of {len(large)} runs at gamma={g_lo:g} fit the seen pairs; "
                 f"at least {MIN_FITTED} fitted runs decide",
                 reachable=len(large_fit) + sequential.to_come() * len(depths) >= MIN_FITTED)
    out.append(v if large_fit else replace(v, effect=None))  # no share of no runs
    out.append(no_fit_verdict(claim("no-fit"), cells[g_lo, deep], cells[g_hi, deep],
                              f"depth {deep}", (g_lo, g_hi)))
    return out


def no_fit_verdict(claim: Claim, large: Sequence[Run], small: Sequence[Run], where: str,
                   gammas: tuple[float, float]) -> Verdict:
    """Very large initialization fails to fit (Zhang et al. 2024 §3): the runs at the large
    initialization are mostly unfit (the share's exact lower bound above CLAIM_MAJORITY) AND
    unfit more often than the runs at the small initialization of the same depth (the exact
    interval of the difference above 0). Both must hold (intersection-union: each part at
    2.5% keeps the whole there); the verdict's effect is the difference."""
    g_lo, g_hi = gammas
    k_lo, k_hi = count(large, "unfit"), count(small, "unfit")
    gap = share_difference(k_lo, len(large), k_hi, len(small),
                           f"unfit share gamma={g_lo:g} minus gamma={g_hi:g}")
    seen = (f"seen acc {pm([r['seen_acc'] for r in large])} vs "
            f"{pm([r['seen_acc'] for r in small])}" if large and small else "")
    parts = {
        "mostly unfit": decided(claim, majority_of(large, "unfit", f"unfit share at gamma="
                                                   f"{g_lo:g}"),
                                f"{where}: {k_lo} of {len(large)} runs unfit at gamma={g_lo:g}"),
        "more often than small init": decided(
            claim, more_often(gap), f"{where}: unfit {k_lo} of {len(large)} at gamma={g_lo:g} "
            f"vs {k_hi} of {len(small)} at gamma={g_hi:g}; {seen}")}
    return replace(all_of(claim, parts), effect=gap)


MIN_RESID_GAP = 0.1
"""anchors-mechanism: how much smaller the held-out additive residual of inferential models
must be."""
MIN_ORDER_GAP = 0.2
"""anchors-mechanism: how much larger the embeddings' shift-order correlation of inferential
models must be."""


def group_gap_verdict(claim: Claim, inf: Sequence[Run], sym: Sequence[Run], key: str,
                      sign: int, gap: float) -> Verdict:
    """Inferential against symmetric models (Zhang et al. 2024 §4-5), the runs grouped by their
    MEASURED solution type, one unit per run: the difference of their means of `key`, in the
    direction `sign` (-1: inferential lower), decided by its Welch interval against `gap`
    (stats.better_by: the lower bound above 0 and the difference at least `gap`). Fewer than 3
    runs of either type decide nothing (too few units)."""
    a = np.array([r[key] for r in inf], float)
    b = np.array([r[key] for r in sym], float)
    ev = (f"{key}, runs grouped by their measured solution type: inferential models "
          f"{pm(a) if len(a) else '-'} (n = {len(a)}), symmetric {pm(b) if len(b) else '-'} "
          f"(n = {len(b)}); {'lower' if sign < 0 else 'higher'} in inferential models needed")
    if not len(a) or not len(b):
        return Verdict(claim, "inconclusive", ev, None,
                       f"too few units ({len(a)} inferential / {len(b)} symmetric runs; at "
                       f"least {stats.MIN_UNITS} of each decide, so run more seeds)")
    est = stats.difference(sign * a, sign * b, f"inferential {'below' if sign < 0 else 'above'}"
                           " symmetric")
    return decided(claim, stats.better_by(est, gap), ev)


def per_seed(recs: Sequence[Run], key: str, within: str) -> dict[int, float]:
    """seed -> the mean of `key` over its runs (the levels of `within`), checking that every
    seed has the same levels of `within` (a balanced design: the mean is over matched runs)."""
    levels = {s: sorted(r[within] for r in recs if r["seed"] == s) for s in
              sorted({r["seed"] for r in recs})}
    if len({tuple(v) for v in levels.values()}) > 1:
        raise ValueError(f"unbalanced runs: levels of {within} per seed {levels}")
    return {s: float(np.mean([r[key] for r in recs if r["seed"] == s])) for s in levels}


def fit_decision(recs: Sequence[Run], what: str) -> Decision:
    """Most of the runs fit the seen pairs (the fitted share's exact lower bound above
    CLAIM_MAJORITY)."""
    return stats.majority(stats.proportion(len(fitted(recs)), len(recs), what), CLAIM_MAJORITY)


def fit_text(recs: Sequence[Run], d: Decision) -> str:
    return (f"{len(fitted(recs))} of {len(recs)} fit the seen pairs (lower bound "
            f"{d.estimate.lo:.2f}, needs > {CLAIM_MAJORITY:g})")


def effect_verdict(claim: Claim, recs: Sequence[Run], field: str, levels: Sequence[float],
                   min_gain: float, within: str) -> Verdict:
    """Raising `field` from its lowest to its highest level raises the mean inferential fraction
    (Zhang et al. 2024 §3: a larger learning rate / weight decay pushes towards inferential
    solutions). The unit is the seed: per seed, the mean inferential fraction of its runs at a
    level (over the levels of the other factor `within`, whose runs share that seed's data and
    initialization), paired across the two levels by seed (stats.paired), decided by
    stats.better_by(min_gain). Precondition: at both levels most runs fit the seen pairs (an
    unfit run's held-out answers are no solution type; a rise that only reflects fitting is
    not the claim)."""
    lo = [r for r in recs if r[field] == levels[0]]
    hi = [r for r in recs if r[field] == levels[-1]]
    a, b = per_seed(hi, "inferential", within), per_seed(lo, "inferential", within)
    if a.keys() != b.keys():
        raise ValueError(f"runs at {field}={levels[0]:g} and {levels[-1]:g} have different "
                         f"seeds: {sorted(b)} and {sorted(a)}")
    seeds = sorted(a)
    est = stats.paired([a[s] for s in seeds], [b[s] for s in seeds],
                       f"rise of the mean inferential fraction, {field} {levels[0]:g} -> "
                       f"{levels[-1]:g} (per seed, paired)")
    fit_lo, fit_hi = (fit_decision(rs, f"fitted share at {field}={x:g}")
                      for rs, x in ((lo, levels[0]), (hi, levels[-1])))
    ev = (f"mean inferential fraction {mean_of(lo, 'inferential'):.3f} at {field}="
          f"{levels[0]:g} -> {mean_of(hi, 'inferential'):.3f} at {levels[-1]:g}, {len(seeds)} "
          f"seeds x {len(lo) // max(len(seeds), 1)} levels of {within}; symmetric "
          f"{mean_of(lo, 'symmetric'):.3f} -> {mean_of(hi, 'symmetric'):.3f}; runs at "
          f"{field}={levels[0]:g}: {fit_text(lo, fit_lo)}; at {levels[-1]:g}: "
          f"{fit_text(hi, fit_hi)}")
    v = decided(claim, stats.better_by(est, min_gain), ev)
    if stats.too_few(est) is not None:  # too few seeds says it all
        return v
    failing = [f"{field}={x:g}: {fit_text(rs, d)}" for rs, x, d in
               ((lo, levels[0], fit_lo), (hi, levels[-1], fit_hi)) if d.status != "reproduced"]
    # a sequential run's futility stop: at one level the fitted share confidently at most
    # one half (kit sequential.futile)
    unfit = sequential.futile(lambda: any(fit_decision(rs, "fitted share").status
                                          == "not reproduced" for rs in (lo, hi)))
    return requires(v, not failing, "most runs fit the seen pairs at both levels; "
                    + "; ".join(failing), reachable=not unfit)


def undoes_verdict(claim: Claim, without: Sequence[Run], with_: Sequence[Run]) -> Verdict:
    """A LayerNorm on the embeddings undoes small initialization (our finding, on Zhang et al.
    2024 §3): the inferential share of the runs without it is larger than with it, by the exact
    interval of the difference (_support/shares.py), one unit per run. Preconditions: the runs
    with it fit the seen pairs (most of them, by the exact bound: an unfit run is not inferential
    whatever the LayerNorm does), and without it small initialization gives an inferential
    majority (by the exact bound: there is something to undo)."""
    k_a, k_b = count(without, "inferential"), count(with_, "inferential")
    gap = share_difference(k_a, len(without), k_b, len(with_),
                           "inferential share without minus with the embedding LayerNorm")
    ev = (f"inferential {k_a} of {len(without)} runs without the embedding LayerNorm "
          f"({type_counts(list(without))}) vs {k_b} of {len(with_)} with it "
          f"({type_counts(list(with_))}); " + "; ".join(
              f"{what} {pm([r[k] for r in without])} vs {pm([r[k] for r in with_])}"
              for what, k in (("mean inferential fraction", "inferential"),
                              ("layer-1 input RMS", "layer1_rms"), ("seen acc", "seen_acc"))))
    v = decided(claim, more_often(gap), ev)
    if stats.too_few(gap) is not None:  # too few runs says it all
        return v
    fits = fit_decision(with_, "fitted share with the embedding LayerNorm")
    premise = majority_of(without, "inferential", "inferential share without it")
    failing = [why for ok, why in (
        (fits.status == "reproduced", f"with the embedding LayerNorm {fit_text(with_, fits)}"),
        (premise.status == "reproduced",
         f"without it small init gives no inferential majority either ({k_a} of "
         f"{len(without)}, lower bound {premise.estimate.lo:.2f}, needs > {CLAIM_MAJORITY:g})"))
        if not ok]
    return requires(v, not failing, "; ".join(failing))
