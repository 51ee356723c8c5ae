"""The FPT studies' verdict rules on noisy numbers (a seeded generator draws each seed's metric
around the arm's mean): each status reachable, one seed per arm decides nothing, and every
precondition turns a verdict inconclusive with its reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reasonlab.studies import STUDIES
from reasonlab.studies.fpt._support.freezing import ALL, OUT, OUT_IN, OUT_LN, OUT_POS
from reasonlab.studies.fpt.common import FPT, FULL, LSTM, RANDOM, RANDOM_LSTM, metric
from reasonlab.studies.fpt.verdicts import (capped, convergence_verdict, factor_verdict,
                                            first_step, freeze_verdicts, learned, lstm_verdicts,
                                            no_help_verdict, share_verdict, speedup,
                                            universal_verdicts, unlearned)
from reasonlab.studies.kit import sequential, stats

U = STUDIES["fpt-universal"].claim
L = STUDIES["fpt-lstm"].claim


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def draw(rng, means, sd=0.01, n=3):
    """task -> arm -> mean  ->  task -> arm -> n noisy seeds around it."""
    return {t: {a: rng.normal(m, sd, n).tolist() for a, m in arms.items()}
            for t, arms in means.items()}


def row(fpt, full, random, lstm=0.5, random_lstm=0.5):
    return {FPT: fpt, FULL: full, RANDOM: random, LSTM: lstm, RANDOM_LSTM: random_lstm}


def test_universal_reproduced_on_noisy_seeds(rng):
    """Each task's interval is at least as wide as at its measured per-seed noise (digits:
    0.032, kit stats.at_noise), so at 3 seeds FPT must sit a little above Full there."""
    values = draw(rng, {"bit memory": row(0.93, 0.92, 0.55, 0.5, 0.5),
                        "digits": row(0.965, 0.95, 0.80, 0.9, 0.6)})
    match, worse = universal_verdicts(U, values)
    assert (match.status, worse.status) == ("reproduced", "reproduced")
    assert "bit memory (reproduced)" in match.evidence and "digits (reproduced)" in match.evidence
    assert worse.effect is not None and worse.effect.n == (3, 3, 3, 3)
    assert "FPT - frozen random per task: bit memory +0.3" in worse.evidence


def test_fpt_far_below_full_on_one_task_fails_every_task_aggregation(rng):
    """FPT at chance on bit XOR where Full learns it (SmolLM2 at cpu scale): not reproduced,
    however well FPT does elsewhere."""
    values = draw(rng, {"bit XOR": row(0.52, 1.0, 0.5), "digits": row(0.95, 0.95, 0.8)})
    match, _ = universal_verdicts(U, values)
    assert match.status == "not reproduced" and "bit XOR (not reproduced)" in match.evidence


def test_universal_inconclusive_when_the_interval_straddles_the_margin(rng):
    values = draw(rng, {"digits": row(0.90, 0.95, 0.88)}, sd=0.04)
    match, worse = universal_verdicts(U, values)
    assert match.status == "inconclusive" and "underpowered" in match.why
    assert worse.status == "inconclusive"


def test_no_random_gain_is_not_reproduced(rng):
    values = draw(rng, {"digits": row(0.9, 0.9, 0.9), "ListOps (fpt2021)": row(0.3, 0.3, 0.3)},
                  sd=0.005)
    assert universal_verdicts(U, values)[1].status == "not reproduced"


def test_one_seed_per_arm_and_a_large_gain_reads_inconclusive(rng):
    values = draw(rng, {"bit memory": row(0.95, 0.95, 0.8, 0.5, 0.5)}, n=1)
    for v in universal_verdicts(U, values) + lstm_verdicts(L, values):
        assert v.status == "inconclusive" and "too few units" in v.why, v.claim.key


def test_tasks_no_arm_learns_are_left_out(rng):
    values = draw(rng, {"bit XOR": row(0.5, 0.51, 0.5), "digits": row(0.965, 0.95, 0.8)})
    match, worse = universal_verdicts(U, values)
    assert match.status == "reproduced" and worse.status == "reproduced"
    assert "confidently below chance + 0.1): bit XOR" in match.evidence
    assert "confidently below chance + 0.1): bit XOR" in worse.evidence
    nothing = draw(rng, {"bit XOR": row(0.5, 0.52, 0.5, 0.5, 0.5)})
    v = universal_verdicts(U, nothing) + lstm_verdicts(L, nothing)
    assert all(x.status == "inconclusive" and "precondition not met" in x.why for x in v)


def test_lstm_verdicts(rng):
    values = draw(rng, {"bit memory": row(0.93, 0.92, 0.6, 0.5, 0.5),
                        "bit XOR": row(0.5, 0.5, 0.5, 0.5, 0.5),
                        "digits": row(0.95, 0.95, 0.85, 0.9, 0.6)})
    worse, random = lstm_verdicts(L, values)
    assert worse.status == "reproduced" and "confidently below chance + 0.1): bit XOR" \
        in worse.evidence
    assert random.status == "reproduced"  # mean of +0.1 and +0.25
    close = draw(rng, {"bit memory": row(0.93, 0.9, 0.7, 0.88, 0.7)})
    worse, random = lstm_verdicts(L, close)
    assert worse.status == "not reproduced" and random.status == "not reproduced"


def test_each_study_judges_only_its_own_claims(rng):
    values = draw(rng, {"bit memory": row(0.93, 0.92, 0.6)})
    assert [v.claim.key for v in universal_verdicts(U, values)] == [
        c.key for c in STUDIES["fpt-universal"].claims]
    assert [v.claim.key for v in lstm_verdicts(L, values)] == [
        c.key for c in STUDIES["fpt-lstm"].claims]


A = STUDIES["fpt-freeze-ablation"].claim
SLIDES = {"ListOps (fpt2021)": {OUT: 0.15, OUT_IN: 0.17, OUT_POS: 0.35, OUT_LN: 0.36, ALL: 0.38},
          "digits": {OUT: 0.23, OUT_IN: 0.85, OUT_POS: 0.93, OUT_LN: 0.96, ALL: 0.98}}
"""The slides' freeze tables (ListOps, MNIST for digits)."""


