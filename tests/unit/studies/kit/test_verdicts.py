"""Every verdict rule outside the LEGO family (those: test_lego_verdicts.py) on hand-made
numbers: the generic rules of studies/kit/verdicts.py and the anchors and abstract-symbols rules.
Each case is computed by hand from the rule's docstring."""

import math

import numpy as np
import pytest

from reasonlab.studies import STUDIES
from reasonlab.studies.anchors.verdicts import (effect_verdict, group_gap_verdict,
                                               majority_verdict, phase_verdicts)
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


# -- anchors -----------------------------------------------------------------------------------
def rec(verdict: str, **kw: float) -> dict:
    return {"verdict": verdict, "inferential": 0.0, "symmetric": 0.0, "seen_acc": 1.0, **kw}


def test_phase_verdicts():
    def mapped(key):  # the study judges each claim once per gamma reading
        return STUDIES["anchors-init-phase"].claim(f"{key}.mapped")

    inf, sym, unfit = rec("inferential", inferential=0.9), rec("symmetric", symmetric=0.9), \
        rec("unfit", seen_acc=0.2)
    cells = {(0.8, 2): [inf, inf], (0.8, 3): [inf, sym],   # large gamma: 3 of 4 inferential
             (0.2, 2): [sym, sym], (0.2, 3): [unfit, unfit]}  # small gamma, deep: unfit
    v = phase_verdicts(mapped, cells, [0.2, 0.8], [2, 3])
    assert [x.status for x in v] == ["reproduced", "reproduced", "reproduced"]
    assert "0.75 of 4 runs inferential" in v[0].evidence
    assert "1.00 of 2 fitted runs symmetric" in v[1].evidence  # unfit runs left out
    # half is not a majority; no fitted run at small gamma; unfit as often at large gamma
    cells = {(0.8, 2): [inf, sym], (0.8, 3): [unfit, unfit],
             (0.2, 2): [unfit, unfit], (0.2, 3): [unfit, unfit]}
    v = phase_verdicts(mapped, cells, [0.2, 0.8], [2, 3])
    assert [x.status for x in v] == ["not reproduced", "inconclusive", "not reproduced"]
    assert "0 of 4 runs fitted" in v[1].evidence


def test_majority_verdict_needs_more_than_the_claim_majority():
    runs = [rec("symmetric", symmetric=0.8), rec("symmetric", symmetric=0.6),
            rec("inferential", inferential=0.9)]
    v = majority_verdict(C, runs, "symmetric", "inferential", "gamma=0.2", "fitted runs")
    assert v.status == "reproduced"  # 2 of 3 > 0.5
    assert v.evidence == ("gamma=0.2: 0.67 of 3 fitted runs symmetric (needs > 0.5); mean "
                          "symmetric fraction 0.467, inferential 0.300")
    half = majority_verdict(C, runs[1:], "symmetric", "inferential", "g", "runs")
    assert half.status == "not reproduced"  # 1 of 2 is not more than half


def test_group_gap_verdict():
    inf = [{"r": 0.1}, {"r": 0.2}]
    sym = [{"r": 0.4}]
    v = group_gap_verdict(C, inf, sym, "r", -1, 0.1)  # 0.15 vs 0.40: lower by 0.25 > 0.1
    assert v.status == "reproduced" and "lower by +0.250" in v.evidence
    assert group_gap_verdict(C, inf, sym, "r", +1, 0.1).status == "not reproduced"
    assert group_gap_verdict(C, inf, [], "r", -1, 0.1).status == "inconclusive"


def test_effect_verdict_pairs_runs():
    # lr 1 -> 2, paired by record order: rises 0.3, 0.4 -> mean 0.35, paired SE 0.05
    recs = [{"lr": 1, "inferential": 0.1, "symmetric": 0.5},
            {"lr": 1, "inferential": 0.2, "symmetric": 0.5},
            {"lr": 2, "inferential": 0.4, "symmetric": 0.2},
            {"lr": 2, "inferential": 0.6, "symmetric": 0.2}]
    v = effect_verdict(C, recs, "lr", [1, 2], 0.1)
    assert v.status == "reproduced" and "gain +0.350, paired SE 0.050" in v.evidence
    for r in recs[2:]:
        r["inferential"] -= 0.3  # rises 0.0 and 0.1: mean 0.05, SE 0.05: inconclusive
    assert effect_verdict(C, recs, "lr", [1, 2], 0.1).status == "inconclusive"
    for r in recs[2:]:
        r["inferential"] -= 0.2  # a fall
    assert effect_verdict(C, recs, "lr", [1, 2], 0.1).status == "not reproduced"


def test_undoes_verdict():
    from reasonlab.studies.anchors.verdicts import undoes_verdict

    inf = rec("inferential", inferential=0.9, layer1_rms=0.1)
    sym = rec("symmetric", symmetric=0.9, layer1_rms=1.0)
    v = undoes_verdict(C, [inf, inf, sym], [sym, sym, inf])  # 0.67 without, 0.33 with
    assert v.status == "reproduced" and "share 0.67 without" in v.evidence
    assert "layer-1 input RMS 0.400 vs 0.700" in v.evidence
    assert undoes_verdict(C, [inf, inf], [inf, sym, inf]).status == "not reproduced"
    v = undoes_verdict(C, [inf, sym], [sym, sym])  # 0.5 is no majority without it
    assert v.status == "inconclusive" and "no inferential majority" in v.evidence


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
