"""Verdict rules shared by the studies: each turns numbers into reproduced / not reproduced /
inconclusive. Thresholds are the caller's constants, fixed before any run; the evidence string
(the numbers and the rule) is the caller's too, except in `gain_verdict`, which writes its own.
Every rule is unit-tested on hand-made numbers (tests/unit/studies/kit/test_verdicts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from reasonlab.report import fmt_seeds, pm, seeds_text
from reasonlab.studies.kit.core import Claim, Status, Verdict

MIN_ACCURACY_GAIN = 0.05
"""A difference in accuracy (mean over positions and seeds) that counts, when also > 2 SE."""

Check = Callable[[float], bool]


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


def verdict(claim: Claim, ok: bool, evidence: str) -> Verdict:
    """Reproduced when `ok`, else not reproduced: a rule with no inconclusive band."""
    return Verdict(claim, "reproduced" if ok else "not reproduced", evidence)


def threshold_verdict(claim: Claim, value: float, evidence: str, passes: Check,
                      fails: Check | None = None) -> Verdict:
    """Reproduced when passes(value); otherwise not reproduced when `fails` is None or
    fails(value), inconclusive in the band between (e.g. passes=at_least(0.2),
    fails=at_most(0): a drop of 0.1 is inconclusive)."""
    if passes(value):
        return Verdict(claim, "reproduced", evidence)
    return Verdict(claim, "not reproduced" if fails is None or fails(value) else "inconclusive",
                   evidence)


def trend_verdict(claim: Claim, by_x: Mapping[float, Sequence[float]], min_change: float,
                  what: str, x: str = "x", falling: bool = False,
                  notes: Sequence[str] = ()) -> Verdict:
    """A monotone trend along a sweep, judged end to end: the change of the mean from the
    smallest to the largest x (negated when the claim is a fall) reproduces at >= min_change,
    does not at <= 0 (no trend, or the other way), and is inconclusive between. `notes`:
    numbers reported beside the evidence that do not decide it."""
    lo, hi = min(by_x), max(by_x)
    change = float(np.mean(by_x[hi]) - np.mean(by_x[lo])) * (-1 if falling else 1)
    ev = (f"{what}: {x}={lo} {fmt_seeds(by_x[lo])}, {x}={hi} {fmt_seeds(by_x[hi])}; "
          f"{'drop' if falling else 'rise'} {change:+.3f} (needs >= {min_change})")
    ev = "; ".join([ev, *notes])
    return threshold_verdict(claim, change, ev, at_least(min_change), at_most(0))


def gain_status(gain: float, se: float, min_gain: float, n: int, min_seeds: int = 1) -> Status:
    """Reproduced when gain > min_gain, > 2 SE and there are >= min_seeds samples; not
    reproduced when gain <= 0 or (with > 1 sample) gain + 2 SE < min_gain (confidently too
    small); else inconclusive."""
    if gain > min_gain and gain > 2 * se and n >= min_seeds:
        return "reproduced"
    if gain <= 0 or (n > 1 and gain + 2 * se < min_gain):
        return "not reproduced"
    return "inconclusive"


def standard_error(a: np.ndarray, b: np.ndarray) -> float:
    """SE of mean(a) - mean(b) for independent samples (0 when either has one value)."""
    return (float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))
            if len(a) > 1 and len(b) > 1 else 0.0)


def gain_verdict(claim: Claim, better: np.ndarray, worse: np.ndarray, names: tuple[str, str],
                 what: str, min_gain: float = MIN_ACCURACY_GAIN) -> Verdict:
    """gain_status of mean(better) - mean(worse) with the two-sample SE (seeds of two arms)."""
    a, b = np.asarray(better, float), np.asarray(worse, float)
    gain = float(a.mean() - b.mean())
    se = standard_error(a, b)
    ev = (f"{what}: {names[0]} {pm(a)}, {names[1]} {pm(b)} ({seeds_text(len(a))}); "
          f"gain {gain:+.3f} (SE {se:.3f}; needs > {min_gain} "
          "and > 2 SE)")
    return Verdict(claim, gain_status(gain, se, min_gain, len(a)), ev)


def no_gain_verdict(claim: Claim, a: np.ndarray, b: np.ndarray, names: tuple[str, str],
                    what: str, margin: float = MIN_ACCURACY_GAIN) -> Verdict:
    """"a is no better than b", the mirror of gain_verdict: reproduced when the gain
    mean(a) - mean(b) is confidently below `margin` (gain + 2 SE < margin), not reproduced when
    a is confidently better (gain_status says reproduced), else inconclusive."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    gain = float(a.mean() - b.mean())
    se = standard_error(a, b)
    ev = (f"{what}: {names[0]} {pm(a)}, {names[1]} {pm(b)} ({seeds_text(len(a))}); "
          f"gain {gain:+.3f} (SE {se:.3f}; 'no better' needs "
          f"gain + 2 SE < {margin}, 'better' gain > {margin} and > 2 SE)")
    status: Status = ("reproduced" if gain + 2 * se < margin else
                      "not reproduced" if gain_status(gain, se, margin, len(a)) == "reproduced"
                      else "inconclusive")
    return Verdict(claim, status, ev)


def requires(v: Verdict, ok: bool, why: str) -> Verdict:
    """`v` when its precondition holds; else inconclusive, keeping v's numbers and saying why
    (a comparison that tests nothing, e.g. no arm fits its training positions)."""
    return v if ok else Verdict(v.claim, "inconclusive", f"{v.evidence}; inconclusive: {why}")


def all_of(claim: Claim, verdicts: Mapping[str, Verdict]) -> Verdict:
    """One verdict for a claim made of every arm's: reproduced when all are, not reproduced
    when any is not, else inconclusive."""
    statuses = {v.status for v in verdicts.values()}
    status: Status = ("reproduced" if statuses == {"reproduced"} else
                      "not reproduced" if "not reproduced" in statuses else "inconclusive")
    ev = "; ".join(f"{arm} ({v.status}): {v.evidence}" for arm, v in verdicts.items())
    return Verdict(claim, status, ev)


def all_of_each(claims: Sequence[Claim], verdicts: Mapping[str, Sequence[Verdict]]
                ) -> list[Verdict]:
    """`all_of` per claim, when each part (a backbone, say) judged every claim: part -> its
    verdicts; the verdicts are matched by claim key and come back in the order of `claims`."""
    by_key = {part: {v.claim.key: v for v in vs} for part, vs in verdicts.items()}
    return [all_of(c, {part: vs[c.key] for part, vs in by_key.items()}) for c in claims]
