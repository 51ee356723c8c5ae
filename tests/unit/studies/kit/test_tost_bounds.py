"""The two one-sided tests of `stats.equivalent` read each bound against its own side of the
margin (issue 57: a mutant reading "not reproduced" when the upper bound lies below +margin,
not -margin, survived the suite). Intervals placed by hand around a margin of 1."""

from __future__ import annotations

import pytest

from reasonlab.studies.kit.stats import Estimate, equivalent

MARGIN = 1.0


def interval(lo: float, hi: float, n: int = 6) -> Estimate:
    value, half = (lo + hi) / 2, (hi - lo) / 2
    se = half / 2.0  # about t(10, 0.95) * se = half: the numbers only need to be consistent
    return Estimate(value, lo, hi, (n, n), se=se, df=2 * n - 2, unit_var=se**2 * n)


@pytest.mark.parametrize("lo,hi,status", [
    (-0.5, 0.5, "reproduced"),          # wholly inside (-margin, +margin)
    (-3.0, -1.5, "not reproduced"),     # wholly below -margin
    (1.5, 3.0, "not reproduced"),       # wholly above +margin
    (-2.0, 0.5, "inconclusive"),        # spans -margin, upper bound below +margin: the mutant's
    (-2.0, -0.5, "inconclusive"),       # spans -margin, wholly below +margin        "not rep."
    (0.5, 2.0, "inconclusive"),         # spans +margin
    (-2.0, 2.0, "inconclusive"),        # spans both
])
def test_each_bound_is_read_against_its_own_side_of_the_margin(lo, hi, status):
    assert equivalent(interval(lo, hi), MARGIN).status == status
