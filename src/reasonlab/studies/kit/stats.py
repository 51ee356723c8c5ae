"""The statistics every verdict rule decides from: an effect over replication units, its
interval, and the three decisions a claim can ask for (better by a minimum effect; no worse
than a tolerance; equal within a margin), each an interval's bound against a threshold.

The replication unit is the whole pipeline's seed: one value per seed and arm, where the seed
drives everything the arm's number depends on (pretraining included: a study whose arms share
one pretraining run per corpus has one unit per corpus, not one per fine-tuning seed). A study
says what its unit is (`Study.unit`), and every rule here counts units, never fine-tuning
repetitions of a shared upstream run.

Why t intervals, not a bootstrap. rliable (Agarwal et al. 2021, "Deep RL at the edge of the
statistical precipice", §4) recommends stratified bootstrap intervals for aggregates over many
tasks with few runs each. Our comparisons have 3-5 units per arm and 1-5 tasks: a bootstrap
over 3 units has 10 distinct resamples per arm, and its percentile interval is far too narrow
(it treats the sample's spread as the population's and has no small-sample correction). The
Welch t interval (Welch 1947, with the Welch-Satterthwaite degrees of freedom) is exact under
normal noise and close to it for the mildly skewed accuracies our runs give; the calibration
tests (tests/unit/studies/test_calibration.py) check each rule's false "reproduced" rate by
simulation at the noise our runs show, normal, fit-or-not (two-mode) and skewed. Where the null
is a difference at a margin ("no better", "equal"), a Welch interval over seeds that all land
in one mode collapses; those rules read it together with the interval at the per-unit SD our
runs show (`at_noise`). Linear contrasts (a mean over tasks, a difference of differences)
use the same interval with each group's variance weighted; ratios (a share of a gain, a
speedup) use Fieller's interval (Fieller 1954), the set of ratios r that the linear contrast
num - r * den does not reject; proportions (a share of runs with one solution type) use the
exact Clopper-Pearson interval.

Every decision is a one-sided test at ALPHA = 2.5% (the bound of a two-sided 95% interval):
"reproduced" needs the interval on the claim's side of its threshold. Two one-sided tests
(Schuirmann 1987) decide equivalence at the same level. Fewer than MIN_UNITS units in an arm
decide nothing: the verdict reads inconclusive and says how many units it needs. A rule about a
deterministic quantity (a FLOP count, a fixed checkpoint's heads) says so with `exact(...)`, and
its threshold is read on the value itself.

Sequential looks (kit/sequential.py) judge a study more than once as its units grow; each look
reads its intervals at a smaller nominal level, `alpha()`, set by `nominal(alpha)` around the
analysis, so that the error over all looks stays within ALPHA. Every interval and exact test
here reads `alpha()`, never the constant.

Power is quoted only at an effect size declared before the run (the paper's effect, or the
rule's minimum effect), never at the observed estimate: "observed power" is a function of the
p-value and says nothing more (Hoenig & Heisey 2001, "The abuse of power", Am. Stat. 55:19).
The TOST's power is its own: the chance both one-sided tests reject when the true difference
is 0 (Schuirmann 1987).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from scipy import special

ALPHA = 0.025
"""One-sided error of every decision: the bound of a two-sided 95% interval."""
LEVEL = 1 - 2 * ALPHA
MIN_UNITS = 3
"""Fewer replication units than this in an arm decide neither way."""
TARGET_POWER = 0.8
"""The power a study's seed count should reach at the claim's effect size ("about N needed")."""
MAX_UNITS = 200
"""Where the needed-units search stops ("more than 200")."""

_ALPHA: ContextVar[float] = ContextVar("alpha", default=ALPHA)


def alpha() -> float:
    """The one-sided level the intervals and tests read now: ALPHA, or a sequential look's
    nominal level inside `nominal(...)`."""
    return _ALPHA.get()


@contextmanager
def nominal(level: float) -> Iterator[None]:
    """Decide at one-sided level `level` inside the block (a sequential look, kit/sequential.py:
    its share of ALPHA)."""
    if not 0 < level <= ALPHA:
        raise ValueError(f"a nominal level must lie in (0, {ALPHA}], got {level}")
    token = _ALPHA.set(level)
    try:
        yield
    finally:
        _ALPHA.reset(token)


Status = Literal["reproduced", "not reproduced", "inconclusive"]
Values = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class Estimate:
    """An effect with its 95% interval, over replication units.

    `n` is the number of units in each group the effect reads (its arms, or (arm, task) cells),
    `unit_var` the effect's variance times the units per group (so `se_at(n)` gives the
    standard error a study with n units per group would have: the power computation)."""

    value: float
    lo: float
    hi: float
    n: tuple[int, ...]
    se: float = 0.0
    df: float = math.inf
    unit_var: float = 0.0
    what: str = "effect"
    exact: bool = False
    """A deterministic quantity: no replication, the interval is the value."""
    scale: Literal["linear", "log", "ratio", "proportion"] = "linear"
    alpha: float = field(default_factory=alpha)
    """The one-sided level its interval was read at (ALPHA, or a sequential look's)."""

    @property
    def units(self) -> int:
        """The smallest group: what decides whether there is enough replication."""
        return min(self.n) if self.n else 0

    def se_at(self, n: int) -> float:
        return math.sqrt(self.unit_var / n) if n > 0 else math.inf

    def text(self, digits: int = 3) -> str:
        """'+0.031 [-0.012, +0.074] (95% CI, n = 3 / 3)'; a geometric-mean ratio as
        '2.93x [1.20x, 7.15x]', a share or Fieller ratio unsigned '0.77 [0.52, 0.98]'."""
        fmt = _FORMATS[self.scale]
        if self.exact:
            return f"{fmt(self.value, digits)} (exact)"
        if self.units < 2 or not math.isfinite(self.se):
            return f"{fmt(self.value, digits)} (no interval: n = {n_text(self.n)})"
        return (f"{fmt(self.value, digits)} [{fmt(self.lo, digits)}, {fmt(self.hi, digits)}] "
                f"({level_text(self.alpha)} CI, n = {n_text(self.n)})")


def level_text(a: float) -> str:
    """'95%'; a sequential look's level with the digits it needs ('99.6%')."""
    return f"{100 * (1 - 2 * a):.3f}".rstrip("0").rstrip(".") + "%"


def _bound(x: float, digits: int) -> str:
    return ("-inf" if x == -math.inf else "+inf" if x == math.inf else f"{x:+.{digits}f}")


def _unsigned(x: float, digits: int) -> str:
    return ("-inf" if x == -math.inf else "inf" if x == math.inf else f"{x:.{max(digits - 1, 2)}f}")


def _times(x: float, digits: int) -> str:
    return "inf" if x == math.inf else f"{x:.2f}x"


_FORMATS = {"linear": _bound, "ratio": _unsigned, "proportion": _unsigned, "log": _times}


def n_text(n: Sequence[int]) -> str:
    return " / ".join(str(k) for k in n)


def _t(df: float) -> float:
    """The t quantile of one-sided level ALPHA (scipy.special's ufuncs: the distribution
    objects of scipy.stats cost about 1 ms a call, which the calibration tests pay 10^5 times)."""
    a = alpha()
    return float(special.stdtrit(df, 1 - a)) if math.isfinite(df) else float(
        special.ndtri(1 - a))


def _clean(values: Values) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(v)):
        raise ValueError(f"non-finite value among {v.tolist()}: a run that produced no number "
                         "must be left out (and reported) before the statistics, never imputed")
    return v