def test_each_factor_reads_its_one_group_arm(rng):
    values = draw(rng, SLIDES)
    for arm in (OUT_LN, OUT_IN, OUT_POS):
        assert factor_verdict(A("layernorm"), values, arm, OUT, ALL).status == "reproduced"
    v = share_verdict(A("layernorm-first"), values, OUT_LN, OUT, ALL)
    assert v.status == "reproduced" and v.effect.lo >= 0.75


def test_a_factor_that_adds_nothing_is_not_reproduced_even_when_fpt_gains(rng):
    """Positions carry it and the norms add nothing: the norms' own arm (output + layernorm)
    equals output only, so 'layernorm matters' fails, however much FPT gains."""
    flat = draw(rng, {"ListOps (fpt2021)": {OUT: 0.15, OUT_LN: 0.15, OUT_POS: 0.3, ALL: 0.38},
                      "digits": {OUT: 0.25, OUT_LN: 0.25, OUT_POS: 0.8, ALL: 0.81}})
    assert factor_verdict(A("layernorm"), flat, OUT_LN, OUT, ALL).status == "not reproduced"
    assert share_verdict(A("layernorm-first"), flat, OUT_LN, OUT, ALL).status == (
        "not reproduced")
    assert factor_verdict(A("positions"), flat, OUT_POS, OUT, ALL).status == "reproduced"


def test_factor_and_share_inconclusive_bands(rng):
    small = draw(rng, {"digits": {OUT: 0.25, OUT_LN: 0.29, ALL: 0.9}}, sd=0.03)
    v = factor_verdict(A("layernorm"), small, OUT_LN, OUT, ALL)
    assert v.status == "inconclusive"
    assert v.why.startswith(("underpowered (power", "the interval spans a threshold (power"))
    most = draw(rng, {"digits": {OUT: 0.2, OUT_LN: 0.69, ALL: 0.9}}, sd=0.05)  # 0.7 of it
    assert share_verdict(A("layernorm-first"), most, OUT_LN, OUT, ALL).status == "inconclusive"
    nothing = draw(rng, {"digits": {OUT: 0.1, OUT_LN: 0.1, ALL: 0.12}})
    v = factor_verdict(A("layernorm"), nothing, OUT_LN, OUT, ALL)
    assert v.status == "inconclusive" and "learns no task" in v.evidence
    assert "precondition not met" in v.why


def test_freeze_rules_need_three_seeds(rng):
    one = draw(rng, SLIDES, n=1)
    for rule in (factor_verdict, share_verdict):
        v = rule(A("layernorm"), one, OUT_LN, OUT, ALL)
        assert v.status == "inconclusive" and "too few units" in v.why


