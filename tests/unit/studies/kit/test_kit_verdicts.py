"""The kit's generic rules (studies/kit/verdicts.py) on noisy numbers drawn from seeded
generators: what each reads, what it says, and that a verdict carries its effect and why."""

import numpy as np
import pytest

from reasonlab.studies.kit.core import Claim, Verdict
from reasonlab.studies.kit.reporting import Report, verdict_record
from reasonlab.studies.kit.verdicts import (all_of, all_of_each, at_least, at_most,
                                            equal_verdict, exact_verdict, gain_verdict,
                                            no_gain_verdict, no_worse_verdict, requires,
                                            trend_verdict, verdict)

C = Claim("c", "a claim", "a source")


def draws(seed: int, mean: float, sd: float = 0.03, n: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).normal(mean, sd, n)


def test_gain_verdict_decides_from_the_interval_and_says_it():
    v = gain_verdict(C, draws(0, 0.8), draws(1, 0.5), ("A", "B"), "accuracy")
    assert v.status == "reproduced"
    assert v.effect is not None and v.effect.n == (3, 3) and v.effect.lo > 0
    assert "95% CI, n = 3 / 3" in v.evidence and "lower bound > 0" in v.evidence
    assert v.summary() == v.effect.text()


def test_one_seed_per_arm_and_a_large_gain_reads_inconclusive():
    v = gain_verdict(C, [0.95], [0.10], ("A", "B"), "accuracy")
    assert v.status == "inconclusive" and v.why.startswith("too few units (1 / 1")
    assert "too few units" in v.summary()


def test_gain_verdict_not_reproduced_only_when_confidently_below_the_minimum():
    assert gain_verdict(C, draws(2, 0.5, 0.005, 5), draws(3, 0.5, 0.005, 5), ("A", "B"),
                        "acc").status == "not reproduced"
    v = gain_verdict(C, draws(4, 0.5, 0.1), draws(5, 0.5, 0.1), ("A", "B"), "acc")
    assert v.status == "inconclusive" and v.why.startswith("underpowered")


def test_no_gain_and_no_worse_read_opposite_bounds():
    same = draws(6, 0.5, 0.005, 5), draws(7, 0.5, 0.005, 5)
    assert no_gain_verdict(C, *same, ("A", "B"), "acc", noise=0.005).status == "reproduced"
    assert no_worse_verdict(C, *same, ("A", "B"), "acc", noise=0.005).status == "reproduced"
    better = draws(8, 0.7, 0.005, 5), draws(9, 0.5, 0.005, 5)
    assert no_gain_verdict(C, *better, ("A", "B"), "acc", noise=0.005).status == "not reproduced"
    assert no_worse_verdict(C, *better, ("A", "B"), "acc", noise=0.005).status == "reproduced"
    assert no_worse_verdict(C, *better[::-1], ("A", "B"), "acc",
                            noise=0.005).status == "not reproduced"


def test_equal_verdict_is_two_one_sided_tests():
    v = equal_verdict(C, draws(10, 0.5, 0.004, 5), draws(11, 0.51, 0.004, 5), ("A", "B"),
                      "acc", 0.03, noise=0.004)
    assert v.status == "reproduced" and "per-seed SD 0.004 our runs show" in v.evidence
    # a point difference of 0 with a wide interval is not equality
    assert equal_verdict(C, draws(12, 0.5, 0.05), draws(13, 0.5, 0.05), ("A", "B"), "acc",
                         0.03, noise=0.05).status == "inconclusive"


def test_margin_rules_read_no_collapsed_interval():
    """Every seed of both arms in one mode (fit: 1.000; the other arm 0.95, tied): the Welch
    interval collapses onto the difference, the margin itself. The rules read it at least as
    wide as at the per-seed noise our runs show, so the ties decide nothing; the same numbers
    spread as the runs do decide."""
    fit, other = [1.0] * 3, [0.95] * 3
    for v in (no_gain_verdict(C, fit, other, ("A", "B"), "acc", 0.05, noise=0.05),
              no_worse_verdict(C, other, fit, ("A", "B"), "acc", 0.05, noise=0.05),
              equal_verdict(C, fit, other, ("A", "B"), "acc", 0.05, noise=0.05)):
        assert v.status == "inconclusive", (v.status, v.evidence)
        assert v.effect.hi - v.effect.lo > 0.1  # +-1.96 x 0.05 x sqrt(2 / 3) at least
    # far inside the margin for that noise: the noise interval does not block a real decision
    assert equal_verdict(C, [0.90, 0.95, 1.0], [0.92, 0.94, 0.99], ("A", "B"), "acc", 0.2,
                         noise=0.05).status == "reproduced"


