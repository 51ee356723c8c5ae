"""Two shares of runs compared exactly: the difference p1 - p2 of two independent binomial
proportions (k1 of n1 runs against k2 of n2 runs with a solution type) with its exact 95%
interval, and the decision "the first share is larger".

Why exact and unconditional. The anchor studies compare a handful of runs per arm (3-10), each
run a solution type; a normal (Wald) interval is far too narrow there, and Fisher's exact test,
which conditions on the total, cannot reject anything at 3 runs a side (3 of 3 against 0 of 3:
p = 1/20 one-sided, above the 2.5% every decision here uses). The exact unconditional interval
of Chan & Zhang (1999, "Test-based exact confidence intervals for the difference of two binomial
proportions", Biometrics 55:1202-1209) inverts two one-sided tests of p1 - p2 = delta, each at
ALPHA: outcomes are ordered by the score statistic of Miettinen & Nurminen (1985) and the tail
probability is maximized over the nuisance parameter p2 (Barnard's construction), so the
interval's coverage is at least 95% for every (p1, p2), whatever the arms' sizes. 3 of 3
against 0 of 3 gives max over p of p^3 (1-p)^3 = 1/64 < 2.5%: it decides at 3 runs a side.

The nuisance maximum is taken over a grid of NUISANCE_POINTS values of p2 (a smooth polynomial
in p2; the grid's shortfall is far below the 1000-draw resolution of the calibration tests,
which check the decision's error rate at its boundary, p1 = p2).

A kit candidate: stats.proportion covers one share; this is its two-share counterpart.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from scipy import special

from reasonlab.studies.kit import stats
from reasonlab.studies.kit.stats import MIN_UNITS, Decision, Estimate, alpha

NUISANCE_POINTS = 201
"""Grid of the nuisance p2 over which each tail probability is maximized."""
DELTA_STEP = 0.01
"""Coarse grid of delta on which the first accepted value is found, then refined by bisection."""
TIE = 1e-9
"""Outcomes whose statistic is within TIE of the observed one count as at least as extreme."""


def _score(x1: np.ndarray, n1: int, x2: np.ndarray, n2: int, delta: np.ndarray | float
           ) -> np.ndarray:
    """Miettinen-Nurminen score statistic of H0: p1 - p2 = delta for every outcome (x1, x2)
    (broadcast against delta), with the restricted maximum-likelihood p1, p2 of Farrington &
    Manning (1990, closed form of the cubic)."""
    p1, p2 = x1 / n1, x2 / n2
    theta = n2 / n1
    a = 1 + theta
    b = -(1 + theta + p1 + theta * p2 + delta * (theta + 2))
    c = delta * delta + delta * (2 * p1 + theta + 1) + p1 + theta * p2
    d = -p1 * delta * (1 + delta)
    v = b ** 3 / (3 * a) ** 3 - b * c / (6 * a * a) + d / (2 * a)
    u = np.sign(v) * np.sqrt(np.maximum(b * b / (3 * a) ** 2 - c / (3 * a), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        cosarg = np.where(u != 0, v / u ** 3, 0.0)
    w = (math.pi + np.arccos(np.clip(cosarg, -1.0, 1.0))) / 3
    r1 = np.clip(2 * u * np.cos(w) - b / (3 * a), 0.0, 1.0)
    r2 = np.clip(r1 - delta, 0.0, 1.0)
    var = r1 * (1 - r1) / n1 + r2 * (1 - r2) / n2
    num = p1 - p2 - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, num / np.sqrt(np.where(var > 0, var, 1.0)),
                     np.sign(num) * np.inf)
    return np.where(np.abs(num) < TIE, 0.0, z)


def _powers(p: np.ndarray, n: int) -> np.ndarray:
    """p^0 .. p^n along a new last axis (products, not pow: exact 0^0 = 1 and fast)."""
    out = np.ones((*p.shape, n + 1))
    out[..., 1:] = np.cumprod(np.broadcast_to(p[..., None], (*p.shape, n)), axis=-1)
    return out


def _pmf(n: int, p: np.ndarray) -> np.ndarray:
    """Binomial probabilities [..., n + 1] at the probabilities p [...]."""
    return special.comb(n, np.arange(n + 1)) * _powers(p, n) * _powers(1 - p, n)[..., ::-1]


def _p_upper(k1: int, n1: int, k2: int, n2: int, deltas: np.ndarray) -> np.ndarray:
    """Exact unconditional p-values of H0: p1 - p2 <= delta against p1 - p2 > delta, one per
    delta: the largest probability, over the nuisance p2, of an outcome whose score is at least
    the observed one."""
    deltas = np.asarray(deltas, float)[:, None, None]  # [D, 1, 1]
    x1, x2 = np.meshgrid(np.arange(n1 + 1), np.arange(n2 + 1), indexing="ij")
    z = _score(x1, n1, x2, n2, deltas)  # [D, n1 + 1, n2 + 1]
    extreme = (z >= z[:, k1:k1 + 1, k2:k2 + 1] - TIE).astype(float)
    t = np.linspace(0.0, 1.0, NUISANCE_POINTS)
    lo, hi = np.maximum(0.0, -deltas[:, 0, 0]), np.minimum(1.0, 1.0 - deltas[:, 0, 0])
    p2 = lo[:, None] + t[None, :] * (hi - lo)[:, None]  # [D, G]: the feasible p2 per delta
    p1 = np.clip(p2 + deltas[:, :, 0], 0.0, 1.0)
    tail = ((_pmf(n1, p1) @ extreme) * _pmf(n2, p2)).sum(axis=-1)  # [D, G]
    return tail.max(axis=1)


def lower_bound(k1: int, n1: int, k2: int, n2: int) -> float:
    """The exact one-sided (1 - alpha()) lower bound of p1 - p2: the smallest delta that the
    upper-tail test does not reject (on a grid from -1 in steps of DELTA_STEP, then bisection
    to 1e-4 between the last rejected and the first accepted value). alpha() is ALPHA, or a
    sequential look's nominal level (kit/sequential.py)."""
    return _lower_bound(k1, n1, k2, n2, alpha())


