"""The FPT studies' verdict rules on hand-made numbers (each status reachable)."""

from __future__ import annotations

import math

from reasonlab.studies import STUDIES
from reasonlab.studies.fpt.common import FPT, FULL, LSTM, POLICIES, RANDOM, metric
from reasonlab.studies.fpt.verdicts import (ablation_verdicts, convergence_verdict, first_step,
                                            learned, speedup, universal_verdicts)

U = STUDIES["fpt-universal"].claim


def uni(fpt, full, random, lstm, task="bit memory"):
    return {task: {FPT: [fpt], FULL: [full], RANDOM: [random], LSTM: [lstm]}}


def test_universal_all_reproduced():
    v = universal_verdicts(U, {**uni(0.98, 1.0, 0.6, 0.55), **uni(1.0, 1.0, 0.9, 0.5, "bit XOR")})
    assert [x.status for x in v] == ["reproduced"] * 3


def test_universal_not_reproduced_and_inconclusive():
    v = universal_verdicts(U, {**uni(0.7, 0.95, 0.8, 0.7), **uni(0.9, 0.9, 0.9, 0.88, "bit XOR")})
    assert [x.status for x in v] == ["not reproduced", "not reproduced", "not reproduced"]
    # FPT 0.1 below full: inconclusive band; LSTM 0.1 below: inconclusive
    v = universal_verdicts(U, {**uni(0.85, 0.95, 0.8, 0.75), **uni(0.9, 0.9, 0.88, 0.8,
                                                                    "bit XOR")})
    assert v[0].status == "inconclusive" and v[2].status == "inconclusive"
    assert v[1].status == "inconclusive"  # mean gain 0.035: between 0 and 0.05


def test_universal_chance_level_task_is_inconclusive():
    v = universal_verdicts(U, uni(0.52, 0.53, 0.5, 0.5))  # bit memory: chance 0.5
    assert [x.status for x in v] == ["inconclusive"] * 3
    assert "chance" in v[0].evidence and "chance" in v[2].evidence
    # a task nobody learned is left out of the random-vs-FPT mean
    v = universal_verdicts(U, {**uni(0.5, 0.5, 0.5, 0.5), **uni(0.95, 0.95, 0.6, 0.5,
                                                                "bit XOR")})
    assert v[1].status == "reproduced" and "left out" in v[1].evidence


def ablation(values_by_policy, task="digits"):
    return {task: {a: [values_by_policy[a]] for a in POLICIES}}


BASE = {"output only": 0.2, "+ input": 0.6, "+ positions": 0.7, "+ norms (FPT)": 0.9,
        "FPT + attention": 0.9, "FPT + mlp": 0.92, "full": 0.95}
A = STUDIES["fpt-freeze-ablation"].claim


def test_ablation_reproduced():
    v = ablation_verdicts(A, ablation(BASE))
    assert [x.status for x in v] == ["reproduced", "reproduced"]  # share 0.93, +attn 0.0


def test_ablation_not_reproduced_and_inconclusive():
    v = ablation_verdicts(A, ablation({**BASE, "+ norms (FPT)": 0.3, "FPT + attention": 0.6}))
    assert [x.status for x in v] == ["not reproduced", "not reproduced"]
    v = ablation_verdicts(A, ablation({**BASE, "+ norms (FPT)": 0.6, "FPT + attention": 0.67}))
    assert [x.status for x in v] == ["inconclusive", "inconclusive"]  # share 0.53; +0.07
    flat = dict.fromkeys(POLICIES, 0.12)  # nothing learned (digits: chance 0.1)
    assert [x.status for x in ablation_verdicts(A, ablation(flat))] == ["inconclusive"] * 2


def curve(accs, every=10):
    return [{"step": every * (i + 1), "acc": a} for i, a in enumerate(accs)]


def run(accs):
    c = curve(accs)
    return {"curve": c, "final": c[-1]}


C = STUDIES["fpt-convergence"].claims[0]


def test_convergence_rules():
    assert first_step(curve([0.5, 0.7, 0.9]), 0.8) == 30
    assert math.isinf(first_step(curve([0.5, 0.6]), 0.8))
    fast = {"bit XOR": {FPT: [run([0.6, 0.95, 1.0, 1.0])], RANDOM: [run([0.5, 0.5, 0.6, 0.95])]}}
    steps = {"bit XOR": {FPT: [20.0], RANDOM: [40.0]}}
    assert speedup(steps["bit XOR"], 40) == 2.0
    assert convergence_verdict(C, steps, fast).status == "reproduced"
    same = {"bit XOR": {FPT: [30.0], RANDOM: [30.0]}}
    assert convergence_verdict(C, same, fast).status == "not reproduced"
    between = {"bit XOR": {FPT: [30.0], RANDOM: [36.0]}}
    assert convergence_verdict(C, between, fast).status == "inconclusive"
    never = {"bit XOR": {FPT: [20.0], RANDOM: [math.inf]}}  # counts as 2 x 40 = 80 steps
    assert speedup(never["bit XOR"], 40) == 4.0


def test_metric_reads_masked_bits():
    assert metric({"acc": 0.8, "acc_by_masked": [1.0, 0.6]}) == 0.6
    assert metric({"acc": 0.8}) == 0.8


def test_one_learned_rule_decides_which_tasks_count():
    """A task counts when the better arm ends >= 0.1 above chance (0.5 on the bits, 0.1 on
    ListOps): exactly at the margin counts, just below does not."""
    assert learned("bit XOR", [0.5, 0.6]) and not learned("bit XOR", [0.59, 0.3])
    assert learned("ListOps (fpt2021)", [0.2]) and not learned("ListOps (fpt2021)", [0.19])