def test_trend_verdict_reads_the_ends_of_the_sweep():
    falling = {64: draws(14, 0.85), 128: draws(15, 0.95), 256: draws(16, 0.55)}
    v = trend_verdict(C, falling, 0.2, "plain", "d", falling=True)
    assert v.status == "reproduced" and v.effect.value == pytest.approx(
        falling[64].mean() - falling[256].mean())
    assert trend_verdict(C, falling, 0.2, "plain", "d").status == "not reproduced"


def test_exact_verdict_says_it_is_exact():
    v = exact_verdict(C, 0.3, "FLOPs ratio", at_most(0.5))
    assert v.status == "reproduced" and v.effect.exact and "exact" in v.evidence
    v = exact_verdict(C, 0.7, "x", at_least(0.9), at_most(0.5))
    assert v.status == "inconclusive" and v.why


def test_verdict_is_a_yes_no_on_an_exact_quantity():
    assert verdict(C, True, "FLOPs").status == "reproduced"
    v = verdict(C, False, "FLOPs")
    assert v.status == "not reproduced" and "exact" in v.evidence


def test_requires_keeps_the_numbers_and_says_the_precondition():
    v = gain_verdict(C, draws(17, 0.8), draws(18, 0.5), ("A", "B"), "acc")
    out = requires(v, False, "no arm fits #0-#5")
    assert out.status == "inconclusive" and out.effect is v.effect
    assert out.why == "precondition not met (no arm fits #0-#5)"
    assert requires(v, True, "x") is v


def test_all_of_joins_statuses_and_whys():
    r = Verdict(C, "reproduced", "r")
    n = Verdict(C, "not reproduced", "n")
    i = Verdict(C, "inconclusive", "i", why="too few units (1 / 1 ...)")
    assert all_of(C, {"a": r, "b": r}).status == "reproduced"
    assert all_of(C, {"a": r, "b": n, "c": i}).status == "not reproduced"
    j = all_of(C, {"a": r, "b": i})
    assert j.status == "inconclusive" and j.why == "b: too few units (1 / 1 ...)"


def test_a_joined_verdict_is_curtailed_only_when_no_open_part_can_move():
    """A part out of reach of more units (curtailed) stops the whole only when every other
    undecided part is curtailed too: one still open could yet read "not reproduced"."""
    r = Verdict(C, "reproduced", "r")
    stuck = Verdict(C, "inconclusive", "s", why="precondition not met (x)", curtailed=True)
    open_ = Verdict(C, "inconclusive", "o", why="underpowered (...)")
    assert all_of(C, {"a": stuck, "b": r}).curtailed
    assert all_of(C, {"a": stuck, "b": stuck}).curtailed
    assert not all_of(C, {"a": stuck, "b": open_}).curtailed
    assert not all_of(C, {"a": r, "b": r}).curtailed
    assert not all_of(C, {"a": stuck, "b": Verdict(C, "not reproduced", "n")}).curtailed
    # a precondition on a curtailed verdict keeps it curtailed, met or not
    assert requires(stuck, False, "y").curtailed and requires(stuck, True, "y").curtailed
    assert requires(open_, False, "y", reachable=False).curtailed
    assert not requires(open_, False, "y").curtailed


def test_all_of_each_joins_every_parts_verdict_per_claim_by_key():
    c2 = Claim("d", "another", "s")
    got = all_of_each((C, c2), {"x": [Verdict(c2, "reproduced", ""), Verdict(C, "reproduced", "")],
                                "y": [Verdict(C, "not reproduced", ""),
                                      Verdict(c2, "reproduced", "")]})
    assert [(v.claim.key, v.status) for v in got] == [("c", "not reproduced"), ("d", "reproduced")]


def test_the_report_and_verdicts_json_carry_effect_interval_n_and_why(tmp_path):
    v = gain_verdict(C, [0.9], [0.2], ("A", "B"), "acc")
    rep = Report("t", tmp_path)
    rep.verdicts = [v]
    md = rep.markdown()
    assert "effect [95% CI] (n per arm); why inconclusive" in md
    assert "too few units (1 / 1" in md
    rec = verdict_record(v)
    assert rec["effect"]["n"] == [1, 1] and rec["effect"]["lo"] is None  # unbounded: null
    assert rec["why"].startswith("too few units")
