"""The abstract-symbols verdict rules (symbols/verdicts.py) on noisy numbers: per-seed values
drawn from a seeded generator around the means each case names, so that every rule is seen
deciding from its interval, not from a mean that happens to sit on the right side."""

import math

import numpy as np
import pytest

from reasonlab.studies.kit import sequential
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import trend_verdict
from reasonlab.studies.symbols.verdicts import (B_MIN, MIN_DROP, MLP_FIT_MIN, b_fixes_verdict,
                                                chance_verdict, conditioning_verdict,
                                                lead_verdict, n_to_reach, perplexity_verdict,
                                                ratio_verdict, reach_per_seed, reaches_verdict,
                                                readout_verdict)

C = Claim("k", "text", "src")
NS = [100, 300, 1000, 3000, 10_000]


def draw(rng, mean, sd, n=3):
    return np.clip(rng.normal(mean, sd, n), 0, 1).tolist()


def sweep(rng, means, sd=0.01, n=3):
    """x -> n per-seed values around each mean."""
    return {x: draw(rng, m, sd, n) for x, m in means.items()}


def curves(rng, n_star, seeds=3, sd_log=0.2):
    """Per-seed accuracy curves over NS, logistic in ln n, crossing 0.9 near n_star."""
    cross = np.log(n_star) + rng.normal(0, sd_log, seeds)
    mid = cross - math.log(4) / 2.4
    a = 0.5 + 0.5 / (1 + np.exp(-2.4 * (np.log(NS)[:, None] - mid[None, :])))
    a = np.clip(a + rng.normal(0, 0.005, a.shape), 0, 1)
    return {n: a[i].tolist() for i, n in enumerate(NS)}


# -- data efficiency ---------------------------------------------------------------------------


def test_n_to_reach_interpolates_in_log_n():
    curve = {100: 0.5, 1000: 0.7, 10_000: 0.9}
    assert n_to_reach(curve, 0.5) == 100
    assert n_to_reach(curve, 0.8) == pytest.approx(10 ** 3.5)  # halfway in log n
    assert n_to_reach(curve, 0.95) is None
    # per seed, along each seed's own curve: seed 1 starts above 0.9, seed 2 never gets there
    by_n = {100: [0.52, 0.93, 0.50], 1000: [0.71, 0.97, 0.55], 10_000: [0.91, 0.99, 0.6]}
    reached, below, above = reach_per_seed(by_n, 0.9)
    assert reached == [pytest.approx(10 ** (3 + 0.19 / 0.2))]
    assert below == ["seed 1"] and above == ["seed 2"]


def test_ratio_verdict():
    rng = np.random.default_rng(0)
    args = (0.9, 10 ** 0.5, 1.5, 10.0)
    fast, plain = curves(rng, 265), curves(rng, 2650)  # 10x fewer samples
    v = ratio_verdict(C, plain, fast, *args)
    assert v.status == "reproduced", v.evidence
    assert v.effect.lo > 1.5 and v.effect.value >= 10 ** 0.5 and v.effect.n == (3, 3)
    assert "n to reach 0.9 per seed: transformer " in v.evidence
    # no gain, five seeds: the ratio's upper bound is below 3.16
    same = ratio_verdict(C, curves(rng, 800, 5), curves(rng, 800, 5), *args)
    assert same.status == "not reproduced" and same.effect.hi < 10 ** 0.5, same.evidence
    # one seed per arm and a tenfold gain: no interval, nothing decided
    one = ratio_verdict(C, curves(rng, 2650, 1), curves(rng, 265, 1), *args)
    assert one.status == "inconclusive" and one.why.startswith("too few units")
    # a ratio of about 2.5 at 3 seeds sits between the thresholds, though 3 seeds would
    # separate a tenfold ratio from them
    mid = ratio_verdict(C, curves(rng, 660), curves(rng, 265), *args)
    assert mid.status == "inconclusive" and 1.5 < mid.effect.value < 10 ** 0.5, mid.evidence
    assert mid.why == ("the interval spans a threshold (power 1.00 at 3 units for a ratio of 10: "
                       "the effect lies near it)")


