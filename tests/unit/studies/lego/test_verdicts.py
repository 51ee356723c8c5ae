"""Verdict rules of the LEGO mechanism studies (lego/verdicts.py) on noisy numbers drawn from
seeded generators: what each decides, from which interval or order, and what it says when
inconclusive."""

import math

import numpy as np
import pytest
import torch

from reasonlab.studies.kit import sequential
from reasonlab.studies.kit.base import Claim
from reasonlab.studies.lego.common import MIMIC, PRETRAINED, RANDOM
from reasonlab.studies.lego.verdicts import (
    classical_verdict, closed_verdict, converge_verdict, extrapolation_gain,
    first_pass_steps, heads_verdict, in_chain_order, is_later, last_first_every_arm,
    last_first_verdict, needs_fit, null_share, order_decision, order_p, span_gain,
    staircase_verdict)
from reasonlab.studies.kit.verdicts import gain_verdict

C = Claim("k", "text", "src")
INF = math.inf


def rows(seed: int, span_level: float, sd: float = 0.02, n: int = 3, fit: float = 1.0,
         span: slice = slice(6, 12), positions: int = 12) -> list[list[float]]:
    """n seeds x positions: N(fit, 0.005) outside `span`, N(span_level, sd) per position on it."""
    rng = np.random.default_rng(seed)
    out = rng.normal(fit, 0.005, (n, positions)).clip(0, 1)
    out[:, span] = rng.normal(span_level, sd, (n, span.stop - span.start))
    return out.tolist()


# -- gains over a span, gated on a fit ---------------------------------------------------------


def test_extrapolation_gain_decides_from_the_interval_over_seeds():
    v = extrapolation_gain(C, {"ALBERT": rows(0, 0.85), "BERT": rows(1, 0.55)}, "ALBERT",
                           "BERT", 6)
    assert v.status == "reproduced" and v.effect.n == (3, 3) and v.effect.lo > 0
    assert "mean accuracy #6-#8" in v.evidence and "95% CI, n = 3 / 3" in v.evidence
    same = extrapolation_gain(C, {"ALBERT": rows(2, 0.55, 0.01, 5), "BERT": rows(3, 0.55, 0.01,
                                                                                  5)},
                              "ALBERT", "BERT", 6)
    assert same.status == "not reproduced"  # confidently below MIN_ACCURACY_GAIN


def test_one_seed_per_arm_and_a_large_gain_reads_inconclusive():
    v = extrapolation_gain(C, {"ALBERT": rows(4, 0.95, n=1), "BERT": rows(5, 0.5, n=1)},
                           "ALBERT", "BERT", 6)
    assert v.status == "inconclusive" and v.why.startswith("too few units (1 / 1")


def test_needs_fit_turns_a_comparison_of_unfitted_arms_inconclusive():
    chance = {a: rows(s, 0.5, fit=0.6) for s, a in enumerate(("a", "b"))}  # #0-#5 ~0.6
    v = gain_verdict(C, np.random.default_rng(6).normal(0.7, 0.02, 3),
                     np.random.default_rng(7).normal(0.5, 0.02, 3), ("a", "b"), "x")
    assert v.status == "reproduced"
    out = needs_fit(v, chance, slice(0, 6))
    assert out.status == "inconclusive" and out.evidence.startswith(v.evidence)
    assert out.why.startswith("precondition not met (no arm fits #0-#5 (a 0.5")
    assert out.effect is v.effect  # the numbers stay
    fitted = {"a": chance["a"], "b": rows(8, 0.5)}
    assert needs_fit(v, fitted, slice(0, 6)) is v  # one arm fits: unchanged


