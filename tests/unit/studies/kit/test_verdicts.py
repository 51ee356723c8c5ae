"""Every verdict rule outside the LEGO family (those: test_lego_verdicts.py) on hand-made
numbers: the generic rules of studies/kit/verdicts.py and the anchors and abstract-symbols rules.
Each case is computed by hand from the rule's docstring."""

import math

import numpy as np
import pytest

from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import (above, all_of, all_of_each, at_least, at_most, below,
                                            gain_status, gain_verdict, never, requires,
                                            standard_error, threshold_verdict, trend_verdict,
                                            verdict)

C = Claim("k", "text", "src")
CLAIMS = (Claim("a", "a", "s"), Claim("b", "b", "s"), Claim("c", "c", "s"))


def test_verdict_is_binary():
    assert verdict(C, True, "e 1").status == "reproduced"
    assert verdict(C, False, "e 1").status == "not reproduced"


@pytest.mark.parametrize("value, passes, fails, want", [
    (0.9, at_least(0.9), None, "reproduced"),          # the bound itself passes >=
    (0.89, at_least(0.9), None, "not reproduced"),     # no band: a miss fails
    (0.5, above(0.5), None, "not reproduced"),         # > is strict
    (0.55, at_most(0.55), None, "reproduced"),
    (0.56, at_most(0.55), None, "not reproduced"),
    (0.49, below(0.5), None, "reproduced"),
    (0.1, at_least(0.2), at_most(0.0), "inconclusive"),  # in the band
    (0.0, at_least(0.2), at_most(0.0), "not reproduced"),
    (-0.3, at_least(0.2), at_most(0.0), "not reproduced"),
    (1.0, at_least(3.16), below(1.5), "not reproduced"),
    (2.0, at_least(3.16), below(1.5), "inconclusive"),
    (1.0, at_least(3.16), never, "inconclusive"),      # a lower bound never fails
])
def test_threshold_verdict(value, passes, fails, want):
    v = threshold_verdict(C, value, "ev", passes, fails)
    assert v.status == want and v.evidence == "ev"


def test_trend_verdict_reads_the_ends_of_the_sweep():
    falling = {64: [0.9, 0.8], 128: [0.95, 0.95], 256: [0.5, 0.6]}  # 0.85 -> 0.55: drop 0.30
    v = trend_verdict(C, falling, 0.2, "plain", "d", falling=True)
    assert v.status == "reproduced"
    assert "d=64 0.850 ± 0.071" in v.evidence and "drop +0.300" in v.evidence
    assert trend_verdict(C, falling, 0.2, "plain", "d").status == "not reproduced"  # a rise?
    small = {1: [0.6], 2: [0.5]}  # drop 0.1: between 0 and 0.2
    assert trend_verdict(C, small, 0.2, "p", falling=True).status == "inconclusive"
    assert trend_verdict(C, {1: [0.5], 2: [0.5]}, 0.2, "p", falling=True).status == \
        "not reproduced"  # no change


def test_gain_status_and_standard_error():
    a, b = np.array([0.8, 0.9]), np.array([0.5, 0.7])
    # var(ddof=1): 0.005 and 0.02 -> SE = sqrt(0.005/2 + 0.02/2) = sqrt(0.0125)
    assert standard_error(a, b) == pytest.approx(math.sqrt(0.0125))
    assert standard_error(np.array([1.0]), b) == 0.0
    assert gain_status(0.3, 0.1, 0.05, 3) == "reproduced"
    assert gain_status(0.3, 0.2, 0.05, 3) == "inconclusive"  # not > 2 SE
    assert gain_status(0.0, 0.0, 0.05, 3) == "not reproduced"
    assert gain_status(0.02, 0.01, 0.05, 3) == "not reproduced"  # 0.02 + 0.02 < 0.05
    assert gain_status(0.02, 0.0, 0.05, 1) == "inconclusive"  # one sample: no confidence
    assert gain_status(0.3, 0.0, 0.0, 1, min_seeds=2) == "inconclusive"  # too few seeds
    assert gain_status(0.3, 0.0, 0.0, 2, min_seeds=2) == "reproduced"


def test_gain_verdict_writes_its_numbers():
    v = gain_verdict(C, np.array([0.8, 0.82, 0.81]), np.array([0.6, 0.61, 0.62]), ("a", "b"), "x")
    assert v.status == "reproduced"
    assert "a 0.810" in v.evidence and "gain +0.200" in v.evidence and "(3 seeds)" in v.evidence


def test_requires_and_all_of():
    v = Verdict(C, "reproduced", "n 1")
    assert requires(v, True, "why") is v
    w = requires(v, False, "nothing to compare")
    assert w.status == "inconclusive" and w.evidence == "n 1; inconclusive: nothing to compare"
    ok, no, unsure = (Verdict(C, s, s) for s in ("reproduced", "not reproduced", "inconclusive"))
    assert all_of(C, {"x": ok, "y": ok}).status == "reproduced"
    assert all_of(C, {"x": ok, "y": unsure}).status == "inconclusive"
    assert all_of(C, {"x": unsure, "y": no}).status == "not reproduced"


def test_all_of_each_joins_every_parts_verdict_per_claim_by_key():
    a, b = CLAIMS[0], CLAIMS[1]
    ok, no = "reproduced", "not reproduced"
    # the second part lists its verdicts in another order: matched by key, not by position
    v = all_of_each((a, b), {"p": [Verdict(a, ok, "1"), Verdict(b, ok, "2")],
                             "q": [Verdict(b, no, "4"), Verdict(a, ok, "3")]})
    assert [x.claim.key for x in v] == ["a", "b"]
    assert [x.status for x in v] == [ok, no]
    assert v[0].evidence == "p (reproduced): 1; q (reproduced): 3"
    assert v[1].evidence == "p (reproduced): 2; q (not reproduced): 4"