def test_a_share_above_one_is_capped_for_display(rng):
    """Output + layernorm beats FPT itself: a share above 1, shown as 1 (and uncapped in the
    evidence); the decision is the uncapped interval's."""
    over = draw(rng, {"digits": {OUT: 0.25, OUT_LN: 0.95, ALL: 0.80}})
    v = share_verdict(A("layernorm-first"), over, OUT_LN, OUT, ALL)
    assert v.status == "reproduced" and v.effect.value == 1.0 and v.effect.hi == 1.0
    assert "uncapped 1.2" in v.evidence and "capped to [0, 1]" in v.effect.what
    est = capped(stats.ratio({"a": [2.0, 2.1, 1.9], "b": [1.0, 1.1, 0.9]}, {"a": 1.0},
                             {"b": 1.0}))
    assert (est.value, est.lo, est.hi) == (1.0, 1.0, 1.0)


F = STUDIES["fpt-freeze-fewer"].claim


def test_no_help_verdicts(rng):
    worse = draw(rng, {"ListOps (fpt2021)": {FPT: 0.35, "+ attention": 0.27},
                       "digits": {FPT: 0.93, "+ attention": 0.92}})
    v = no_help_verdict(F("attention-no-help"), worse, "+ attention", FPT, FPT)
    assert v.status == "reproduced"
    # equal on ListOps, three seeds that agree to 0.01: at ListOps' measured per-seed SD
    # (0.06) the interval reaches past the margin, so quiet seeds do not decide "no better"
    same = draw(rng, {"ListOps (fpt2021)": {FPT: 0.35, "+ attention": 0.35}})
    v = no_help_verdict(F("attention-no-help"), same, "+ attention", FPT, FPT)
    assert v.status == "inconclusive" and v.effect.hi > 0.05
    helps = draw(rng, {"digits": {FPT: 0.7, "+ attention": 0.9}})
    assert no_help_verdict(F("attention-no-help"), helps, "+ attention", FPT,
                           FPT).status == "not reproduced"
    a_bit = draw(rng, {"digits": {FPT: 0.8, "+ attention": 0.84}}, sd=0.03)
    v = no_help_verdict(F("attention-no-help"), a_bit, "+ attention", FPT, FPT)
    assert v.status == "inconclusive" and "underpowered" in v.why


def test_no_help_needs_the_arm_to_have_learned_each_task(rng):
    """MiniLM + both at cpu scale: digits collapses to chance (9.9%) at the authors' lr. That
    arm is trivially no better there: the task tests nothing, so the claim reads inconclusive,
    not reproduced."""
    collapsed = draw(rng, {"ListOps (fpt2021)": {FPT: 0.35, "+ both": 0.28},
                           "digits": {FPT: 0.94, "+ both": 0.099}})
    v = no_help_verdict(F("both-no-help"), collapsed, "+ both", FPT, FPT)
    assert v.status == "inconclusive"
    assert "precondition not met (+ both is not 0.1 above chance on digits" in v.why
    # confidently at chance: more seeds cannot lift it, so a sequential look stops there
    with sequential.adding(3):
        assert no_help_verdict(F("both-no-help"), collapsed, "+ both", FPT, FPT).curtailed


def test_no_help_is_judged_on_every_task_not_the_mean(rng):
    """+ attention helps ListOps by 16 points and costs digits 8 (SmolLM2 at cpu scale): the
    mean over the two tasks is +0.04, which a mean rule could not reject; task by task it
    helps on ListOps, so 'no help' is not reproduced."""
    values = draw(rng, {"ListOps (fpt2021)": {FPT: 0.225, "+ attention": 0.389},
                        "digits": {FPT: 0.932, "+ attention": 0.854}})
    v = no_help_verdict(F("attention-no-help"), values, "+ attention", FPT, FPT)
    assert v.status == "not reproduced"
    assert "ListOps (fpt2021) (not reproduced)" in v.evidence