def test_needs_fit_is_curtailed_when_the_fit_is_out_of_reach_of_the_seeds_to_come():
    """Seeds at 0.6, 0.95, 0.95 on #0-#5 (mean 0.833, not confidently below PASS = 0.9): one
    perfect seed to come brings the arm to (2.5 + 1) / 4 = 0.875 at most: curtailed; three, to
    0.917: not. Seeds all at about 0.6: confidently below (the futility bound), curtailed
    however many may come."""
    v = gain_verdict(C, np.random.default_rng(6).normal(0.7, 0.02, 3),
                     np.random.default_rng(7).normal(0.5, 0.02, 3), ("a", "b"), "x")
    spread = {a: [[x] * 12 for x in (0.6, 0.95, 0.95)] for a in ("a", "b")}
    with sequential.adding(1):
        one = needs_fit(v, spread, slice(0, 6))
    with sequential.adding(3):
        three = needs_fit(v, spread, slice(0, 6))
    assert one.status == three.status == "inconclusive"
    assert one.curtailed and not three.curtailed
    assert needs_fit(v, spread, slice(0, 6)).curtailed  # a fixed seed count adds none
    tight = {a: rows(s, 0.5, fit=0.6) for s, a in enumerate(("a", "b"))}
    with sequential.adding(27):  # perfect seeds could lift it to 0.96, but it sits at 0.6
        assert needs_fit(v, tight, slice(0, 6)).curtailed


def test_span_gain_compares_a_span_once_an_arm_fits():
    """lego-shortcut's rule: mean final accuracy over #6-#10, gated on fitting #0-#4."""
    finals = {"a": rows(10, 0.9, span=slice(5, 11)), "b": rows(11, 0.6, span=slice(5, 11))}
    ok = span_gain(C, finals, "a", "b", slice(6, 11), slice(0, 5))
    assert ok.status == "reproduced" and "mean accuracy #6-#10" in ok.evidence
    assert span_gain(C, finals, "b", "a", slice(6, 11), slice(0, 5)).status == "not reproduced"
    unfit = {"c": rows(12, 0.5, fit=0.5), "d": rows(13, 0.2, fit=0.5)}
    v = span_gain(C, unfit, "c", "d", slice(6, 11), slice(0, 5))
    assert v.status == "inconclusive" and "no arm fits #0-#4 (c 0.5" in v.evidence


# -- classical generalization ------------------------------------------------------------------


def test_classical_verdict_needs_most_seeds_of_every_arm_above_the_threshold():
    # a seed passes when its #0-#5 mean is >= 0.95; the share's exact lower bound must clear
    # one half, which 6 unanimous seeds do and 3 cannot (0.025^(1/3) = 0.29)
    good = rows(20, 0.5, fit=0.99, n=6)
    v = classical_verdict(C, {"BERT": good, "ALBERT": rows(21, 0.5, fit=0.99, n=6)})
    assert v.status == "reproduced" and "worst seed" in v.evidence
    weak = rows(22, 0.5, fit=0.67, n=6)  # #0 and #1 learned, #2-#5 at chance
    v = classical_verdict(C, {"BERT": good, "ALBERT": weak})
    assert v.status == "not reproduced" and "ALBERT (not reproduced)" in v.evidence
    three = classical_verdict(C, {"BERT": rows(20, 0.5, fit=0.99)})
    assert three.status == "inconclusive" and "unanimous ones from 6" in three.why
    # fit-or-not seeds: 4 of 6 fit, 2 do not; the mean's t interval would say nothing
    # reliable here (all units in one mode collapse it); the share's interval spans one half
    split = rows(26, 0.5, fit=0.99, n=6)
    split[4] = split[5] = [0.6] * 12
    assert classical_verdict(C, {"BERT": split}).status == "inconclusive"
    one = classical_verdict(C, {"BERT": rows(24, 0.5, n=1), "ALBERT": rows(25, 0.5, n=1)})
    assert one.status == "inconclusive" and "too few units" in one.why


# -- mimicking closes the gap ------------------------------------------------------------------


def mimic_finals(seed: int, r: float, p: float, m: float, sd: float = 0.02, n: int = 3):
    span = slice(4, 8)
    return {RANDOM: rows(seed, r, sd, n, span=span, positions=8),
            PRETRAINED: rows(seed + 1, p, sd, n, span=span, positions=8),
            MIMIC: rows(seed + 2, m, sd, n, span=span, positions=8)}


def test_closed_verdict_reads_the_share_closed_with_its_fieller_interval():
    v = closed_verdict(C, mimic_finals(30, 0.55, 0.9, 0.85), slice(4, 7), "x")
    assert v.status == "reproduced" and v.effect.scale == "ratio"
    assert 0.5 <= v.effect.lo < v.effect.value < v.effect.hi
    assert "share of the gap closed" in v.evidence and "gap pretrained - random: reproduced" \
        in v.evidence
    low = closed_verdict(C, mimic_finals(33, 0.55, 0.9, 0.6), slice(4, 7), "x")
    assert low.status == "not reproduced" and low.effect.hi < 0.5