# ----------------------------------------------------------------------------- estimates


def contrast(groups: Mapping[str, Values], weights: Mapping[str, float],
             what: str = "contrast", noise: float | Mapping[str, float] | None = None
             ) -> Estimate:
    """sum_g w_g * mean(group g) over independent groups of units, with the Welch-Satterthwaite
    t interval. A difference of two arms is {a: 1, b: -1}; a mean over tasks of arm differences
    puts +-1/T on each (task, arm) group; a share test num - r * den folds r into the weights.
    `noise`: the per-unit SD our runs show (the family's noise.toml), one for every group or
    group -> its own (tasks measured with different noise); the interval is then at least as
    wide as at that SD (`at_noise`)."""
    est = _welch(groups, weights, what)
    if noise is None or not math.isfinite(est.se):
        return est
    used = {g: w for g, w in weights.items() if w != 0}
    sd = _per_group(noise, used)
    return at_noise(est, math.sqrt(sum((w * sd[g]) ** 2 / len(groups[g])
                                       for g, w in used.items())),
                    sum((w * sd[g]) ** 2 for g, w in used.items()))


def _per_group(noise: float | Mapping[str, float], groups: Iterable[str]) -> dict[str, float]:
    """group -> its per-unit SD: one for every group, or each group's own."""
    return {g: noise[g] if isinstance(noise, Mapping) else noise for g in groups}