def test_ratio_verdict_reports_seeds_without_a_number_and_never_imputes_them():
    rng = np.random.default_rng(1)
    args = (0.9, 10 ** 0.5, 1.5, 10.0)
    fast = curves(rng, 265, 4)
    # the plain arm never reaches 0.9 in any seed: no ratio at all (not "> 10000 / 265")
    flat = {n: draw(rng, 0.6, 0.02) for n in NS}
    v = ratio_verdict(C, flat, fast, *args)
    assert v.status == "inconclusive" and v.effect is None and "too few units" in v.why
    assert "seed 0, seed 1, seed 2 not by n=10000" in v.evidence
    # one plain seed of four never reaches: left out; the slowest left out can only understate
    # the ratio, so a reproduced reading stands
    plain = curves(rng, 2650, 4)
    plain_censored = {n: [*a[:3], 0.6] for n, a in plain.items()}
    v = ratio_verdict(C, plain_censored, fast, *args)
    assert v.status == "reproduced" and v.effect.n == (3, 4) and "seed 3 not by" in v.evidence
    # a modified seed that never reaches is the modification's slowest: leaving it out could
    # manufacture the ratio, so the same numbers read inconclusive
    fast_censored = {n: [*a[:3], 0.6] for n, a in fast.items()}
    v = ratio_verdict(C, plain, fast_censored, *args)
    assert v.status == "inconclusive" and v.why.startswith("precondition not met")
    assert "overstate" in v.why


# -- MLP vs transformer --------------------------------------------------------------------------


def test_chance_and_reaches_verdicts():
    rng = np.random.default_rng(2)
    # the share of seeds at most 0.55 must have its exact lower bound above one half: 6
    # unanimous seeds decide it, 5 (the study's cpu seeds) cannot
    fitted = sweep(rng, {1000: 1.0, 10_000: 0.99}, 0.005, 6)
    at_chance = sweep(rng, {1000: 0.5, 10_000: 0.5}, 0.01, 6)
    v = chance_verdict(C, at_chance, fitted, 0.5, 0.55)
    assert v.status == "reproduced" and v.effect.lo > 0.5, v.evidence
    assert "training accuracy n=1000: " in v.evidence
    five = {n: x[:5] for n, x in at_chance.items()}
    assert chance_verdict(C, five, fitted, 0.5, 0.55).status == "inconclusive"
    above = sweep(rng, {1000: 0.5, 10_000: 0.65}, 0.01, 6)  # above chance at one n
    assert chance_verdict(C, above, fitted, 0.5, 0.55).status == "not reproduced"
    # seeds that split: 2 of 6 generalise (0.9), 4 at chance; the share spans one half
    split = {1000: [0.5, 0.5, 0.5, 0.5, 0.9, 0.9], 10_000: draw(rng, 0.5, 0.01, 6)}
    v = chance_verdict(C, split, fitted, 0.5, 0.55)
    assert v.status == "inconclusive" and "4 of 6 <= 0.55" in v.evidence
    # at chance, but the MLP never fit its training examples: that says nothing
    unfit = sweep(rng, {1000: 0.62, 10_000: 0.58}, 0.02)
    v = chance_verdict(C, at_chance, unfit, 0.5, 0.55)
    assert v.status == "inconclusive" and v.why.startswith("precondition not met")
    assert "does not fit its training examples" in v.why and f"below {MLP_FIT_MIN}" in v.why
    # a sequential look with units to come stops there: the training accuracy is confidently
    # below the bar; one just under it at 3 seeds may yet fit
    assert not v.curtailed
    with sequential.adding(3):
        assert chance_verdict(C, at_chance, unfit, 0.5, 0.55).curtailed
        near = {n: [MLP_FIT_MIN - 0.01, MLP_FIT_MIN + 0.02, MLP_FIT_MIN - 0.02] for n in unfit}
        v = chance_verdict(C, at_chance, near, 0.5, 0.55)
        assert v.why.startswith("precondition not met") and not v.curtailed
    one = chance_verdict(C, sweep(rng, {1000: 0.5}, 0.01, 1), sweep(rng, {1000: 1.0}, 0, 1),
                         0.5, 0.55)
    assert one.status == "inconclusive"

    reached = sweep(rng, {100: 0.5, 1000: 0.96}, 0.01)
    v = reaches_verdict(C, reached, 0.9)
    assert v.status == "reproduced" and v.effect.lo >= 0.9 and "n=1000" in v.effect.what
    short = sweep(rng, {100: 0.95, 1000: 0.85}, 0.01)  # only the largest n counts
    assert reaches_verdict(C, short, 0.9).status == "not reproduced"
    assert reaches_verdict(C, sweep(rng, {1000: 0.99}, 0.01, 1), 0.9).status == "inconclusive"