def test_closed_verdict_needs_the_gap_itself_reproduced():
    """A gap that is only inconclusive (noisy) must not be closed, however high mimicking is."""
    noisy = mimic_finals(36, 0.55, 0.65, 0.95, sd=0.12)
    gap = gain_verdict(C, np.asarray(noisy[PRETRAINED])[:, 4:7].mean(1),
                       np.asarray(noisy[RANDOM])[:, 4:7].mean(1), ("p", "r"), "x")
    assert gap.status == "inconclusive"
    v = closed_verdict(C, noisy, slice(4, 7), "x")
    assert v.status == "inconclusive" and v.why.startswith(
        "precondition not met (the gap to close is not reproduced (inconclusive")
    none = closed_verdict(C, mimic_finals(39, 0.55, 0.55, 0.9, sd=0.01), slice(4, 7), "x")
    assert none.status == "inconclusive" and "not reproduced" in none.why


# -- orders: steps to a level ------------------------------------------------------------------


def test_order_p_is_the_exact_wilcoxon_mann_whitney_p_at_a_complete_order():
    assert order_p(3, 6) == pytest.approx(1 / 84) and order_p(3, 3) == pytest.approx(1 / 20)
    assert order_p(4, 4) == pytest.approx(1 / 70)
    # a run that never gets there comes after one that did; two that never did have no order
    assert is_later(INF, 700) and not is_later(INF, INF) and not is_later(300, INF)
    assert is_later(INF, 300, factor=2, horizon=750)
    assert not is_later(INF, 400, factor=2, horizon=750)  # never by 750 says nothing about 800
    assert not is_later(150, 150) and is_later(300, 150, factor=2)


def test_order_decision_needs_a_complete_order_rare_enough():
    rng = np.random.default_rng(40)
    early, late = rng.integers(1, 5, 4) * 25.0, rng.integers(10, 14, 4) * 25.0
    d = order_decision(late, early, ("late", "early"))
    assert d.status == "reproduced" and d.estimate.value == 1.0 and "0.014" in d.rule
    assert order_decision(early, late, ("late", "early")).status == "not reproduced"
    small = order_decision(late[:3], early[:3], ("late", "early"))
    assert small.status == "inconclusive" and "p = 0.050" in small.why
    assert "about 4 units per arm" in small.why
    mixed = order_decision(np.r_[late[:3], 50.0], early, ("late", "early"))
    assert mixed.status == "inconclusive" and "seed pairs in order" in mixed.why
    assert order_decision(late[:2], early, ("l", "e")).why.startswith("too few units")


def test_converge_verdict_on_steps_and_on_runs_that_never_converge():
    rng = np.random.default_rng(41)
    fast = (np.ceil(rng.lognormal(np.log(50), 0.3, 3) / 25) * 25).tolist()
    slow = (np.ceil(rng.lognormal(np.log(200), 0.3, 3) / 25) * 25).tolist()
    v = converge_verdict(C, fast, slow, ("pretrained", "random init"))
    assert v.status == "reproduced" and v.effect.scale == "log" and v.effect.lo > 1
    assert "steps random init / pretrained" in v.evidence
    assert converge_verdict(C, slow, fast, ("p", "r")).status == "not reproduced"
    # random init never converges: only an order, decided exactly (3 + 3 cannot reach 2.5%)
    v = converge_verdict(C, fast, [INF] * 3, ("pretrained", "random init"))
    assert v.status == "inconclusive" and "p = 0.050" in v.why and "never" in v.evidence
    four = (np.ceil(rng.lognormal(np.log(50), 0.3, 4) / 25) * 25).tolist()
    assert converge_verdict(C, four, [INF, INF, 175.0, INF], ("p", "r")).status == "reproduced"
    v = converge_verdict(C, [INF] * 3, [INF] * 3, ("p", "r"))
    assert v.status == "inconclusive" and "no run reaches 0.9" in v.why
    one = converge_verdict(C, [50.0], [200.0], ("p", "r"))
    assert one.status == "inconclusive" and "too few units" in one.why


# -- heads of one fixed checkpoint vs random init ----------------------------------------------