def at_noise(est: Estimate, se: float, unit_var: float) -> Estimate:
    """The union of the estimate's interval and the interval at the known standard error `se`
    (value +- z se): the spread our runs show per unit (noise.toml) carried to this contrast.

    Why. A "no better than", "no worse than" or "equal within" claim is decided where its null
    is a difference AT the margin, and the Welch interval reads each arm's spread from its own
    few units. When each seed either fits or not (the LEGO and FPT regime, the calibration's
    two-mode null), every unit of both arms lands in the upper mode in 0.9^6 = 53% of 3 + 3
    draws: both variances vanish, the interval collapses onto the point difference -- the
    margin itself -- and "within the margin" read "reproduced" 53% of the time (our finding,
    the two-arm form of the collapse `every_unit_verdict` fixed for one arm). The interval at the
    measured noise cannot collapse. Reading the union is two tests at once, reproduced only
    when both reject (an intersection of rejection regions, at most the size of either): it
    holds wherever either holds -- the Welch interval under normal noise whatever its SD, the
    known-SD one when the units' spread is the one our runs show (two-mode included) -- and
    costs little power: the union is Welch's whenever the units spread at least z / t of the
    measured SD (0.71 of it at 3 + 3 units, where t has 4 df).
    Rather than a floor on each arm's variance (max(s, sd): never narrower than the SD at the
    t quantile, which leaves no equality decidable at the artificial family's 3 seeds) or an
    exact permutation interval (exact only for a shift between arms, blind at 3 + 3 seeds:
    1/20 > ALPHA)."""
    if est.exact or not math.isfinite(est.se) or se <= 0:
        return est
    half = _t(math.inf) * se
    return replace(est, lo=min(est.lo, est.value - half), hi=max(est.hi, est.value + half),
                   se=max(est.se, se), unit_var=max(est.unit_var, unit_var))


def _welch(groups: Mapping[str, Values], weights: Mapping[str, float], what: str) -> Estimate:
    used = {g: w for g, w in weights.items() if w != 0}
    data = {g: _clean(groups[g]) for g in used}
    n = tuple(len(data[g]) for g in used)
    value = float(sum(w * data[g].mean() for g, w in used.items()))
    if min(n, default=0) < 2:
        return Estimate(value, -math.inf, math.inf, n, math.inf, 0.0, math.inf, what)
    parts = [w * w * data[g].var(ddof=1) / len(data[g]) for g, w in used.items()]
    var = float(sum(parts))
    se = math.sqrt(var)
    # Welch-Satterthwaite; a zero variance (identical values) leaves the df of the others
    den = sum(p * p / (len(data[g]) - 1) for p, g in zip(parts, used) if p > 0)
    df = float(var * var / den) if den > 0 else float(sum(len(d) - 1 for d in data.values()))
    half = _t(df) * se
    # the effect's variance at k units in every group is unit_var / k (power, units_needed)
    unit_var = float(sum(w * w * data[g].var(ddof=1) for g, w in used.items()))
    return Estimate(value, value - half, value + half, n, se, df, unit_var, what)


def difference(a: Values, b: Values, what: str = "difference",
               noise: float | None = None) -> Estimate:
    """mean(a) - mean(b) over independent units (Welch; with `noise`, at least as wide as at
    that per-unit SD: `at_noise`)."""
    return contrast({"a": a, "b": b}, {"a": 1.0, "b": -1.0}, what, noise)


def paired(a: Values, b: Values, what: str = "paired difference") -> Estimate:
    """mean(a - b) over matched units (the same seed under two settings that share everything
    else): a one-sample t interval on the differences."""
    a, b = _clean(a), _clean(b)
    if len(a) != len(b):
        raise ValueError(f"paired units need equal counts, got {len(a)} and {len(b)}")
    d = a - b
    est = contrast({"d": d}, {"d": 1.0}, what)
    return replace(est, n=(len(d), len(d)))


