"""The FPT studies' verdict rules on hand-made numbers (each status reachable)."""

from __future__ import annotations

import math

from reasonlab.studies import STUDIES
from reasonlab.studies.fpt.common import FPT, FULL, LSTM, RANDOM, RANDOM_LSTM, metric
from reasonlab.studies.fpt.freeze_ablation import ALL, OUT, OUT_IN, OUT_LN, OUT_POS
from reasonlab.studies.fpt.verdicts import (convergence_verdict, factor_verdict, first_step,
                                            freeze_verdicts,
                                            learned, no_help_verdict, share_verdict, speedup,
                                            lstm_verdicts, universal_verdicts)

U = STUDIES["fpt-universal"].claim
L = STUDIES["fpt-lstm"].claim


def uni(fpt, full, random, lstm, random_lstm=0.5, task="bit memory"):
    return {task: {FPT: [fpt], FULL: [full], RANDOM: [random], LSTM: [lstm],
                   RANDOM_LSTM: [random_lstm]}}


def both(values):
    """fpt-universal's verdicts, then fpt-lstm's, on the same numbers."""
    return universal_verdicts(U, values) + lstm_verdicts(L, values)


def test_universal_all_reproduced():
    v = both({**uni(0.98, 1.0, 0.8, 0.55), **uni(1.0, 1.0, 0.9, 0.5, task="bit XOR")})
    assert [x.status for x in v] == ["reproduced"] * 4


def test_universal_not_reproduced_and_inconclusive():
    v = both({**uni(0.7, 0.95, 0.8, 0.7, 0.9), **uni(0.9, 0.9, 0.9, 0.88, 0.95, "bit XOR")})
    assert [x.status for x in v] == ["not reproduced"] * 4
    # FPT 0.1 below full: inconclusive band; LSTM 0.1 below: inconclusive
    v = both({**uni(0.85, 0.95, 0.8, 0.75, 0.75), **uni(0.9, 0.9, 0.88, 0.8, 0.83, "bit XOR")})
    assert [x.status for x in v] == ["inconclusive"] * 4  # random-lstm: mean gain 0.05 < 0.1


def test_universal_chance_level_task_is_inconclusive():
    v = both(uni(0.52, 0.53, 0.5, 0.5))  # bit memory: chance 0.5
    assert [x.status for x in v] == ["inconclusive"] * 4
    assert "chance" in v[0].evidence and "chance" in v[2].evidence
    # a task nobody learned is left out of the random-vs-FPT mean
    v = universal_verdicts(U, {**uni(0.5, 0.5, 0.5, 0.5),
                               **uni(0.95, 0.95, 0.6, 0.5, task="bit XOR")})
    assert v[1].status == "reproduced" and "left out" in v[1].evidence


def test_each_study_judges_only_its_own_claims():
    values = uni(0.98, 1.0, 0.8, 0.55)
    assert [v.claim.key for v in universal_verdicts(U, values)] == [
        c.key for c in STUDIES["fpt-universal"].claims]
    assert [v.claim.key for v in lstm_verdicts(L, values)] == [
        c.key for c in STUDIES["fpt-lstm"].claims]


A = STUDIES["fpt-freeze-ablation"].claim


def table(**by_arm):
    """Two tasks, 3 seeds: arm -> (bit XOR mean, digits mean), seeds +-0.01 around it."""
    return {t: {a: [m[i] - 0.01, m[i], m[i] + 0.01] for a, m in by_arm.items()}
            for i, t in enumerate(("bit XOR", "digits"))}


SLIDES = table(**{OUT: (0.56, 0.23), OUT_IN: (0.72, 0.85), OUT_POS: (0.84, 0.93),
                  OUT_LN: (0.98, 0.96), ALL: (1.0, 0.98)})


def test_each_factor_reads_its_one_group_arm():
    for arm in (OUT_LN, OUT_IN, OUT_POS):
        assert factor_verdict(A("layernorm"), SLIDES, arm, OUT, ALL).status == "reproduced"
    assert share_verdict(A("layernorm-first"), SLIDES, OUT_LN, OUT, ALL).status == "reproduced"


def test_a_factor_that_adds_nothing_is_not_reproduced_even_when_fpt_gains():
    """Our old cumulative reading: positions carry it and the norms add nothing -- the norms'
    own arm (output + layernorm) equals output only, so 'layernorm matters' fails, however
    much FPT gains."""
    flat = table(**{OUT: (0.56, 0.25), OUT_IN: (0.7, 0.45), OUT_POS: (0.98, 0.8),
                    OUT_LN: (0.56, 0.25), ALL: (1.0, 0.81)})
    assert factor_verdict(A("layernorm"), flat, OUT_LN, OUT, ALL).status == "not reproduced"
    assert share_verdict(A("layernorm-first"), flat, OUT_LN, OUT, ALL).status == (
        "not reproduced")
    assert factor_verdict(A("positions"), flat, OUT_POS, OUT, ALL).status == "reproduced"


def test_factor_verdict_bands():
    small = table(**{OUT: (0.56, 0.25), OUT_LN: (0.6, 0.28), ALL: (1.0, 0.9)})  # +0.035
    assert factor_verdict(A("layernorm"), small, OUT_LN, OUT, ALL).status == "inconclusive"
    half = table(**{OUT: (0.5, 0.2), OUT_LN: (0.75, 0.55), ALL: (1.0, 0.9)})  # share 0.5
    assert share_verdict(A("layernorm-first"), half, OUT_LN, OUT, ALL).status == "inconclusive"
    nothing = table(**{OUT: (0.5, 0.1), OUT_LN: (0.5, 0.1), ALL: (0.52, 0.12)})
    v = factor_verdict(A("layernorm"), nothing, OUT_LN, OUT, ALL)
    assert v.status == "inconclusive" and "learns no task" in v.evidence