def head_inputs(seed: int, assoc: float, manip: float, permuted: float = 0.05,
                positional: float = 0.0, inits: int = 3):
    """The pretrained checkpoint's heads (fixed) and `inits` random-init models' heads drawn
    around the measured random-init scores (0.025 association, 0.094 manipulation)."""
    rng = np.random.default_rng(seed)

    def grid(x, at=(1, 0)):
        t = torch.from_numpy(rng.uniform(0, 0.01, (2, 3))).float()
        t[at] = x
        return t

    pre_c = {"variables": grid(assoc), "variables, permuted": grid(permuted),
             "positional head": torch.tensor(positional)}
    rand_c = [{"variables": grid(x)} for x in rng.normal(0.025, 0.002, inits)]
    scores = {PRETRAINED: {"manipulation": grid(manip, (0, 2))},
              RANDOM: [{"manipulation": grid(x)} for x in rng.normal(0.094, 0.003, inits)]}
    return scores, {PRETRAINED: pre_c, RANDOM: rand_c}


def test_heads_verdict_reads_the_checkpoint_exactly_and_random_init_over_seeds():
    v = heads_verdict(C, *head_inputs(50, 0.63, 0.98, inits=6))
    assert v.status == "reproduced"
    assert "association over random init (reproduced)" in v.evidence
    assert "L1H0 0.63" in v.evidence and "L0H2 0.98" in v.evidence
    # 3 random-init seeds cannot put the share of seeds beaten by the margin above one half
    assert heads_verdict(C, *head_inputs(50, 0.63, 0.98)).status == "inconclusive"
    # a head whose variable score its position alone earns (clause-permuted score as high)
    v = heads_verdict(C, *head_inputs(51, 0.63, 0.98, permuted=0.6))
    assert v.status == "not reproduced" and "positional control 0.60" in v.evidence
    same_slot = heads_verdict(C, *head_inputs(52, 0.63, 0.98, positional=0.55))
    assert same_slot.status == "not reproduced"
    # manipulation no better than random init
    assert heads_verdict(C, *head_inputs(53, 0.63, 0.10, inits=6)).status == "not reproduced"
    one = heads_verdict(C, *head_inputs(54, 0.63, 0.98, inits=1))
    assert one.status == "inconclusive" and "too few units" in one.why


# -- the last variable first -------------------------------------------------------------------


def curve(passes, every=75, steps=750):
    """Accuracy 0.95 from each position's first-pass step on, 0.5 before."""
    return [{"step": s, "acc_by_depth": [0.95 if s >= p else 0.5 for p in passes]}
            for s in range(every, steps + 1, every)]


def last_early(rng, n=12):
    """#0 first, #11 next, the middle later (a seed that takes the shortcut)."""
    middle = np.sort(rng.choice(np.arange(4, 11) * 75, n - 2))
    return [75.0, *middle.tolist()[:-1], float(middle[-1]), 150.0][:n - 1] + [150.0]


def test_first_pass_steps():
    c = curve([75, 150, INF, 75])
    assert first_pass_steps(c) == [75, 150, INF, 75]


def test_last_first_verdict_needs_every_one_of_three_seeds_beyond_the_null_share():
    assert null_share(10) == pytest.approx(3 / 11)
    rng = np.random.default_rng(60)
    early = [curve([75.0] + list(rng.choice(np.arange(3, 10) * 75.0, 10)) + [150.0])
             for _ in range(3)]
    v = last_first_verdict(C, early)
    assert v.status == "reproduced" and "in 3 of 3 seeds" in v.evidence
    assert v.effect.n == (3,) and v.effect.value == 1.0
    late = curve([75.0] * 11 + [600.0])
    v = last_first_verdict(C, early[:2] + [late])
    assert v.status == "inconclusive" and "2 of 3" in v.evidence
    v = last_first_verdict(C, early[:1])
    assert v.status == "inconclusive" and "too few units" in v.why


def test_a_tie_with_the_last_variable_is_not_before():
    """Positions first passing at #11's evaluation are not learned after it: five middle
    positions tied with #11 leave it before only 5 of 10."""
    tied = curve([75.0] + [150.0] * 5 + [300.0] * 5 + [150.0])
    v = last_first_verdict(C, [tied] * 3)
    assert "#11 before 5, tied with 5" in v.evidence and "in 0 of 3 seeds" in v.evidence
    assert v.status != "reproduced"