def test_a_task_near_the_learned_level_is_not_left_out(rng):
    """SmolLM2's FPT arm on ListOps: 32.0 at seed 0, 22.5 over 3 seeds. Its mean can fall
    under chance + 0.1 by noise; read on the mean, the gate would drop ListOps, where + attention
    helps, and 'no help' would pass on digits alone. Only a task confidently below the level
    is left out."""
    values = {"ListOps (fpt2021)": {FPT: [0.32, 0.13, 0.12], "+ attention": [0.40, 0.38, 0.39]},
              "digits": draw(rng, {"d": {FPT: 0.93, "+ attention": 0.92}})["d"]}
    assert np.mean(values["ListOps (fpt2021)"][FPT]) < 0.2
    v = no_help_verdict(F("attention-no-help"), values, "+ attention", FPT, FPT)
    assert v.status != "reproduced" and "ListOps (fpt2021) (" in v.evidence
    assert "confidently below chance + 0.1): none" in v.evidence
    chance = draw(rng, {"bit XOR": {FPT: 0.5, "+ attention": 0.5}}, sd=0.02)
    assert unlearned("bit XOR", chance, [FPT, "+ attention"])
    assert not unlearned("bit XOR", draw(rng, {"bit XOR": {FPT: 0.5}}, n=1), [FPT])


def test_no_help_one_seed_reads_inconclusive(rng):
    values = draw(rng, {"digits": {FPT: 0.93, "+ attention": 0.5}}, n=1)
    v = no_help_verdict(F("attention-no-help"), values, "+ attention", FPT, FPT)
    assert v.status == "inconclusive" and "too few units" in v.why


def curve(accs, every=10):
    return [{"step": every * (i + 1), "acc": a} for i, a in enumerate(accs)]


C = STUDIES["fpt-convergence"].claim("faster")
LENGTHS = {t: {FPT: 1000, RANDOM: 4000} for t in ("bit memory", "digits", "ListOps (fpt2021)")}


def steps(rng, fpt, random, n=3, sd=0.2):
    """Steps to the level per seed: lognormal around each arm's geometric mean (None: never)."""
    def one(mean):
        return [math.inf] * n if mean is None else np.exp(rng.normal(math.log(mean), sd,
                                                                     n)).round().tolist()
    return {FPT: one(fpt), RANDOM: one(random)}


def test_first_step_on_hand_made_curves():
    assert first_step(curve([0.5, 0.7, 0.9]), 0.8) == 30
    assert math.isinf(first_step(curve([0.5, 0.6]), 0.8))
    assert first_step([{"step": 5, "acc": 0.8, "acc_by_masked": [1.0, 0.6]}], 0.7) == math.inf


def test_convergence_reproduced_from_log_steps_over_every_reaching_run(rng):
    s = {"bit memory": steps(rng, 600, 2400), "digits": steps(rng, 500, 2000)}
    v = convergence_verdict(C, s, LENGTHS)
    assert v.status == "reproduced" and v.effect.scale == "log" and v.effect.lo > 1.5
    assert v.effect.n == (3, 3, 3, 3)
    assert speedup(s["digits"]) == pytest.approx(
        math.exp(np.mean(np.log(s["digits"][RANDOM])) - np.mean(np.log(s["digits"][FPT]))))


def test_convergence_not_reproduced_without_a_speedup(rng):
    s = {"bit memory": steps(rng, 600, 600, sd=0.1), "digits": steps(rng, 500, 550, sd=0.1)}
    v = convergence_verdict(C, s, LENGTHS)
    assert v.status == "not reproduced" and v.effect.hi < 1.5


def test_a_speedup_measured_tightly_at_the_bar_is_near_it_not_underpowered(rng):
    """fpt-convergence at cpu scale, SmolLM2: 1.40x [1.20x, 1.63x] over 3 seeds. With that
    little spread the power at 1.5x is high: the estimate lies near the bar, and the verdict
    says so rather than asking for seeds it does not need."""
    s = {"bit memory": steps(rng, 1000, 1500, sd=0.03), "digits": steps(rng, 500, 750, sd=0.03)}
    v = convergence_verdict(C, s, LENGTHS)
    assert v.status == "inconclusive" and v.effect.lo < 1.5 < v.effect.hi
    assert v.why.startswith("the interval spans a threshold (power 1.00 at 3 units for a "
                            "speedup of 1.5x"), v.why
    wide = {"bit memory": steps(rng, 1000, 1500, sd=0.5), "digits": steps(rng, 500, 750, sd=0.5)}
    v = convergence_verdict(C, wide, LENGTHS)
    assert v.status == "inconclusive" and v.why.startswith("underpowered (power 0."), v.why