@cache
def _lower_bound(k1: int, n1: int, k2: int, n2: int, level: float) -> float:
    grid = np.round(np.arange(-1.0, 1.0 + DELTA_STEP / 2, DELTA_STEP), 10)  # 0 exactly
    accepted = np.flatnonzero(_p_upper(k1, n1, k2, n2, grid) > level)
    if not len(accepted):
        return 1.0
    if accepted[0] == 0:
        return -1.0
    lo, hi = float(grid[accepted[0] - 1]), float(grid[accepted[0]])  # rejected, accepted
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _p_upper(k1, n1, k2, n2, np.array([mid]))[0] <= level else (
            lo, mid)
    return lo


def share_difference(k1: int, n1: int, k2: int, n2: int, what: str = "difference of shares"
                     ) -> Estimate:
    """k1/n1 - k2/n2 over independent runs with its exact (Chan-Zhang) 95% interval; `n` is the
    runs per arm. An arm with no runs gives no interval."""
    if min(n1, n2) == 0:
        return Estimate(math.nan, -1.0, 1.0, (n1, n2), math.inf, math.inf, 0.0, what,
                        scale="proportion")
    p1, p2 = k1 / n1, k2 / n2
    lo = lower_bound(k1, n1, k2, n2)
    hi = -lower_bound(k2, n2, k1, n1)
    var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
    return Estimate(p1 - p2, lo, hi, (n1, n2), math.sqrt(var), math.inf,
                    var * min(n1, n2), what, scale="proportion")


@cache
def unanimity_needed() -> int:
    """The fewest runs per arm at which all-of against none-of clears zero."""
    return next(n for n in range(MIN_UNITS, stats.MAX_UNITS + 1) if lower_bound(n, n, 0, n) > 0)


def more_often(est: Estimate) -> Decision:
    """The first share is larger (stats.better_by with no minimum effect, on the exact
    interval): reproduced when the lower bound is above 0, not reproduced when the upper bound
    is below 0 (confidently the other way), else inconclusive, saying so."""
    d = stats.better_by(est, 0.0)
    if d.status != "inconclusive" or stats.too_few(est) is not None:
        return d
    return Decision(d.status, est, d.rule,
                    f"underpowered (the exact interval spans 0 at {stats.n_text(est.n)} runs "
                    f"per arm; all against none clears it from {unanimity_needed()} runs a "
                    "side)")