def test_seeds_that_learn_nothing_past_the_root_are_left_out():
    rng = np.random.default_rng(61)
    silent = curve([75.0] + [INF] * 11)
    ordered = [curve([75.0] + list(rng.choice(np.arange(3, 10) * 75.0, 10)) + [150.0])
               for _ in range(3)]
    v = last_first_verdict(C, ordered + [silent])
    assert v.status == "reproduced" and "1 seed(s) with no position of #1-#11 passed" in \
        v.evidence
    v = last_first_verdict(C, ordered[:1] + [silent] * 2)
    assert v.status == "inconclusive" and v.why == (
        "precondition not met (2 of 3 seeds learn none of #1-#11 within the run, so only 1 "
        "show an order)")


def test_last_first_every_arm_needs_each_arm():
    rng = np.random.default_rng(62)
    early = [curve([75.0] + list(rng.choice(np.arange(3, 10) * 75.0, 10)) + [150.0])
             for _ in range(3)]
    late = [curve([75.0] * 11 + [600.0])] * 3
    assert last_first_every_arm(C, {"BERT": early, "ALBERT": early}).status == "reproduced"
    v = last_first_every_arm(C, {"BERT": early, "ALBERT": late})
    assert v.status == "inconclusive" and "ALBERT (inconclusive)" in v.evidence


# -- the staircase -----------------------------------------------------------------------------


def test_in_chain_order_checks_every_learned_position_strictly():
    assert in_chain_order([75, 450, INF, INF])
    assert in_chain_order([75, 150, 300, 600])
    assert not in_chain_order([150, 150, INF])  # a tie is no order
    assert not in_chain_order([75, INF, 300])  # #2 learned before #1
    assert not in_chain_order([300, 150, INF])
    assert not in_chain_order([75, INF, INF])  # one step is no staircase


def stair_passes(rng, n=3, random=INF):
    out = {}
    for mode in ("fixed (paper)", "given (authors' code)"):
        zero = rng.integers(1, 3, n) * 75.0
        one = zero + rng.integers(1, 6, n) * 75.0
        out[mode] = [[z, o] + [INF] * 10 for z, o in zip(zero, one)]
    out["random (both drawn)"] = [[random] * 12 for _ in range(n)]
    return out


def test_staircase_verdict_needs_order_in_every_one_token_seed_and_a_later_random_root():
    rng = np.random.default_rng(70)
    v = staircase_verdict(C, stair_passes(rng), 750)
    assert v.status == "reproduced"
    assert "6 of 6 one-token seeds" in v.evidence and "1 / C(m + n, m) = 0.012" in v.evidence
    # one given-root seed learns #0 and #1 at one evaluation: no order shown
    tie = stair_passes(rng)
    tie["given (authors' code)"][0][:2] = [150.0, 150.0]
    v = staircase_verdict(C, tie, 750)
    assert v.status == "inconclusive" and "5 of 6" in v.evidence
    # #2 before #1 in one seed: not position by position
    skip = stair_passes(rng)
    skip["fixed (paper)"][1][1:3] = [INF, 300.0]
    assert staircase_verdict(C, skip, 750).status == "inconclusive"
    # the random root leaves its plateau as early as a one-token #0: no longer plateau
    fast = stair_passes(rng, random=75.0)
    fast["random (both drawn)"] = [[75.0] * 12, [75.0] * 12, [150.0] * 12]
    v = staircase_verdict(C, fast, 750)
    assert v.status == "inconclusive" and "plateau (random root) (inconclusive)" in v.evidence
    two = staircase_verdict(C, stair_passes(rng, n=2), 750)
    assert two.status == "inconclusive" and "too few units" in two.why