def test_a_run_that_never_reaches_the_level_produces_no_number(rng):
    """fpt-convergence at seed 1: SmolLM2's FPT run never reached ListOps' level. No step
    count is imputed: the task gives no speedup, is left out and listed; with no task left
    the verdict is inconclusive."""
    s = {"ListOps (fpt2021)": steps(rng, 400, 1350)}
    s["ListOps (fpt2021)"][FPT][1] = math.inf
    assert speedup(s["ListOps (fpt2021)"]) is None
    v = convergence_verdict(C, s, LENGTHS)
    assert v.status == "inconclusive" and "precondition not met" in v.why
    assert "left out (some run never reached the level" in v.evidence
    assert "ListOps (fpt2021) (" in v.evidence and "never" in v.evidence
    # a task where every run reached still decides, the other listed beside it
    s["digits"] = steps(rng, 500, 2000)
    s["bit memory"] = steps(rng, 600, 2400)
    assert convergence_verdict(C, s, LENGTHS).status == "reproduced"


def test_random_reaching_the_level_where_fpt_never_does_is_evidence_against(rng):
    s = {"digits": steps(rng, 500, 2000), "bit memory": steps(rng, None, 500)}
    v = convergence_verdict(C, s, LENGTHS)
    assert v.status == "not reproduced" and "no FPT run did: bit memory" in v.evidence
    # reaching it only after FPT's whole run says nothing against FPT
    s["bit memory"] = steps(rng, None, 3000)
    v = convergence_verdict(C, s, LENGTHS)
    assert v.status == "reproduced"  # from digits; bit memory left out and listed
    assert "bit memory (never, never, never / " in v.evidence
    # ... and one seed per arm is no evidence either way
    one = {"bit memory": steps(rng, None, 500, n=1), "digits": steps(rng, 500, 2000, n=1)}
    v = convergence_verdict(C, one, LENGTHS)
    assert v.status == "inconclusive" and "too few units" in v.why


def test_metric_reads_masked_bits():
    assert metric({"acc": 0.8, "acc_by_masked": [1.0, 0.6]}) == 0.6
    assert metric({"acc": 0.8}) == 0.8


def test_one_learned_rule_decides_which_tasks_count():
    """A task counts when the better arm ends >= 0.1 above chance (0.5 on the bits, 0.1 on
    ListOps): exactly at the margin counts, just below does not."""
    assert learned("bit XOR", 0.5, 0.6) and not learned("bit XOR", 0.59, 0.3)
    assert learned("ListOps (fpt2021)", 0.2) and not learned("ListOps (fpt2021)", 0.19)


def test_freeze_verdicts_judge_each_init_on_both_backbones(rng):
    """Each study's claims read its own init's values on every backbone; one backbone without
    the effect makes the claim not reproduced (all_of)."""
    flat = draw(rng, {"ListOps (fpt2021)": {OUT: 0.15, OUT_LN: 0.15, ALL: 0.38},
                      "digits": {OUT: 0.25, OUT_LN: 0.25, ALL: 0.81}})
    per = {"SmolLM2": {"pretrained": draw(rng, SLIDES), "frozen random": flat},
           "MiniLM": {"pretrained": draw(rng, SLIDES), "frozen random": draw(rng, SLIDES)}}
    R = STUDIES["fpt-freeze-random"].claim
    v = freeze_verdicts(A, per, {"layernorm": (factor_verdict, "pretrained", OUT_LN),
                                 "layernorm-first": (share_verdict, "pretrained", OUT_LN)},
                        OUT, ALL)
    v += freeze_verdicts(R, per, {"random-layernorm": (factor_verdict, "frozen random", OUT_LN)},
                         OUT, ALL)
    assert [x.claim.key for x in v] == ["layernorm", "layernorm-first", "random-layernorm"]
    assert [x.status for x in v] == ["reproduced", "reproduced", "not reproduced"]
    assert "SmolLM2 (not reproduced)" in v[2].evidence
    assert "MiniLM (reproduced)" in v[2].evidence


def test_each_freeze_study_reads_one_init_and_rules_its_own_claims():
    for name, init in (("fpt-freeze-ablation", "pretrained"),
                       ("fpt-freeze-random", "frozen random")):
        cls = STUDIES[name]
        assert cls.init == init
        assert list(cls.rules) == [c.key for c in cls.claims]
        assert {s.factors["init"] for s in cls().runs("cpu", 1)} == {init}
