"""Group-sequential replication (`reasonlab run STUDY --until-decided`): judge a study after
each batch of units (seeds) and stop adding units for a claim once it is decided, keeping its
false "reproduced" rate over all looks within ALPHA.

Design: alpha spending (Lan & DeMets 1983, "Discrete sequential boundaries for clinical
trials", Biometrika 70:659) with the O'Brien-Fleming-type spending function, one-sided,

    spent(t) = 2 - 2 Phi(z_{1 - ALPHA/2} / sqrt(t)),   t = units so far / the cap,

which spends almost nothing at the first looks and most of ALPHA at the last (Jennison &
Turnbull 2000, "Group Sequential Methods with Applications to Clinical Trials", §7.2). Look k
decides at the nominal one-sided level spent(t_k) - spent(t_{k-1}), the increment it was
given. The increments sum to ALPHA, so by Bonferroni's inequality the chance that any look
reads "reproduced" under the null is at most ALPHA, whatever the statistic: the lab's rules
read Welch t, Fieller, Clopper-Pearson and exact permutation tests and join parts by
intersection-union, which the exact recursive boundaries (Armitage, McPherson & Rowe 1969;
Jennison & Turnbull §8) do not cover, as they assume a normal statistic with independent
increments. The price is a little power: at 3 looks the last reads at 0.019 instead of
about 0.023.

A claim whose precondition is out of reach of the units to come is curtailed: the run adds no
units for it. Deterministic curtailment (Jennison & Turnbull ch. 10), where no unit to come
can meet it (a seed that must leave a plateau and did not; a mean that stays below its bar
even were every unit to come perfect: `to_come` tells a rule how many may come), changes no
verdict. A futility stop, where the precondition's mean is confidently below its bar, can only
turn a later "reproduced" into inconclusive: it never raises the false "reproduced" rate
(a non-binding futility boundary) and costs a little power, said by the rule that uses it.

The information fraction needs the cap fixed before the first look (`plan`): --max-units, else
the study's `max_units` at the scale, else MAX_FACTOR times its seeds. Runs are the store's
content-addressed runs, so seed k is the same run at every look and a later look trains only
the new seeds. The calibration suite checks the false "reproduced" rate over the looks by
drawing each case's units at the cap and judging the prefixes (`first_decided`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from scipy import special

from reasonlab.studies.kit import stats
from reasonlab.studies.kit.core import Status, Verdict

MAX_FACTOR = 4
"""Without --max-units or a study's own cap, units grow to this many times the study's
seeds (3 -> 12 at cpu)."""


def spent(t: float, total: float = stats.ALPHA) -> float:
    """The one-sided error spent by information fraction t (O'Brien-Fleming-type)."""
    if t <= 0:
        return 0.0
    if t >= 1:
        return total
    return float(2 - 2 * special.ndtr(special.ndtri(1 - total / 2) / math.sqrt(t)))


_TO_COME: ContextVar[int] = ContextVar("units_to_come", default=0)


def to_come() -> int:
    """The units a sequential run may still add after the look being judged: 0 at its last
    look and outside a sequential run (a fixed seed count adds none)."""
    return _TO_COME.get()


@contextmanager
def adding(n: int) -> Iterator[None]:
    """Judge the block as a look after which `n` more units may come."""
    token = _TO_COME.set(n)
    try:
        yield
    finally:
        _TO_COME.reset(token)


def futile(unmet: Callable[[], bool]) -> bool:
    """A non-binding futility stop (Jennison & Turnbull ch. 10) for a claim whose precondition
    is not met: whether units may still come and `unmet()` reads the precondition confidently
    out of reach, judged at the one-sided ALPHA whatever the look's level (a precondition that
    truly holds is stopped in at most ALPHA of looks). Outside a sequential run, and at its
    last look, no unit is to come and nothing is stopped. It can only turn a later "reproduced"
    into inconclusive, so no false "reproduced" rate can rise."""
    if not to_come():
        return False
    with stats.nominal(stats.ALPHA):
        return unmet()


@dataclass(frozen=True)
class Look:
    index: int
    """1-based."""
    units: int
    level: float
    """The nominal one-sided level the look decides at."""


def plan(first: int, cap: int, batch: int | None = None) -> list[Look]:
    """The looks: `first` units, then `batch` (default `first`) more at a time up to `cap`,
    the last look at the cap; each with its share of ALPHA."""
    if first < 1 or cap < first:
        raise ValueError(f"the cap ({cap}) must be at least the first look's units ({first})")
    step = batch or first
    units = list(range(first, cap, step)) + [cap]
    out, before = [], 0.0
    for i, n in enumerate(units, 1):
        now = spent(n / cap)
        out.append(Look(i, n, now - before))
        before = now
    return out


def annotate(v: Verdict, look: Look, looks: int) -> Verdict:
    """The verdict with the look that decided it (or the last look, undecided)."""
    return replace(v, look=look.index, looks=looks, units=look.units)


def settles(v: Verdict) -> bool:
    """Whether a look's verdict ends its claim's sequence: decided, or curtailed."""
    return v.status != "inconclusive" or v.curtailed


class Judge:
    """Keeps, per claim, the first verdict that settles it over the looks: a claim decided at
    look k keeps that verdict (the boundary was crossed; later looks do not reopen it), and so
    does one curtailed at look k (its precondition out of reach of the units to come)."""

    def __init__(self, keys: Sequence[str], looks: Sequence[Look]):
        self.keys, self.looks = list(keys), list(looks)
        self.decided: dict[str, Verdict] = {}
        self.last: dict[str, Verdict] = {}

    def see(self, look: Look, verdicts: Sequence[Verdict]) -> None:
        for v in verdicts:
            k = v.claim.key
            self.last[k] = annotate(v, look, len(self.looks))
            if k not in self.decided and settles(v):
                self.decided[k] = self.last[k]

    @property
    def done(self) -> bool:
        return all(k in self.decided for k in self.keys)

    def verdicts(self) -> list[Verdict]:
        return [self.decided.get(k) or self.last[k] for k in self.keys]


def first_decided(statuses: Sequence[Status]) -> Status:
    """The status a sequential run ends with, given each look's: the first decided one."""
    return next((s for s in statuses if s != "inconclusive"), "inconclusive")


def simulate(draw_at: Callable[[int], Verdict], looks: Sequence[Look]) -> Status:
    """One sequential study: `draw_at(n)` judges the first n of units drawn once at the cap
    (the caller draws them), at each look's nominal level, stopping at the first verdict that
    settles the claim (decided or curtailed)."""
    cap = looks[-1].units
    for look in looks:
        with stats.nominal(look.level), adding(cap - look.units):
            v = draw_at(look.units)
        if settles(v):
            return v.status
    return "inconclusive"