def test_one_hop_rule_against_the_text():
    """The shortcut 'own op applied to the root's value', recomputed from the readable text
    with the solver's own action table: right on #0 and #1, a coin flip beyond for Task 1."""
    from reasonlab.studies.lego.analysis import one_hop_rule
    from reasonlab.tasks import build_task

    for group, root in (("z2", "fixed"), ("s3", "given"), ("d4_points", "random")):
        t = build_task({"name": "lego", "group": group, "root": root})
        b = t.sample(np.random.default_rng(3), 400)
        rule = one_hop_rule(t, b)
        for i in range(40):
            clauses = {c.split()[0]: c.split() for c in t.render(b, i).split(" ; ")}
            root_var = next(v for v, c in clauses.items() if c[3] in t.point_names)
            root_value = t.solve(t.render(b, i))[root_var]
            for k, var_tok in enumerate(b.tokens[i, b.label_pos[i]].tolist()):
                op = clauses[t._readable[var_tok]][2]
                want = root_value if k == 0 else t._act_by_name[op][root_value]
                assert t.point_names[rule[i, k]] == want
        labels = b.labels.numpy()
        assert (rule[:, :2] == labels[:, :2]).all()
        if group == "z2":
            assert 0.4 < (rule[:, 2:] == labels[:, 2:]).mean() < 0.6


def test_op_split_tells_the_one_hop_shortcut_from_a_lookup():
    """A model answering by the one-hop rule (own op applied to #0's value) is right at #2
    exactly where op1 = + (the identity), and at #3 exactly where op1 op2 = + (hand algebra:
    truth op3 op2 op1 v0 vs op3 v0 in Z2); a model answering the truth is right everywhere."""
    import torch

    from reasonlab.studies.lego.analysis import one_hop_rule, op_split
    from reasonlab.tasks import build_task

    t = build_task({"name": "lego", "group": "z2", "n_clauses": 6})
    b = t.sample(np.random.default_rng(12345), 400)  # the sentences op_split draws

    class Answers(torch.nn.Module):  # a "model" that answers from a table
        def __init__(self, answers):
            super().__init__()
            self.answers, self.dummy = torch.as_tensor(answers), torch.nn.Parameter(torch.zeros(1))

        def forward(self, tokens, label_pos, pad_mask):
            assert torch.equal(tokens, b.tokens)
            return torch.nn.functional.one_hot(self.answers, t.n_classes).float()

    model_of = Answers

    names, acc = op_split(model_of(one_hop_rule(t, b)), t, (1, 2, 3), n=400)
    assert names == ["op1 = +, op2 = +", "op1 = +, op2 = -", "op1 = -, op2 = +",
                     "op1 = -, op2 = -"]
    assert acc == [[1.0] * 4, [1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0]]
    assert op_split(model_of(b.labels), t, (2, 4), n=400)[1] == [[1.0] * 4] * 2


def test_lever_table_counts_seeds_that_got_there_and_wall_time(tmp_path):
    """Per arm: #2 / #3 first passes per seed, the fraction of seeds that passed within the
    run, and wall seconds per 1,000 steps from run.json (summed over resumptions)."""
    import json

    from reasonlab.studies.kit.core import Results, grid
    from reasonlab.studies.lego.analysis import lever_section
    from reasonlab.studies.lego.common import recipe
    from reasonlab.studies.kit.reporting import Report

    def curve(passes):  # accuracy 1.0 from each position's pass step on, 0.5 before
        return [{"step": s, "acc_by_depth": [1.0 if s >= p else 0.5 for p in passes]}
                for s in (100, 200, 300)]

    specs = grid(recipe("smoke"), {"base": {}, "lever": {"optim": {"lr": 1e-3}},
                                   "other": {"optim": {"lr": 5e-4}}}, seeds=2)
    passes = {("base", 0): [100, 100, 200, 300], ("base", 1): [100, 200, 9e9, 9e9],
              ("lever", 0): [100, 100, 100, 200], ("lever", 1): [100, 100, 300, 9e9],
              ("other", 0): [100] * 4, ("other", 1): [100] * 4}
    pairs = []
    for i, s in enumerate(specs):
        d = tmp_path / str(i)
        d.mkdir()
        (d / "run.json").write_text(json.dumps({"wall_s": 30.0 + i, "step": 20}))
        pairs.append((s, {"curve": curve(passes[s.arm, s.seed]), "dir": str(d)}))
    rep = lever_section(Report("t", tmp_path), Results(pairs, "smoke", 2), ["base", "lever"],
                        0.9)
    text = rep.sections[-1]
    steps = specs[0].config.steps
    assert f"| base | 2 | {steps} | 200, never | 0.50 | 300, never | 0.50 | 1525 |" in text
    assert f"| lever | 2 | {steps} | 100, 300 | 1.00 | 200, never | 0.50 | 1625 |" in text
    assert "| other |" not in text