# -- the language model --------------------------------------------------------------------------


def test_perplexity_verdict():
    rng = np.random.default_rng(3)
    # seeds differ by 0.3 in perplexity, the modification lowers each by about 0.15: paired by
    # seed the drop is clear although the arms' spreads overlap
    seed = rng.normal(0, 0.3, 4)
    plain = 7.9 + seed + rng.normal(0, 0.02, 4)
    better = 7.75 + seed + rng.normal(0, 0.02, 4)
    v = perplexity_verdict(C, plain, better, 0.13)
    assert v.status == "reproduced" and v.effect.lo > 0 and v.effect.n == (4, 4), v.evidence
    assert "paired by seed" in v.effect.what
    assert perplexity_verdict(C, better, plain, 0.13).status == "not reproduced"
    one = perplexity_verdict(C, plain[:1], plain[:1] - 1.0, 0.13)  # a large drop, one seed
    assert one.status == "inconclusive" and one.why.startswith("too few units")
    noisy = perplexity_verdict(C, plain, 7.85 + rng.normal(0, 0.3, 4), 0.13)  # unpaired noise
    assert noisy.status == "inconclusive" and noisy.why.startswith("underpowered")


# -- the kernel's conditioning -------------------------------------------------------------------


def conds(rng, ratios, k=3, sd=0.6):
    """task -> setting -> cond(N) per replicate, lognormal around plain = ratio x 100."""
    return {t: {"plain": np.exp(rng.normal(math.log(100 * r), sd, k)).tolist(),
                "a + b": np.exp(rng.normal(math.log(100), sd, k)).tolist()}
            for t, r in ratios.items()}


def test_conditioning_verdict():
    rng = np.random.default_rng(4)
    v = conditioning_verdict(C, conds(rng, {"same/different": 4000, "random": 400}), "a + b")
    assert v.status == "reproduced" and v.effect.lo >= 2, v.evidence
    assert "cond(N) per replicate plain" in v.evidence
    # one task no better (ratio 1), five replicates: its upper bound is below 2
    bad = conds(rng, {"same/different": 4000, "random": 1}, k=5, sd=0.2)
    assert conditioning_verdict(C, bad, "a + b").status == "not reproduced"
    one = conditioning_verdict(C, conds(rng, {"same/different": 4000}, k=1), "a + b")
    assert one.status == "inconclusive" and one.why.endswith("so run more seeds)")
    singular = conds(rng, {"same/different": 4000}, k=4)
    singular["same/different"]["a + b"][0] = math.inf
    v = conditioning_verdict(C, singular, "a + b")
    assert v.status == "inconclusive" and "N singular" in v.why


def test_kernel_replicates_draw_their_own_estimates():
    """cond(N) is a Monte Carlo estimate: another replicate's draws give another N, so the
    conditioning claim is decided over replicates, not exempt as a deterministic quantity."""
    from reasonlab.analysis.kernel import condition_number
    from reasonlab.studies.symbols.analysis import kernel_matrices
    from reasonlab.studies.symbols.common import MODEL, SYMBOLS
    from reasonlab.studies.symbols.kernel import SETTINGS, TEMPLATE_TASKS

    task = {"same/different": TEMPLATE_TASKS["same/different"]}
    plain = {"plain": SETTINGS["plain"]}
    a, a2, b = (kernel_matrices(task, plain, MODEL["smoke"], SYMBOLS["smoke"], 2, 8,
                                replicate=r)["same/different"]["plain"] for r in (0, 0, 1))
    assert np.array_equal(a, a2)  # a replicate is reproducible
    assert condition_number(a) != condition_number(b)


