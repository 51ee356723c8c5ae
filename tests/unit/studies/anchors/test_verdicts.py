"""The anchor rules (studies/anchors/verdicts.py, _support/shares.py) on noisy runs: each run drawn
from a seeded generator (anchors/calibration.py `run`: a solution type with fractions and a seen
accuracy that classify back to it), never hand-made identical records."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.optimize import minimize_scalar

from reasonlab.studies import STUDIES
from reasonlab.studies.anchors._support import shares
from reasonlab.studies.anchors.calibration import run, runs
from reasonlab.studies.anchors.verdicts import (effect_verdict, group_gap_verdict,
                                               majority_verdict, no_fit_verdict, phase_verdicts,
                                               undoes_verdict)
from reasonlab.studies.kit import sequential
from reasonlab.studies.kit.base import Claim

C = Claim("k", "text", "src")
G_LO, G_HI = 0.21, 0.93


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def typed(r: np.random.Generator, kinds: str, **fields) -> list[dict]:
    """One run per letter: i(nferential), s(ymmetric), n(either), u(nfit)."""
    name = {"i": "inferential", "s": "symmetric", "n": "neither", "u": "unfit"}
    return [run(r, name[k], **fields) for k in kinds]


# -- the exact comparison of two shares ----------------------------------------------------------


def test_share_difference_decides_at_three_runs_a_side_only_when_unanimous():
    est = shares.share_difference(3, 3, 0, 3)
    assert est.lo > 0 and est.value == 1 and est.n == (3, 3)
    assert shares.more_often(est).status == "reproduced"
    # 3 of 3 against 2 of 3 (the old no-fit rule's reproduced case) decides nothing
    d = shares.more_often(shares.share_difference(3, 3, 2, 3))
    assert d.status == "inconclusive" and "spans 0 at 3 / 3 runs" in d.why
    assert shares.more_often(shares.share_difference(0, 3, 3, 3)).status == "not reproduced"
    assert shares.more_often(shares.share_difference(2, 2, 0, 2)).why.startswith("too few")
    assert shares.unanimity_needed() == 3


@pytest.mark.parametrize("n1,n2", [(3, 3), (4, 6)])
def test_share_difference_lower_bound_covers_at_every_rate_pair(n1, n2):
    """P(lower bound > true p1 - p2) <= 2.5% for every (p1, p2), by exact enumeration."""
    lo = np.array([[shares.lower_bound(a, n1, b, n2) for b in range(n2 + 1)]
                   for a in range(n1 + 1)])
    worst = 0.0
    for p1, p2 in itertools.product(np.linspace(0, 1, 21), repeat=2):
        prob = np.outer(sps.binom.pmf(np.arange(n1 + 1), n1, p1),
                        sps.binom.pmf(np.arange(n2 + 1), n2, p2))
        worst = max(worst, prob[lo > p1 - p2 + 1e-12].sum())
    assert worst <= 0.025


def test_score_statistic_uses_the_restricted_maximum_likelihood():
    r = rng(1)
    for _ in range(30):
        n1, n2 = r.integers(3, 10, 2)
        x1, x2, delta = r.integers(0, n1 + 1), r.integers(0, n2 + 1), r.uniform(-0.8, 0.8)
        z = shares._score(np.array([x1]), n1, np.array([x2]), n2, delta)[0]
        lo, hi = max(0, -delta), min(1, 1 - delta)

        def nll(p2):
            p1 = p2 + delta
            return -sps.binom.logpmf(x1, n1, p1) - sps.binom.logpmf(x2, n2, p2)

        p2 = minimize_scalar(nll, bounds=(lo + 1e-12, hi - 1e-12), method="bounded",
                             options={"xatol": 1e-10}).x
        p1 = p2 + delta
        var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
        want = (x1 / n1 - x2 / n2 - delta) / math.sqrt(var)
        assert z == pytest.approx(want, rel=1e-3, abs=1e-3) or (math.isinf(z) and
                                                                abs(want) > 1e3)


# -- majority (small-init, large-init) -----------------------------------------------------------


def test_majority_verdict_needs_the_exact_lower_bound_above_one_half():
    r = rng(2)
    two_of_three = typed(r, "ssi")  # the old rule reproduced this (2/3 > 0.5)
    v = majority_verdict(C, two_of_three, "symmetric", "inferential", "gamma=0.2",
                         "fitted runs")
    assert v.status == "inconclusive" and "unanimous ones from 6" in v.why
    assert "at the observed share 0.67 about 37 units decide" in v.why
    assert v.effect is not None and v.effect.n == (3,) and "95% CI" in v.summary()
    assert "2 of 3 fitted runs symmetric" in v.evidence
    assert majority_verdict(C, typed(r, "ssssss"), "symmetric", "inferential", "g",
                            "runs").status == \
        "reproduced"  # 6 of 6: lower bound 0.54
    many = runs(r, {"symmetric": 0.9}, 24)
    assert majority_verdict(C, many, "symmetric", "inferential", "g", "runs").status == \
        "reproduced"
    few = typed(r, "siiiiiiiiiii")  # 1 of 12: the upper bound is below one half
    assert majority_verdict(C, few, "symmetric", "inferential", "g", "runs").status == \
        "not reproduced"


def test_majority_verdict_one_run_reads_inconclusive():
    v = majority_verdict(C, typed(rng(3), "i"), "inferential", "symmetric", "g", "runs")
    assert v.status == "inconclusive" and v.why.startswith("too few units")


def grid(r, seeds: int, small: dict, large: dict, small_deep=None, large_deep=None) -> dict:
    return {(G_HI, 2): runs(r, small, seeds), (G_HI, 3): runs(r, small_deep or small, seeds),
            (G_LO, 2): runs(r, large, seeds), (G_LO, 3): runs(r, large_deep or large, seeds)}


def phase(cells) -> list:
    study = STUDIES["anchors-init-phase"]
    return phase_verdicts(lambda key: study.claim(f"{key}.mapped"), cells, [G_LO, G_HI], [2, 3])


def test_phase_verdicts_at_the_papers_effect_with_twelve_seeds():
    cells = grid(rng(4), 12, {"inferential": 0.95}, {"symmetric": 0.95},
                 large_deep={"unfit": 0.95, "symmetric": 0.05})
    v = phase(cells)
    assert [x.status for x in v] == ["reproduced"] * 3, [x.evidence for x in v]
    assert "depths 2, 3 pooled, one unit per run" in v[0].evidence
    assert v[2].effect is not None and v[2].effect.lo > 0  # the difference of unfit shares


def test_large_init_needs_three_fitted_runs():
    # the old rule took 1 fitted (symmetric) run of 6 as a majority
    r = rng(5)
    cells = {(G_HI, 2): typed(r, "iii"), (G_HI, 3): typed(r, "iii"),
             (G_LO, 2): typed(r, "suu"), (G_LO, 3): typed(r, "uuu")}
    v = phase(cells)[1]
    assert v.status == "inconclusive"
    assert "precondition not met (1 of 6 runs at gamma=0.21 fit the seen pairs" in v.why
    cells[G_LO, 2] = typed(r, "sss")  # 3 fitted, all symmetric: read, but 3 cannot clear 1/2
    v = phase(cells)[1]
    assert v.status == "inconclusive" and "underpowered" in v.why


def test_no_fit_needs_a_majority_and_an_exact_difference():
    r = rng(6)
    # the old rule's reproduced case: 3 of 3 unfit against 2 of 3
    v = no_fit_verdict(C, typed(r, "uuu"), typed(r, "uui"), "depth 3", (G_LO, G_HI))
    assert v.status == "inconclusive"
    assert v.effect is not None and v.effect.lo < 0 < v.effect.hi
    # one seed per cell and the largest possible gap: inconclusive
    v = no_fit_verdict(C, typed(r, "u"), typed(r, "i"), "depth 3", (G_LO, G_HI))
    assert v.status == "inconclusive" and "too few units" in v.why
    # 12 seeds: unfit everywhere at the large init, fitted at the small
    big = runs(r, {"unfit": 1.0}, 12)
    v = no_fit_verdict(C, big, runs(r, {"inferential": 0.5}, 12), "depth 3", (G_LO, G_HI))
    assert v.status == "reproduced" and "12 of 12 runs unfit" in v.evidence
    # unfit as often at the small init: no difference, whatever the majority says
    v = no_fit_verdict(C, big, runs(r, {"unfit": 1.0}, 12), "depth 3", (G_LO, G_HI))
    assert v.status == "inconclusive"
    # the large init fits: not reproduced
    v = no_fit_verdict(C, runs(r, {"symmetric": 0.9}, 12), runs(r, {"inferential": 1}, 12),
                       "depth 3", (G_LO, G_HI))
    assert v.status == "not reproduced"


# -- mechanism -----------------------------------------------------------------------------------


def with_key(recs: list[dict], r, mean: float, sd: float = 0.04) -> list[dict]:
    return [{**x, "resid": float(r.normal(mean, sd))} for x in recs]


def test_group_gap_verdict_needs_three_runs_of_each_type():
    r = rng(7)
    inf = with_key(typed(r, "i"), r, 0.5)
    sym = with_key(typed(r, "s"), r, 1.1)  # a gap of 0.6 on one run a side
    v = group_gap_verdict(C, inf, sym, "resid", -1, 0.1)
    assert v.status == "inconclusive" and v.why.startswith("too few units (1 / 1")
    v = group_gap_verdict(C, inf, [], "resid", -1, 0.1)
    assert v.status == "inconclusive" and "1 inferential / 0 symmetric" in v.why
    inf = with_key(typed(r, "iiii"), r, 0.7)
    sym = with_key(typed(r, "sss"), r, 1.05)
    v = group_gap_verdict(C, inf, sym, "resid", -1, 0.1)
    assert v.status == "reproduced" and v.effect.n == (4, 3) and v.effect.lo > 0
    assert "grouped by their measured solution type" in v.evidence
    same = with_key(typed(r, "iiii"), r, 1.05)
    assert group_gap_verdict(C, same, sym, "resid", -1, 0.1).status == "not reproduced"
    assert group_gap_verdict(C, inf, sym, "resid", +1, 0.1).status == "not reproduced"


# -- learning rate and weight decay --------------------------------------------------------------


def lr_runs(r, seeds: int, rise: float, unfit_at_high: float = 0.0) -> list[dict]:
    """Runs of an lr x wd grid: inferential fractions drawn around 0.15 (+ rise at lr 3)."""
    out = []
    for lr in (1.0, 3.0):
        for wd in (0.01, 1.0):
            for s in range(seeds):
                unfit = lr == 3.0 and r.random() < unfit_at_high
                x = run(r, "unfit" if unfit else "neither", lr=lr, wd=wd, seed=s)
                x["inferential"] = float(np.clip(r.normal(0.15 + (lr == 3.0) * rise, 0.1),
                                                 0, 0.49))
                out.append(x)
    return out


def test_large_init_stops_a_sequence_only_when_no_unit_to_come_can_fit_enough():
    """0 of 6 runs at the smallest gamma fit: one unit to come (2 runs, one per depth) cannot
    bring the fitted runs to 3, two units can."""
    r = rng(6)
    cells = {(G_HI, 2): typed(r, "iii"), (G_HI, 3): typed(r, "iii"),
             (G_LO, 2): typed(r, "uuu"), (G_LO, 3): typed(r, "uuu")}
    with sequential.adding(1):
        assert phase(cells)[1].curtailed
    with sequential.adding(2):
        assert not phase(cells)[1].curtailed


def test_effect_verdict_stops_a_sequence_when_most_runs_confidently_do_not_fit():
    """Every run at lr 3 unfit, 10 seeds: the fitted share there is confidently at most one
    half, so a sequential look with units to come stops; with half unfit it does not."""
    none_fit = lr_runs(rng(11), 10, 0.3, unfit_at_high=1.0)
    v = effect_verdict(C, none_fit, "lr", [1.0, 3.0], 0.1, "wd")
    assert v.status == "inconclusive" and not v.curtailed
    with sequential.adding(3):
        assert effect_verdict(C, none_fit, "lr", [1.0, 3.0], 0.1, "wd").curtailed
        half = lr_runs(rng(10), 10, 0.3, unfit_at_high=0.5)
        assert not effect_verdict(C, half, "lr", [1.0, 3.0], 0.1, "wd").curtailed


def test_effect_verdict_pairs_by_seed_and_averages_the_other_factor():
    r = rng(8)
    recs = lr_runs(r, 10, 0.3)
    v = effect_verdict(C, recs, "lr", [1.0, 3.0], 0.1, "wd")
    assert v.status == "reproduced" and v.effect.n == (10, 10)
    assert "10 seeds x 2 levels of wd" in v.evidence
    shuffled = [recs[i] for i in r.permutation(len(recs))]  # matched by seed, not by order
    assert effect_verdict(C, shuffled, "lr", [1.0, 3.0], 0.1, "wd").effect == v.effect
    flat = lr_runs(r, 10, 0.0)
    assert effect_verdict(C, flat, "lr", [1.0, 3.0], 0.1, "wd").status == "not reproduced"
    with pytest.raises(ValueError, match="unbalanced"):
        effect_verdict(C, recs[:-1], "lr", [1.0, 3.0], 0.1, "wd")


def test_effect_verdict_one_seed_and_a_large_rise_reads_inconclusive():
    v = effect_verdict(C, lr_runs(rng(9), 1, 0.5), "lr", [1.0, 3.0], 0.1, "wd")
    assert v.status == "inconclusive" and v.why.startswith("too few units")


def test_effect_verdict_requires_most_runs_to_fit_at_both_levels():
    v = effect_verdict(C, lr_runs(rng(10), 10, 0.3, unfit_at_high=0.5), "lr", [1.0, 3.0],
                       0.1, "wd")
    assert v.status == "inconclusive"
    assert v.why.startswith("precondition not met (most runs fit the seen pairs at both "
                            "levels; lr=3:")


# -- the embedding LayerNorm ---------------------------------------------------------------------


def arm(r, rates: dict, n: int, rms: float) -> list[dict]:
    return [{**x, "layer1_rms": float(r.normal(rms, 0.01))} for x in runs(r, rates, n)]


def test_undoes_verdict_is_an_exact_comparison():
    r = rng(11)
    without = [{**x, "layer1_rms": 0.07} for x in typed(r, "iis")]
    with_ = [{**x, "layer1_rms": 1.0} for x in typed(r, "ssi")]
    v = undoes_verdict(C, without, with_)  # 2/3 against 1/3: the old rule reproduced it
    assert v.status == "inconclusive"
    assert v.effect is not None and v.effect.lo < 0 and v.effect.n == (3, 3)
    v = undoes_verdict(C, arm(r, {"inferential": 1.0}, 12, 0.07),
                       arm(r, {"symmetric": 0.6}, 12, 1.0))
    assert v.status == "reproduced" and "layer-1 input RMS 0.0" in v.evidence


def test_undoes_verdict_one_run_a_side_reads_inconclusive():
    r = rng(12)
    v = undoes_verdict(C, arm(r, {"inferential": 1.0}, 1, 0.07),
                       arm(r, {"symmetric": 1.0}, 1, 1.0))
    assert v.status == "inconclusive" and v.why.startswith("too few units")


def test_undoes_verdict_requires_the_layernorm_runs_to_fit():
    r = rng(13)
    v = undoes_verdict(C, arm(r, {"inferential": 1.0}, 12, 0.07),
                       arm(r, {"unfit": 0.7}, 12, 1.0))  # not inferential because unfit
    assert v.status == "inconclusive"
    assert "with the embedding LayerNorm" in v.why and "fit the seen pairs" in v.why


def test_undoes_verdict_requires_an_inferential_majority_without_it():
    r = rng(14)
    v = undoes_verdict(C, arm(r, {"inferential": 0.4}, 12, 0.07),
                       arm(r, {"symmetric": 1.0}, 12, 1.0))
    assert v.status == "inconclusive" and "no inferential majority either" in v.why
