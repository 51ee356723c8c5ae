"""Verdict rules shared by the studies: each turns numbers into reproduced / not reproduced /
inconclusive, deciding from an interval over replication units (kit/stats.py), never from a
point estimate. Thresholds are the caller's constants, fixed before any run.

A rule on a deterministic quantity (a FLOP count, the heads of one fixed checkpoint) reads its
value against a threshold (`exact_verdict`) and says it is exact. Every rule here and in the
families is driven under its null by the calibration tests (tests/unit/studies/test_calibration.py)
and unit-tested on noisy numbers (tests/unit/studies/kit/test_verdicts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from reasonlab.report import pm
from reasonlab.studies.kit import stats
from reasonlab.studies.kit.core import Claim, Status, Verdict
from reasonlab.studies.kit.stats import Decision

MIN_ACCURACY_GAIN = 0.05
"""A difference in accuracy (mean over positions and seeds) that counts: the estimate must
reach it and the interval's lower bound clear zero."""

Check = Callable[[float], bool]


# -- from a decision ---------------------------------------------------------------------------


def decided(claim: Claim, d: Decision, evidence: str) -> Verdict:
    """The verdict of a decision: its status and estimate; the evidence says the numbers, the
    estimate with its interval, and the rule; an inconclusive one says why."""
    ev = f"{evidence}; {d.estimate.what} {d.estimate.text()}; {d.rule}"
    return Verdict(claim, d.status, ev, d.estimate, d.why)


def arms_text(a: np.ndarray, b: np.ndarray, names: tuple[str, str]) -> str:
    return f"{names[0]} {pm(a)} (n = {len(a)}), {names[1]} {pm(b)} (n = {len(b)})"


def gain_verdict(claim: Claim, better: Sequence[float], worse: Sequence[float],
                 names: tuple[str, str], what: str, min_gain: float = MIN_ACCURACY_GAIN,
                 effect: float | None = None) -> Verdict:
    """'better beats worse': mean(better) - mean(worse) over units, decided by
    stats.better_by(min_gain) (lower bound > 0 and the estimate >= min_gain reproduces; upper
    bound < min_gain fails). `effect`: the effect size the power is quoted at (the paper's,
    where larger than min_gain)."""
    a, b = np.asarray(better, float), np.asarray(worse, float)
    est = stats.difference(a, b, f"gain {names[0]} - {names[1]}")
    return decided(claim, stats.better_by(est, min_gain, effect),
                   f"{what}: {arms_text(a, b, names)}")


# "No better", "no worse" and "equal" are decided where their null is a difference AT the
# margin; each reads the union of the Welch interval and the interval at the per-unit SD our
# runs show (`noise`, the family's noise.toml entry for the quantity): the Welch interval alone
# collapses when every seed of both arms lands in one mode of a fit-or-not distribution, and
# read "reproduced" in 53% of 3 + 3-seed draws with the true difference at the margin
# (stats.at_noise says why the union, and what it costs).


def _margin_text(noise: float) -> str:
    return f"the interval at least as wide as at the per-seed SD {noise:g} our runs show"


def no_gain_verdict(claim: Claim, a: Sequence[float], b: Sequence[float], names: tuple[str, str],
                    what: str, margin: float = MIN_ACCURACY_GAIN, *, noise: float) -> Verdict:
    """'a is no better than b' (non-inferiority turned round): reproduced when the upper bound of
    mean(a) - mean(b) is at most `margin`, not reproduced when its lower bound is above it.
    `noise`: the per-unit SD of the quantity our runs show (stats.at_noise)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    est = stats.difference(a, b, f"gain {names[0]} - {names[1]}", noise)
    # power quoted where a and b are truly equal: a distance of the margin from it
    return decided(claim, stats.at_most(est, margin, margin),
                   f"{what}: {arms_text(a, b, names)}; {_margin_text(noise)}")


def no_worse_verdict(claim: Claim, a: Sequence[float], b: Sequence[float],
                     names: tuple[str, str], what: str,
                     margin: float = MIN_ACCURACY_GAIN, *, noise: float) -> Verdict:
    """'a is no worse than b' (non-inferiority): reproduced when the lower bound of
    mean(a) - mean(b) is at least -margin, not reproduced when its upper bound is below it.
    `noise`: as no_gain_verdict's."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    est = stats.difference(a, b, f"{names[0]} - {names[1]}", noise)
    return decided(claim, stats.at_least(est, -margin, margin),
                   f"{what}: {arms_text(a, b, names)}; {_margin_text(noise)}")