# -- read-out only vs all layers -----------------------------------------------------------------


def test_readout_and_lead_verdicts():
    rng = np.random.default_rng(5)
    ro = sweep(rng, {1000: 0.81, 10_000: 0.95}, 0.01)
    train = sweep(rng, {1000: 0.99, 10_000: 0.96}, 0.01)
    v = readout_verdict(C, ro, train, ("d_model 512, n=10000", draw(rng, 0.97, 0.01)))
    assert v.status == "reproduced" and v.effect.lo >= 0.9, v.evidence
    assert "(train 0.9" in v.evidence and "widest frozen network (d_model 512" in v.evidence
    low = sweep(rng, {1000: 0.7, 10_000: 0.85}, 0.01)
    assert readout_verdict(C, low, train, ("w", [0.9])).status == "not reproduced"
    one = readout_verdict(C, sweep(rng, {10_000: 0.99}, 0, 1), train, ("w", [0.9]))
    assert one.status == "inconclusive"

    full = sweep(rng, {1000: 0.96, 10_000: 1.0}, 0.005)  # lead about +0.10 at 1k, +0.05 at 10k
    ro_low = sweep(rng, {1000: 0.76, 10_000: 0.90}, 0.01)  # lead about +0.15 on average
    v = lead_verdict(C, full, ro_low)
    assert v.status == "reproduced" and v.effect.value >= 0.1, v.evidence
    assert "lead over the converged read-out at n=1000: +0.2" in v.evidence
    close = sweep(rng, {1000: 0.83, 10_000: 0.96}, 0.005)  # lead about +0.015
    assert lead_verdict(C, close, ro).status == "not reproduced"
    one = lead_verdict(C, sweep(rng, {1000: 1.0}, 0, 1), sweep(rng, {1000: 0.5}, 0, 1))
    assert one.status == "inconclusive" and one.why.startswith("too few units")


# -- copying against the width -------------------------------------------------------------------


def test_b_fixes_verdict_needs_a_fall_to_remove():
    rng = np.random.default_rng(6)
    plain = sweep(rng, {64: 0.9, 128: 0.6, 256: 0.3}, 0.03)
    fell = trend_verdict(C, plain, MIN_DROP, "transformer", "d", falling=True)
    assert fell.status == "reproduced"
    flat_b = sweep(rng, {64: 0.98, 128: 0.98, 256: 0.97}, 0.01)
    v = b_fixes_verdict(C, plain, flat_b, fell)
    assert v.status == "reproduced" and v.effect.hi < MIN_DROP / 2, v.evidence
    falling_b = sweep(rng, {64: 0.98, 128: 0.8, 256: 0.6}, 0.01)
    assert b_fixes_verdict(C, plain, falling_b, fell).status == "not reproduced"
    low_b = sweep(rng, {64: 0.8, 128: 0.8, 256: 0.8}, 0.01)  # flat, but below B_MIN
    assert b_fixes_verdict(C, plain, low_b, fell).status == "not reproduced"
    assert B_MIN > 0.8
    # an inconclusive fall is no fall: a small noisy drop of the plain model
    small = sweep(rng, {64: 0.6, 128: 0.52, 256: 0.45}, 0.06)
    unsure = trend_verdict(C, small, MIN_DROP, "transformer", "d", falling=True)
    assert unsure.status == "inconclusive"
    v = b_fixes_verdict(C, small, flat_b, unsure)
    assert v.status == "inconclusive" and v.why.startswith("precondition not met")
    assert "no fall to remove (inverse scaling inconclusive)" in v.why
    none = Verdict(C, "not reproduced", "no fall")
    assert b_fixes_verdict(C, plain, flat_b, none).status == "inconclusive"
    # one seed per width: a perfectly flat b term decides nothing
    one = b_fixes_verdict(C, sweep(rng, {64: 0.9, 256: 0.1}, 0.01, 1),
                          sweep(rng, {64: 0.99, 256: 0.99}, 0.01, 1), fell)
    assert one.status == "inconclusive"