def mean_of(values: Values, what: str = "mean", noise: float | None = None) -> Estimate:
    """The mean of one group's units with its t interval (e.g. a per-seed gain); with `noise`,
    at least as wide as at that per-unit SD (`at_noise`)."""
    return contrast({"x": values}, {"x": 1.0}, what, noise)


def exact(value: float, what: str = "value") -> Estimate:
    """A deterministic quantity (a FLOP count, the heads of one fixed checkpoint): the rule
    that uses it is exempt from replication, and says so."""
    return Estimate(float(value), float(value), float(value), (), 0.0, math.inf, 0.0, what,
                    exact=True)


def ratio(groups: Mapping[str, Values], num: Mapping[str, float], den: Mapping[str, float],
          what: str = "ratio", noise: float | Mapping[str, float] | None = None) -> Estimate:
    """(sum num_g mean_g) / (sum den_g mean_g) with Fieller's interval: the ratios r for which
    the contrast num - r * den is not rejected at ALPHA on either side. The interval is
    unbounded (+-inf) when the denominator itself is not clearly away from zero -- then no
    ratio is decided, as it should not be. A share of a gain, (S - D) / (P - D), and a
    speedup, mean(random) / mean(FPT), are both this. `noise`: the per-unit SD our runs show;
    the interval is then the union of Fieller's and Fieller's at that known SD (z), as
    `at_noise` does for a contrast (one SD, or group -> its own, as `contrast`): units that
    all land in one mode collapse both variances, and Fieller's interval with them, onto the
    point ratio."""
    keys = sorted(set(num) | set(den))
    data = {g: _clean(groups[g]) for g in keys}
    n = tuple(len(data[g]) for g in keys)
    m = {g: data[g].mean() for g in keys}
    a = sum(w * m[g] for g, w in num.items())
    b = sum(w * m[g] for g, w in den.items())
    value = float(a / b) if b != 0 else math.nan
    if min(n) < 2:
        return Estimate(value, -math.inf, math.inf, n, math.inf, 0.0, math.inf, what,
                        scale="ratio")
    v = {g: data[g].var(ddof=1) / len(data[g]) for g in keys}
    # df of the contrast at the point estimate (Welch-Satterthwaite)
    w = {g: num.get(g, 0) - (value if math.isfinite(value) else 0) * den.get(g, 0)
         for g in keys}
    df = contrast(groups, w).df if any(w.values()) else math.inf
    lo, hi, se = _fieller(a, b, num, den, v, _t(df), value)
    if noise is not None:
        sd = _per_group(noise, keys)
        known = {g: sd[g] * sd[g] / len(data[g]) for g in keys}
        lo_n, hi_n, se_n = _fieller(a, b, num, den, known, _t(math.inf), value)
        lo, hi, se = min(lo, lo_n), max(hi, hi_n), max(se, se_n)
    return Estimate(value, lo, hi, n, se, df, se * se * min(n), what, scale="ratio")


def _fieller(a: float, b: float, num: Mapping[str, float], den: Mapping[str, float],
             v: Mapping[str, float], t: float, value: float) -> tuple[float, float, float]:
    """Fieller's interval of a / b at the groups' mean variances `v` and quantile `t`, and the
    ratio's delta-method standard error."""
    vaa = sum(num.get(g, 0) ** 2 * v[g] for g in v)
    vbb = sum(den.get(g, 0) ** 2 * v[g] for g in v)
    vab = sum(num.get(g, 0) * den.get(g, 0) * v[g] for g in v)
    t2 = t * t
    # (a - r b)^2 = t^2 (vaa - 2 r vab + r^2 vbb): a quadratic in r
    qa, qb, qc = b * b - t2 * vbb, -2 * (a * b - t2 * vab), a * a - t2 * vaa
    disc = qb * qb - 4 * qa * qc
    if qa <= 0 or disc < 0:  # the denominator's interval covers 0: the ratio is unbounded
        lo, hi = -math.inf, math.inf
    else:
        lo, hi = sorted(((-qb - math.sqrt(disc)) / (2 * qa), (-qb + math.sqrt(disc)) / (2 * qa)))
    se = math.sqrt(max(vaa + value * value * vbb - 2 * value * vab, 0.0)) / abs(b) if b \
        else math.inf
    return lo, hi, se