def equal_verdict(claim: Claim, a: Sequence[float], b: Sequence[float], names: tuple[str, str],
                  what: str, margin: float, *, noise: float) -> Verdict:
    """'a and b are about equal': two one-sided tests, reproduced when the interval of
    mean(a) - mean(b) lies within +-margin, not reproduced when it lies wholly outside.
    `noise`: as no_gain_verdict's."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    est = stats.difference(a, b, f"{names[0]} - {names[1]}", noise)
    return decided(claim, stats.equivalent(est, margin),
                   f"{what}: {arms_text(a, b, names)}; {_margin_text(noise)}")


def trend_verdict(claim: Claim, by_x: Mapping[float, Sequence[float]], min_change: float,
                  what: str, x: str = "x", falling: bool = False,
                  notes: Sequence[str] = ()) -> Verdict:
    """A monotone trend along a sweep, judged end to end: the change of the mean from the
    smallest to the largest x (negated when the claim is a fall), decided by
    stats.better_by(min_change) over the units at the two ends. `notes`: numbers reported beside
    the evidence that do not decide it (e.g. the points between)."""
    lo, hi = min(by_x), max(by_x)
    a, b = np.asarray(by_x[hi], float), np.asarray(by_x[lo], float)
    if falling:
        a, b = b, a
    est = stats.difference(a, b, f"{'drop' if falling else 'rise'} from {x}={lo} to {x}={hi}")
    ev = "; ".join([f"{what}: " + ", ".join(f"{x}={k} {pm(v)}" for k, v in sorted(by_x.items())),
                    *notes])
    return decided(claim, stats.better_by(est, min_change), ev)


# -- one arm against a bar, unit by unit ------------------------------------------------------

FIT_SHARE = 0.5
"""A claim that one arm's seeds reach a bar ("both models fit", "stays at chance", "the heads
beat random init") reads: more than this share of seeds pass, by the exact lower bound of the
share (stats.majority)."""


def every_unit_verdict(claim: Claim, values: Sequence[float], passes: Check, bar: str,
                       what: str, note: str = "") -> Verdict:
    """One arm's per-unit values against a bar: each unit passes or not (`passes`, described
    by `bar`, e.g. ">= 0.95"), and the claim is reproduced when the Clopper-Pearson lower bound
    of the share that passes is above FIT_SHARE; not reproduced when its upper bound is at or
    below it. Why not the mean's t interval: when each seed either fits or does not (the LEGO
    and FPT regime), all units in one mode collapse the interval to a point, and a mean exactly
    at the bar read "reproduced" in 68% of 3-seed draws. The share's exact interval holds
    whatever the values' distribution; its price is units: a unanimous share decides from
    stats.unanimous_units(FIT_SHARE) (6) units, so a study that runs fewer says so (the
    calibration ledger) or runs `--until-decided`. `note`: evidence written before the units'
    values."""
    v = np.asarray(values, float)
    k = int(sum(bool(passes(float(x))) for x in v))
    est = stats.proportion(k, len(v), f"share of seeds with {what} {bar}")
    ev = f"{what} per seed {', '.join(f'{x:.3f}' for x in v)}: {k} of {len(v)} {bar}"
    return decided(claim, stats.majority(est, FIT_SHARE), f"{note}; {ev}" if note else ev)


# -- deterministic quantities ------------------------------------------------------------------


def at_least(t: float) -> Check:
    return lambda v: v >= t


def above(t: float) -> Check:
    return lambda v: v > t


def at_most(t: float) -> Check:
    return lambda v: v <= t


def below(t: float) -> Check:
    return lambda v: v < t


def never(v: float) -> bool:
    return False


def exact_verdict(claim: Claim, value: float, evidence: str, passes: Check,
                  fails: Check | None = None, what: str = "value") -> Verdict:
    """For a deterministic quantity only (a FLOP count, a property of one fixed pretrained
    checkpoint, a task's structure): reproduced when passes(value); otherwise not reproduced
    when `fails` is None or fails(value), inconclusive in the band between. A value that
    varies with the seed is decided by an interval instead (gain_verdict and kit/stats.py)."""
    est = stats.exact(value, what)
    if passes(value):
        status: Status = "reproduced"
    else:
        status = "not reproduced" if fails is None or fails(value) else "inconclusive"
    return Verdict(claim, status, f"{evidence} (exact: no replication)", est,
                   "the value lies between the thresholds" if status == "inconclusive" else "")


def verdict(claim: Claim, ok: bool, evidence: str) -> Verdict:
    """Reproduced when `ok`, else not reproduced: a rule on a deterministic quantity with no
    inconclusive band (exact_verdict with a yes/no check)."""
    return Verdict(claim, "reproduced" if ok else "not reproduced",
                   f"{evidence} (exact: no replication)")


# -- combining ---------------------------------------------------------------------------------


def requires(v: Verdict, ok: bool, why: str, reachable: bool = True) -> Verdict:
    """`v` when its precondition holds; else inconclusive, keeping v's numbers and saying why
    (a comparison that tests nothing: no arm fits its training positions, the backbone never
    learned its pretraining task, the plateau was not left). `reachable`: whether the units a
    sequential run may still add (kit/sequential.py `to_come`) could meet the precondition;
    when they cannot, the verdict is curtailed and the run adds no units for its claim."""
    if ok:
        return v
    return Verdict(v.claim, "inconclusive", f"{v.evidence}; inconclusive: {why}", v.effect,
                   f"precondition not met ({why})", curtailed=v.curtailed or not reachable)


def joined_status(statuses: Sequence[Status]) -> Status:
    """Every part reproduced -> reproduced; any part not reproduced -> not reproduced; else
    inconclusive (an intersection-union test: each part at ALPHA keeps the whole at ALPHA)."""
    s = set(statuses)
    return ("reproduced" if s == {"reproduced"} else
            "not reproduced" if "not reproduced" in s else "inconclusive")


def all_of(claim: Claim, verdicts: Mapping[str, Verdict]) -> Verdict:
    """One verdict for a claim made of every part's (a backbone, a task, an arm): reproduced
    when all are, not reproduced when any is not, else inconclusive (why: the parts' whys).
    Its effect is that of the first part whose status is the joined one (the part that decided
    it), so the summary shows a number the verdict rests on; the evidence lists every part's.
    Curtailed (kit/sequential.py) when inconclusive with every inconclusive part curtailed: no
    unit to come can move any part, so none can move the whole; one part still open could yet
    read "not reproduced" and decide it."""
    status = joined_status([v.status for v in verdicts.values()])
    ev = "; ".join(f"{part} ({v.status}): {v.evidence}" for part, v in verdicts.items())
    open_ = [v for v in verdicts.values() if v.status == "inconclusive"]
    why = "; ".join(f"{part}: {v.why}" for part, v in verdicts.items()
                    if v.status == "inconclusive" and v.why)
    effect = next((v.effect for v in verdicts.values() if v.status == status), None)
    return Verdict(claim, status, ev, effect, why if status == "inconclusive" else "",
                   curtailed=status == "inconclusive" and all(v.curtailed for v in open_))


def all_of_each(claims: Sequence[Claim], verdicts: Mapping[str, Sequence[Verdict]]
                ) -> list[Verdict]:
    """`all_of` per claim, when each part (a backbone, say) judged every claim: part -> its
    verdicts; the verdicts are matched by claim key and come back in the order of `claims`."""
    by_key = {part: {v.claim.key: v for v in vs} for part, vs in verdicts.items()}
    return [all_of(c, {part: vs[c.key] for part, vs in by_key.items()}) for c in claims]