F = STUDIES["fpt-freeze-fewer"].claim


def test_no_help_verdicts():
    same = table(**{FPT: (1.0, 0.9), "+ attention": (1.0, 0.89)})
    assert no_help_verdict(F("attention-no-help"), same, "+ attention", FPT,
                           FPT).status == "reproduced"
    helps = table(**{FPT: (0.8, 0.7), "+ attention": (0.95, 0.9)})
    assert no_help_verdict(F("attention-no-help"), helps, "+ attention", FPT,
                           FPT).status == "not reproduced"
    a_bit = table(**{FPT: (0.8, 0.7), "+ attention": (0.84, 0.74)})  # +0.04 +- 2 SE
    assert no_help_verdict(F("attention-no-help"), a_bit, "+ attention", FPT,
                           FPT).status == "inconclusive"


def curve(accs, every=10):
    return [{"step": every * (i + 1), "acc": a} for i, a in enumerate(accs)]


C = STUDIES["fpt-convergence"].claim("faster")


def test_first_step_on_hand_made_curves():
    assert first_step(curve([0.5, 0.7, 0.9]), 0.8) == 30
    assert math.isinf(first_step(curve([0.5, 0.6]), 0.8))
    assert first_step([{"step": 5, "acc": 0.8, "acc_by_masked": [1.0, 0.6]}], 0.7) == math.inf


def test_a_run_that_never_reaches_the_level_produces_no_speedup():
    """The old rule counted 'never' as 2 x the run length: FPT at 20 steps and a random run
    that never got there read 4x. Now there is no speedup, and the verdict cannot be
    reproduced on such tasks alone."""
    fpt = curve([0.6, 0.95, 1.0, 1.0])  # reaches 0.9 at step 20
    never = curve([0.5, 0.5, 0.6, 0.7] * 4)  # 160 steps, never 0.9
    steps = {"bit XOR": {FPT: [first_step(fpt, 0.9)], RANDOM: [first_step(never, 0.9)]}}
    assert steps["bit XOR"][FPT] == [20.0] and math.isinf(steps["bit XOR"][RANDOM][0])
    assert speedup(steps["bit XOR"]) is None
    v = convergence_verdict(C, steps, {"bit XOR": {FPT: 40, RANDOM: 160}})
    assert v.status == "inconclusive" and "random ran 160 steps" in v.evidence


def test_convergence_counts_only_runs_that_reach_the_level():
    lengths = {"bit XOR": {FPT: 40, RANDOM: 160}, "digits": {FPT: 40, RANDOM: 160}}
    # seed 2 of random never reached: the speedup is over the two runs that did
    steps = {"bit XOR": {FPT: [20.0, 20.0, 30.0], RANDOM: [60.0, 100.0, math.inf]},
             "digits": {FPT: [10.0], RANDOM: [40.0]}}
    assert speedup(steps["bit XOR"]) == 80.0 / (70.0 / 3)
    assert convergence_verdict(C, steps, lengths).status == "reproduced"
    same = {"bit XOR": {FPT: [30.0], RANDOM: [30.0]}}
    assert convergence_verdict(C, same, lengths).status == "not reproduced"
    between = {"bit XOR": {FPT: [30.0], RANDOM: [36.0]}}
    assert convergence_verdict(C, between, lengths).status == "inconclusive"
    # random reached the level and FPT never did: evidence against, whatever else holds
    against = {**steps, "digits": {FPT: [math.inf], RANDOM: [40.0]}}
    assert convergence_verdict(C, against, lengths).status == "not reproduced"
    # ... but reaching it only after FPT's whole run says nothing against FPT
    late = {**steps, "digits": {FPT: [math.inf], RANDOM: [120.0]}}
    v = convergence_verdict(C, late, lengths)
    assert v.status == "reproduced" and "only after FPT's run length, FPT never did: digits" in v.evidence


def test_metric_reads_masked_bits():
    assert metric({"acc": 0.8, "acc_by_masked": [1.0, 0.6]}) == 0.6
    assert metric({"acc": 0.8}) == 0.8


def test_one_learned_rule_decides_which_tasks_count():
    """A task counts when the better arm ends >= 0.1 above chance (0.5 on the bits, 0.1 on
    ListOps): exactly at the margin counts, just below does not."""
    assert learned("bit XOR", [0.5, 0.6]) and not learned("bit XOR", [0.59, 0.3])
    assert learned("ListOps (fpt2021)", [0.2]) and not learned("ListOps (fpt2021)", [0.19])


def test_freeze_verdicts_judge_each_init_on_both_backbones():
    """Each study's claims read its own init's values on every backbone; one backbone without
    the effect makes the claim not reproduced (all_of)."""
    flat = table(**{OUT: (0.56, 0.25), OUT_LN: (0.56, 0.25), ALL: (1.0, 0.81)})
    per = {"SmolLM2": {"pretrained": SLIDES, "frozen random": flat},
           "MiniLM": {"pretrained": SLIDES, "frozen random": SLIDES}}
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