def proportion(k: int, n: int, what: str = "share") -> Estimate:
    """k of n units with a property: the share with its exact (Clopper-Pearson) interval."""
    a = alpha()
    lo = float(special.betaincinv(k, n - k + 1, a)) if k > 0 else 0.0
    hi = float(special.betaincinv(k + 1, n - k, 1 - a)) if k < n else 1.0
    p = k / n if n else math.nan
    return Estimate(p, lo, hi, (n,), math.sqrt(p * (1 - p) / n) if n else math.inf, math.inf,
                    p * (1 - p), what, scale="proportion")


def log_contrast(groups: Mapping[str, Values], weights: Mapping[str, float],
                 what: str = "ratio") -> Estimate:
    """`contrast` on the logarithm of positive values, reported back on the ratio scale
    (exp of the value and bounds): a geometric-mean ratio, e.g. the steps to a level of one arm
    over another's, averaged over tasks."""
    est = contrast({g: np.log(_clean(v)) for g, v in groups.items() if g in weights}, weights,
                   what)
    # np.exp, not math.exp: a very wide interval (2 units at a sequential look's tiny level)
    # has a log bound past 709, a ratio bound of inf rather than an OverflowError
    with np.errstate(over="ignore"):
        value, lo, hi = (float(np.exp(x)) for x in (est.value, est.lo, est.hi))
    return replace(est, value=value, lo=lo, hi=hi, scale="log")


# ----------------------------------------------------------------------------- power


def _powers(est: Estimate, effect: float, ns: np.ndarray) -> np.ndarray:
    """Power at each unit count of `ns` (vectorised: scipy.special's noncentral t)."""
    se = np.sqrt(est.unit_var / ns)
    a = alpha()
    if math.isfinite(est.df):
        df = np.maximum(1.0, est.df * (ns - 1) / max(est.units - 1, 1))
        return 1 - special.nctdtr(df, abs(effect) / se, special.stdtrit(df, 1 - a))
    return special.ndtr(abs(effect) / se - special.ndtri(1 - a))


def _tost_powers(est: Estimate, margin: float, ns: np.ndarray) -> np.ndarray:
    """The TOST's power at each unit count when the true difference is 0: the chance that
    -margin < estimate -+ t se < margin, 2 F_t(margin / se - t_crit) - 1 (the usual
    approximation with the variance taken as known; Schuirmann 1987, Chow & Liu 2008 §5.3)."""
    se = np.sqrt(est.unit_var / ns)
    a = alpha()
    if math.isfinite(est.df):
        df = np.maximum(1.0, est.df * (ns - 1) / max(est.units - 1, 1))
        p = 2 * special.stdtr(df, margin / se - special.stdtrit(df, 1 - a)) - 1
    else:
        p = 2 * special.ndtr(margin / se - special.ndtri(1 - a)) - 1
    return np.maximum(p, 0.0)


def tost_power(est: Estimate, margin: float, n: int | None = None) -> float:
    """Probability that two one-sided tests declare equivalence within +-margin with n units
    per group (default: those it has) when the true difference is 0, at the estimate's noise.
    NaN when the noise is unknown."""
    n = est.units if n is None else n
    if est.exact or est.unit_var <= 0 or est.units < 2 or n < 2:
        return math.nan
    return float(_tost_powers(est, margin, np.array([float(n)]))[0])


def power(est: Estimate, effect: float, n: int | None = None) -> float:
    """Probability that the interval's lower bound clears zero with n units per group (default:
    those it has) when the true effect is `effect`, at the estimate's own noise (a noncentral
    t, Welch's df scaled with n). NaN when the noise is unknown (fewer than 2 units)."""
    n = est.units if n is None else n
    if (est.exact or est.unit_var <= 0 or est.units < 2 or n < 2
            or est.scale == "proportion"):
        return math.nan
    return float(_powers(est, effect, np.array([float(n)]))[0])


