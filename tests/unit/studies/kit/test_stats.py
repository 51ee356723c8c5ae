"""The statistics layer (studies/kit/stats.py) against independent references: scipy.stats'
Welch test and exact binomial interval, Fieller's interval found by brute-force inversion of
the contrast test, and the power by Monte Carlo simulation."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from reasonlab.studies.kit import stats


def test_difference_is_welchs_interval():
    rng = np.random.default_rng(0)
    for n_a, n_b in ((3, 3), (3, 5), (8, 4)):
        a, b = rng.normal(0.6, 0.05, n_a), rng.normal(0.5, 0.09, n_b)
        est = stats.difference(a, b)
        ref = sps.ttest_ind(a, b, equal_var=False)
        ci = ref.confidence_interval(0.95)
        assert est.value == pytest.approx(a.mean() - b.mean())
        assert (est.lo, est.hi) == pytest.approx((ci.low, ci.high))
        assert est.df == pytest.approx(ref.df)
        assert est.n == (n_a, n_b)


def test_at_noise_is_the_union_of_welchs_interval_and_the_known_sd_one():
    """With `noise`, the interval is Welch's where the units spread as much as the noise
    (t > z), value +- z * noise * sqrt(1/n_a + 1/n_b) where they spread less -- tied units
    included, whose Welch interval is a point."""
    z = sps.norm.ppf(0.975)
    rng = np.random.default_rng(2)
    a, b = rng.normal(0.6, 0.05, 3), rng.normal(0.5, 0.05, 4)
    wide = stats.difference(a, b, noise=0.001)
    assert (wide.lo, wide.hi) == pytest.approx((stats.difference(a, b).lo,
                                                stats.difference(a, b).hi))
    tied = stats.difference([1.0] * 3, [0.95] * 4, noise=0.05)
    half = z * 0.05 * math.sqrt(1 / 3 + 1 / 4)
    assert (tied.lo, tied.hi) == pytest.approx((0.05 - half, 0.05 + half))
    assert stats.difference([1.0] * 3, [0.95] * 4).hi - 0.05 < 1e-12  # Welch: collapsed
    # a weighted contrast carries the weights: sd * sqrt(sum w^2 / n)
    g = {"x": [0.5] * 3, "y": [0.5] * 3, "z": [0.5] * 6}
    est = stats.contrast(g, {"x": 0.5, "y": 0.5, "z": -1.0}, noise=0.1)
    assert est.hi == pytest.approx(z * 0.1 * math.sqrt(0.25 / 3 * 2 + 1 / 6))


def test_contrast_of_a_mean_over_tasks_equals_the_per_unit_average_when_balanced():
    """A mean over two tasks of arm differences, as a contrast of four groups, has the value of
    the per-seed task averages' difference; its interval is Welch-Satterthwaite's."""
    rng = np.random.default_rng(1)
    g = {k: rng.normal(m, 0.05, 3) for k, m in (("a1", .6), ("b1", .5), ("a2", .7), ("b2", .7))}
    est = stats.contrast(g, {"a1": .5, "b1": -.5, "a2": .5, "b2": -.5})
    assert est.value == pytest.approx(((g["a1"] + g["a2"]) / 2 - (g["b1"] + g["b2"]) / 2).mean())
    var = sum(0.25 * g[k].var(ddof=1) / 3 for k in g)
    assert est.se == pytest.approx(math.sqrt(var))
    df = var ** 2 / sum((0.25 * g[k].var(ddof=1) / 3) ** 2 / 2 for k in g)
    assert est.df == pytest.approx(df)
    assert est.hi - est.value == pytest.approx(sps.t.ppf(0.975, df) * math.sqrt(var))


def test_paired_is_a_one_sample_interval_on_the_differences():
    a = np.array([0.61, 0.55, 0.70, 0.66])
    b = a - np.array([0.05, 0.02, 0.08, 0.04])
    est = stats.paired(a, b)
    ci = sps.ttest_1samp(a - b, 0).confidence_interval(0.95)
    assert (est.lo, est.hi) == pytest.approx((ci.low, ci.high))


def test_proportion_is_clopper_pearson():
    for k, n in ((0, 5), (3, 9), (8, 9), (9, 9)):
        est = stats.proportion(k, n)
        ci = sps.binomtest(k, n).proportion_ci(0.95, "exact")
        assert (est.lo, est.hi) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_fieller_interval_inverts_the_contrast_test():
    """Every r inside Fieller's interval leaves num - r * den unrejected at ALPHA; just outside,
    it is rejected (brute force over a grid of r, the definition of Fieller's interval)."""
    rng = np.random.default_rng(2)
    g = {"S": rng.normal(0.8, 0.04, 4), "D": rng.normal(0.3, 0.04, 4),
         "P": rng.normal(0.95, 0.04, 4)}
    est = stats.ratio(g, {"S": 1, "D": -1}, {"P": 1, "D": -1})
    m = {k: v.mean() for k, v in g.items()}
    assert est.value == pytest.approx((m["S"] - m["D"]) / (m["P"] - m["D"]))

    def rejected(r: float) -> bool:
        c = stats.contrast(g, {"S": 1 - 0, "D": -1 + r, "P": -r})
        return c.lo > 0 or c.hi < 0

    for r, inside in ((est.lo + 1e-3, True), (est.hi - 1e-3, True), (est.lo - 1e-2, False),
                      (est.hi + 1e-2, False)):
        assert rejected(r) is not inside, r


def test_fieller_interval_is_unbounded_when_the_denominator_is_not_away_from_zero():
    g = {"num": [0.2, 0.3, 0.25], "den": [0.01, -0.02, 0.015]}
    est = stats.ratio(g, {"num": 1}, {"den": 1})
    assert est.lo == -math.inf and est.hi == math.inf
    assert stats.at_least(est, 0.5).status == "inconclusive"


def test_power_matches_simulation():
    """The power quoted for 'underpowered' is what a Monte Carlo of the decision gives."""
    rng = np.random.default_rng(3)
    sd, n, effect = 0.05, 4, 0.08
    pilot = stats.difference(rng.normal(0, sd, 200), rng.normal(0, sd, 200))
    quoted = stats.power(pilot, effect, n)
    hits = sum(stats.difference(rng.normal(effect, sd, n), rng.normal(0, sd, n)).lo > 0
               for _ in range(4000))
    assert quoted == pytest.approx(hits / 4000, abs=0.04)
    need = stats.units_needed(pilot, effect)
    assert stats.power(pilot, effect, need) >= 0.8 > stats.power(pilot, effect, need - 1)


def test_underpowered_quotes_a_one_look_design_inside_a_sequential_look():
    """At a look's small nominal level the interval widens, but the power and the units quoted
    are a one-look design's at ALPHA: the same text as a fixed run's, not the look's own
    (smaller) power."""
    rng = np.random.default_rng(8)
    a, b = rng.normal(0.6, 0.1, 3), rng.normal(0.5, 0.1, 3)
    fixed = stats.underpowered(stats.difference(a, b), 0.08)
    with stats.nominal(0.001):
        est = stats.difference(a, b)
        look_power = stats.power(est, 0.08)
        early = stats.underpowered(est, 0.08)
    ours = stats.power(stats.difference(a, b), 0.08)
    assert f"{look_power:.2f}" != f"{ours:.2f}"
    assert early == fixed and fixed.startswith(f"underpowered (power {ours:.2f} at 3 units")


def test_too_few_units_decide_nothing_however_large_the_gain():
    for a, b in (([0.9], [0.1]), ([0.9, 0.91], [0.1, 0.12])):
        d = stats.better_by(stats.difference(a, b), 0.05)
        assert d.status == "inconclusive" and d.why.startswith("too few units")


def test_better_by_reads_bounds_and_the_minimum_effect():
    rng = np.random.default_rng(4)
    big = stats.difference(rng.normal(0.7, 0.02, 5), rng.normal(0.5, 0.02, 5))
    assert stats.better_by(big, 0.05).status == "reproduced"
    # significant but below the minimum effect: never reproduced; confidently below: not
    small = stats.difference(rng.normal(0.52, 0.002, 5), rng.normal(0.5, 0.002, 5))
    assert small.lo > 0 and stats.better_by(small, 0.05).status == "not reproduced"
    noisy = stats.difference(rng.normal(0.6, 0.2, 3), rng.normal(0.5, 0.2, 3))
    d = stats.better_by(noisy, 0.05)
    assert d.status == "inconclusive" and d.why.startswith("underpowered (power ")
    assert "needed" in d.why


def test_equivalence_needs_the_whole_interval_inside_the_margin():
    rng = np.random.default_rng(5)
    tight = stats.difference(rng.normal(0.5, 0.005, 5), rng.normal(0.5, 0.005, 5))
    assert stats.equivalent(tight, 0.03).status == "reproduced"
    wide = stats.difference(rng.normal(0.5, 0.05, 3), rng.normal(0.5, 0.05, 3))
    assert stats.equivalent(wide, 0.03).status == "inconclusive"
    apart = stats.difference(rng.normal(0.6, 0.005, 5), rng.normal(0.5, 0.005, 5))
    assert stats.equivalent(apart, 0.03).status == "not reproduced"


def test_majority_uses_the_exact_bound():
    assert stats.majority(stats.proportion(3, 3)).status == "inconclusive"  # bound 0.29
    assert stats.majority(stats.proportion(8, 9)).status == "reproduced"  # bound 0.52
    assert stats.majority(stats.proportion(7, 9)).status == "inconclusive"
    assert stats.majority(stats.proportion(1, 9)).status == "not reproduced"


def test_an_undecided_share_says_how_many_units_decide_at_the_observed_rate():
    """Against closed forms of the exact interval: none of n has the upper bound
    1 - ALPHA**(1/n), all of n the lower bound ALPHA**(1/n)."""
    def closed_none(share):
        return next(n for n in range(4, 500) if 1 - stats.ALPHA ** (1 / n) <= share)

    def closed_all(share):
        return next(n for n in range(3, 500) if stats.ALPHA ** (1 / n) > share)

    why = stats.majority(stats.proportion(0, 3), 0.273).why  # 0 of 3 cannot rule out 0.273
    assert f"at the observed share 0.00 about {closed_none(0.273)} units decide" in why
    assert closed_none(0.273) == 12 and "unanimous" not in why
    why = stats.majority(stats.proportion(5, 6), 0.5).why
    assert f"unanimous ones from {closed_all(0.5)}" in why and closed_all(0.5) == 6
    # 5 of 6 is 0.83: the first n > 6 at which round(0.83 n) of n clears 0.5, by a naive loop
    naive = next(n for n in range(7, 200)
                 if stats.proportion(round(5 / 6 * n), n).lo > 0.5)
    assert f"at the observed share 0.83 about {naive} units decide" in why
    assert "no count up to 200 decides at the observed share 0.50" in stats.majority(
        stats.proportion(3, 6), 0.5).why


def test_exact_estimates_are_exempt_from_replication():
    d = stats.better_by(stats.exact(0.3), 0.05)
    assert d.status == "reproduced" and "exact" in d.estimate.text()


def test_a_run_without_a_number_is_refused_not_imputed():
    with pytest.raises(ValueError, match="never imputed"):
        stats.difference([0.5, math.inf, 0.4], [0.3, 0.3, 0.3])


def test_estimate_text_says_interval_and_units():
    est = stats.difference([0.5, 0.52, 0.49], [0.45, 0.44, 0.47])
    assert est.text() == "+0.050 [+0.015, +0.085] (95% CI, n = 3 / 3)"
    assert "no interval" in stats.difference([0.5], [0.4]).text()



def test_a_ratio_too_wide_for_a_float_reads_an_infinite_bound():
    """Two units per arm that differ a thousandfold, read at a sequential look's tiny level:
    the log bound passes 709 and the ratio's upper bound is inf, not an OverflowError."""
    groups = {"a": [1.0, 1000.0], "b": [1.0, 1000.0]}
    with stats.nominal(1e-6):
        log = stats.contrast({g: np.log(v) for g, v in groups.items()}, {"a": 1.0, "b": -1.0})
        est = stats.log_contrast(groups, {"a": 1.0, "b": -1.0})
    assert log.hi > 709  # the case that overflowed
    assert est.hi == math.inf and est.lo == 0.0 and est.value == pytest.approx(1.0)