def units_needed(est: Estimate, effect: float, target: float = TARGET_POWER,
                 tost: bool = False) -> int | None:
    """The fewest units per group with power >= target at `effect` (the TOST's power at the
    margin `effect` when `tost`; None: noise unknown; MAX_UNITS + 1: more than MAX_UNITS)."""
    if math.isnan(power(est, effect, 2)):
        return None
    ns = np.arange(MIN_UNITS, MAX_UNITS + 1, dtype=float)
    ok = np.nonzero((_tost_powers(est, effect, ns) if tost else _powers(est, effect, ns))
                    >= target)[0]
    return int(ns[ok[0]]) if len(ok) else MAX_UNITS + 1


# ----------------------------------------------------------------------------- decisions


@dataclass(frozen=True)
class Decision:
    """A status, the estimate it was read from, and (for inconclusive) why."""

    status: Status
    estimate: Estimate
    rule: str
    """The decision in words: 'reproduced when the lower bound > 0 and the effect >= 0.05'."""
    why: str = ""


def too_few(est: Estimate) -> str | None:
    """Why an estimate decides nothing for lack of units, or None."""
    if est.exact or est.units >= MIN_UNITS:
        return None
    return (f"too few units ({n_text(est.n)} per arm; at least {MIN_UNITS} per arm decide, "
            "so run more seeds)")


def distance(est: Estimate, a: float, b: float) -> float:
    """|a - b| on the scale the estimate's interval was computed on (log for `log_contrast`),
    the effect size its power is quoted at."""
    if est.scale == "log" and a > 0 and b > 0:
        return abs(math.log(a) - math.log(b))
    return abs(a - b)


def underpowered(est: Estimate, effect: float | None, at: str | None = None,
                 tost: bool = False) -> str:
    """Why an interval that spans a threshold decides nothing: 'underpowered (power 0.31 at 3
    units for an effect of 0.05; about 6 needed)', or, where the power at `effect` (a size
    declared before the run, on the estimate's own scale; `at` names it in words; the TOST's
    own power at the margin `effect` when `tost`) is already adequate, that the estimate lies
    near the threshold. With no declared effect (None) no power is quoted: never at the
    observed estimate.

    Power and units needed are a one-look design's at the one-sided ALPHA, also inside a
    sequential run's look (kit/sequential.py), whose own small level would quote the power of
    that look alone and overstate the units a design needs."""
    if est.exact:
        return "the value lies between the thresholds"
    if effect is None:
        return ("the interval spans the threshold (no effect size declared for this rule, so "
                "no power is quoted)")
    at = at or (f"equivalence within +-{effect:.3g} (TOST)" if tost
                else f"an effect of {effect:.3g}")
    with nominal(ALPHA):
        p = tost_power(est, effect) if tost else power(est, effect)
        need = units_needed(est, effect, tost=tost)
    if math.isnan(p) or need is None:
        return "underpowered (the interval spans both thresholds)"
    if p >= TARGET_POWER:
        return (f"the interval spans a threshold (power {p:.2f} at {est.units} units for {at}: "
                "the effect lies near it)")
    needed = f"more than {MAX_UNITS}" if need > MAX_UNITS else f"about {need}"
    return f"underpowered (power {p:.2f} at {est.units} units for {at}; {needed} needed)"


def better_by(est: Estimate, min_effect: float, effect: float | None = None) -> Decision:
    """Superiority with a minimum effect: reproduced when the interval's lower bound is above 0
    AND the estimate reaches `min_effect`; not reproduced when the upper bound is below
    `min_effect` (confidently smaller than what the claim needs); else inconclusive.
    `effect` (default min_effect) is the effect size the power is quoted at."""
    rule = f"reproduced when the lower bound > 0 and the effect >= {min_effect:g}"
    if (why := too_few(est)) is not None:
        return Decision("inconclusive", est, rule, why)
    if est.exact:
        ok = est.value >= min_effect and est.value > 0
        return Decision("reproduced" if ok else "not reproduced", est, rule)
    if est.lo > 0 and est.value >= min_effect:
        return Decision("reproduced", est, rule)
    if est.hi < min_effect:
        return Decision("not reproduced", est, rule)
    size = effect if effect is not None else max(min_effect, 1e-12)
    return Decision("inconclusive", est, rule,
                    underpowered(est, distance(est, 1.0, 1.0 + size) if est.scale == "log"
                                 else size))


def at_least(est: Estimate, threshold: float, effect: float | None = None) -> Decision:
    """The quantity (a share, a ratio, an accuracy) is at least `threshold`: reproduced when
    the lower bound reaches it, not reproduced when the upper bound is below it. `effect`: the
    distance above the threshold the paper shows (or the rule's declared minimum) that the
    power of an inconclusive verdict is quoted at; None quotes none."""
    rule = f"reproduced when the lower bound >= {threshold:g}"
    if (why := too_few(est)) is not None:
        return Decision("inconclusive", est, rule, why)
    if est.lo >= threshold:
        return Decision("reproduced", est, rule)
    if est.hi < threshold:
        return Decision("not reproduced", est, rule)
    return Decision("inconclusive", est, rule, underpowered(est, effect))


def at_most(est: Estimate, threshold: float, effect: float | None = None) -> Decision:
    """The quantity is at most `threshold` (non-inferiority, 'at least as low', 'stays at
    chance'): reproduced when the upper bound is at or below it, not reproduced when the lower
    bound is above it. `effect`: the distance below the threshold the power is quoted at (as
    at_least)."""
    rule = f"reproduced when the upper bound <= {threshold:g}"
    if (why := too_few(est)) is not None:
        return Decision("inconclusive", est, rule, why)
    if est.hi <= threshold:
        return Decision("reproduced", est, rule)
    if est.lo > threshold:
        return Decision("not reproduced", est, rule)
    return Decision("inconclusive", est, rule, underpowered(est, effect))


def equivalent(est: Estimate, margin: float) -> Decision:
    """Two one-sided tests (Schuirmann 1987): reproduced when the whole interval lies inside
    (-margin, +margin); not reproduced when it lies wholly outside (|difference| confidently
    beyond the margin); else inconclusive."""
    rule = f"reproduced when the interval lies within +-{margin:g}"
    if (why := too_few(est)) is not None:
        return Decision("inconclusive", est, rule, why)
    if -margin < est.lo and est.hi < margin:
        return Decision("reproduced", est, rule)
    if est.lo > margin or est.hi < -margin:
        return Decision("not reproduced", est, rule)
    return Decision("inconclusive", est, rule, underpowered(est, margin, tost=True))


def majority(est: Estimate, share: float = 0.5) -> Decision:
    """More than `share` of the units have the property: the exact lower bound above it."""
    rule = f"reproduced when the lower bound of the share > {share:.3g}"
    if est.units < MIN_UNITS:
        return Decision("inconclusive", est, rule, too_few(est) or "")
    if est.lo > share:
        return Decision("reproduced", est, rule)
    if est.hi <= share:
        return Decision("not reproduced", est, rule)
    return Decision("inconclusive", est, rule,
                    f"underpowered (the interval spans {share:.3g} at {est.units} units; "
                    f"{_units_to_decide(est.value, share, est.units)})")


def _units_to_decide(p: float, share: float, units: int) -> str:
    """How many units a share needs to decide at the rate observed: the fewest n > units whose
    round(p n) of n has its exact interval wholly on one side of `share` (above it when p is,
    at or below it when p is), and, where p is above, the fewest that decide when unanimous.
    Vectorised over n: the calibration asks this of many simulated studies."""
    ns = np.arange(max(units + 1, MIN_UNITS), MAX_UNITS + 1)
    ks = np.round(p * ns)
    a = alpha()
    if p > share:
        lo = np.where(ks > 0, special.betaincinv(np.maximum(ks, 1), ns - ks + 1, a), 0.0)
        decides = lo > share
        tail = f"; unanimous ones from {unanimous_units(share)}"
    else:
        hi = np.where(ks < ns, special.betaincinv(ks + 1, np.maximum(ns - ks, 1), 1 - a), 1.0)
        decides, tail = hi <= share, ""
    if p == share or not decides.any():
        return f"no count up to {MAX_UNITS} decides at the observed share {p:.2f}{tail}"
    return f"at the observed share {p:.2f} about {int(ns[decides][0])} units decide{tail}"


def unanimous_units(share: float) -> int:
    """The fewest units that, all with the property, put the share's exact lower bound above
    `share` (alpha^(1/n) > share): 6 for a majority at ALPHA."""
    return max(MIN_UNITS, math.floor(math.log(alpha()) / math.log(share)) + 1)
