"""Verdict rules of the LEGO mechanism studies on hand-made numbers."""

import numpy as np

from reasonlab.studies.kit.base import Claim
from reasonlab.studies.lego.common import MIMIC, PRETRAINED, RANDOM
from reasonlab.studies.lego.verdicts import (closed_verdict, converge_verdict, first_pass_steps,
                                             last_first_every_arm, last_first_verdict,
                                             needs_fit, span_gain)
from reasonlab.studies.kit.verdicts import gain_verdict

C = Claim("k", "text", "src")


def test_gain_verdict_thresholds():
    assert gain_verdict(C, np.array([0.8, 0.82, 0.81]), np.array([0.6, 0.61, 0.62]),
                        ("a", "b"), "x").status == "reproduced"
    assert gain_verdict(C, np.array([0.6, 0.61]), np.array([0.62, 0.6]),
                        ("a", "b"), "x").status == "not reproduced"  # gain <= 0
    # a small gain with a tiny spread is confidently below 0.05: not reproduced
    assert gain_verdict(C, np.array([0.62, 0.62]), np.array([0.6, 0.6]),
                        ("a", "b"), "x").status == "not reproduced"
    # a large but noisy gain: inconclusive
    v = gain_verdict(C, np.array([0.5, 0.9]), np.array([0.5, 0.6]), ("a", "b"), "x")
    assert v.status == "inconclusive" and "+0.150" in v.evidence


def test_needs_fit_only_when_no_arm_learned_its_supervised_positions():
    v = gain_verdict(C, np.array([0.5, 0.5]), np.array([0.52, 0.52]), ("a", "b"), "x")
    assert v.status == "not reproduced"
    chance = [[0.5, 0.5, 0.5, 0.5]] * 2  # 2 seeds x 4 positions
    fitted = [[1.0, 0.95, 0.5, 0.5]] * 2
    sup = slice(0, 2)
    out = needs_fit(v, {"a": chance, "b": chance}, sup)
    assert out.status == "inconclusive" and out.evidence.startswith(v.evidence)
    assert "a 0.500" in out.evidence and "#0-#1" in out.evidence
    assert needs_fit(v, {"a": chance, "b": fitted}, sup) is v  # one arm fits: unchanged


def curve(rows):
    return [{"step": 10 * (i + 1), "acc_by_depth": r} for i, r in enumerate(rows)]


def test_first_pass_and_last_first():
    c = curve([[0.95, 0.5, 0.5, 0.92], [0.95, 0.91, 0.5, 0.95], [0.95, 0.95, 0.95, 0.95]])
    assert first_pass_steps(c) == [10, 20, 30, 10]
    # positions #1..#2 are the middle here; the last passes before both
    assert last_first_verdict(C, [c]).status == "reproduced"
    late = curve([[0.95, 0.95, 0.95, 0.5], [0.95, 0.95, 0.95, 0.95]])
    assert last_first_verdict(C, [late]).status == "not reproduced"
    never = curve([[0.5] * 4])
    assert last_first_verdict(C, [never]).status == "inconclusive"


def test_converge_and_closed_gap():
    assert converge_verdict(C, [20.0], [float("inf")], ("p", "r")).status == "reproduced"
    assert converge_verdict(C, [40.0], [20.0], ("p", "r")).status == "not reproduced"
    assert converge_verdict(C, [float("inf")], [float("inf")], ("p", "r")).status == \
        "inconclusive"
    finals = {RANDOM: [[1, 0.5, 0.5]] * 2, PRETRAINED: [[1, 0.9, 0.9]] * 2,
              MIMIC: [[1, 0.8, 0.8]] * 2}
    v = closed_verdict(C, finals, slice(1, 3), "x")
    assert v.status == "reproduced" and "0.75" in v.evidence  # (0.8 - 0.5) / (0.9 - 0.5)
    finals[MIMIC] = [[1, 0.6, 0.6]] * 2
    assert closed_verdict(C, finals, slice(1, 3), "x").status == "not reproduced"
    finals[PRETRAINED] = [[1, 0.5, 0.5]] * 2  # no gap to close
    assert closed_verdict(C, finals, slice(1, 3), "x").status == "inconclusive"


def test_a_tie_with_the_last_variable_counts_half_not_as_later():
    # #5 is the last; the middle #1-#4 pass at 30, 30, 30 and 20, #5 at 20 (one tie)
    rows = [[0.95, 0.5, 0.5, 0.5, 0.5, 0.5], [0.95, 0.5, 0.5, 0.5, 0.95, 0.95],
            [0.95] * 6]
    v = last_first_verdict(C, [curve(rows)])
    assert v.status == "reproduced"  # (3 + 0.5) / 4 = 0.875 >= 0.8; 'not earlier' gave 0.75
    assert "earlier than 3, tied with 1" in v.evidence
    two_ties = [[0.95, 0.5, 0.5, 0.5, 0.5, 0.5], [0.95, 0.5, 0.5, 0.95, 0.95, 0.95], [0.95] * 6]
    assert last_first_verdict(C, [curve(two_ties)]).status == "not reproduced"  # 0.75


def test_all_of_needs_every_arm():
    from reasonlab.studies.kit.base import Verdict
    from reasonlab.studies.kit.verdicts import all_of

    ok, no, unsure = (Verdict(C, s, s) for s in ("reproduced", "not reproduced", "inconclusive"))
    assert all_of(C, {"BERT": ok, "ALBERT": ok}).status == "reproduced"
    assert all_of(C, {"BERT": ok, "ALBERT": unsure}).status == "inconclusive"
    assert all_of(C, {"BERT": unsure, "ALBERT": no}).status == "not reproduced"
    assert "ALBERT (inconclusive)" in all_of(C, {"BERT": ok, "ALBERT": unsure}).evidence


def test_heads_verdict_needs_the_variable_score_to_beat_its_positional_control():
    import torch

    from reasonlab.studies.lego.verdicts import heads_verdict

    def side(variables, permuted, manip, positional=0.0):
        z = torch.zeros(2, 2)
        v, p, m = z.clone(), z.clone(), z.clone()
        v[1, 0], p[1, 0], m[0, 1] = variables, permuted, manip
        return ({"manipulation": m},
                {"variables": v, "variables, permuted": p,
                 "positional head": torch.tensor([[positional]])})

    rand = side(0.05, 0.05, 0.2)
    good = side(0.9, 0.1, 0.8)
    scores = {PRETRAINED: good[0], RANDOM: rand[0]}
    assert heads_verdict(C, scores, {PRETRAINED: good[1], RANDOM: rand[1]}).status == "reproduced"
    # a head whose variable score its position alone earns (clause-permuted score as high)
    positional = side(0.9, 0.8, 0.8)
    v = heads_verdict(C, scores, {PRETRAINED: positional[1], RANDOM: rand[1]})
    assert v.status == "not reproduced" and "positional control 0.80" in v.evidence
    same_slot = side(0.9, 0.1, 0.8, positional=0.75)
    assert heads_verdict(C, scores, {PRETRAINED: same_slot[1], RANDOM: rand[1]}).status == \
        "not reproduced"

def test_staircase_verdict():
    from reasonlab.studies.lego.verdicts import staircase_verdict

    inf = float("inf")
    stairs = {"fixed (paper)": [[100, 200, inf], [150, 150, 600]],
              "given (authors' code)": [[100, 300, inf], [125, 250, inf]]}
    # random root never leaves the plateau, or leaves it >= 2x later than the slowest #0
    for late in ([inf, inf], [300, inf]):
        rnd = {"random (both drawn)": [[late[0]] * 3, [late[1]] * 3]}
        assert staircase_verdict(C, {**stairs, **rnd}, 750).status == "reproduced"
    # random root learns a position as early as a one-token #0: not reproduced
    rnd = {"random (both drawn)": [[100, 500, inf], [inf] * 3]}
    assert staircase_verdict(C, {**stairs, **rnd}, 750).status == "not reproduced"
    # later, but not 2x later: inconclusive
    rnd = {"random (both drawn)": [[200, inf, inf], [inf] * 3]}
    assert staircase_verdict(C, {**stairs, **rnd}, 750).status == "inconclusive"
    # no staircase (a one-token seed learns #1 before #0): inconclusive at best
    bad = {**stairs, "fixed (paper)": [[300, 200, inf], [150, 150, 600]]}
    rnd = {"random (both drawn)": [[inf] * 3, [inf] * 3]}
    v = staircase_verdict(C, {**bad, **rnd}, 750)
    assert v.status == "inconclusive" and "never" in v.evidence


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


def test_classical_verdict_needs_every_seed_of_every_arm():
    from reasonlab.studies.lego.verdicts import classical_verdict

    good = [[1.0] * 6 + [0.5] * 6, [0.96] * 6 + [0.5] * 6]  # 2 seeds, #0-#5 learned
    weak = [[1.0] * 6 + [0.5] * 6, [0.94] * 6 + [0.5] * 6]  # one seed at 0.94 < 0.95
    v = classical_verdict(C, {"BERT": good, "ALBERT": good})
    assert v.status == "reproduced" and "BERT #0-#5 mean 0.980 (worst seed 0.960)" in v.evidence
    v = classical_verdict(C, {"BERT": good, "ALBERT": weak})
    assert v.status == "not reproduced" and "worst seed 0.940" in v.evidence


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

    from reasonlab.studies.kit.core import Results, RunSpec, grid
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


def test_span_gain_compares_a_span_once_an_arm_fits():
    """lego-shortcut's rule: mean final accuracy over #6-#10, gated on fitting #0-#4."""
    fit, lost = [1.0] * 5, [0.5] * 5
    finals = {"a": [fit + [0.9] * 5 + [1.0], fit + [0.88] * 5 + [1.0]],
              "b": [fit + [0.6] * 5 + [1.0], fit + [0.62] * 5 + [1.0]],
              "c": [lost + [0.5] * 6, lost + [0.5] * 6]}
    ok = span_gain(C, finals, "a", "b", slice(6, 11), slice(0, 5))
    assert ok.status == "reproduced" and "mean accuracy #6-#10" in ok.evidence
    assert span_gain(C, finals, "b", "a", slice(6, 11), slice(0, 5)).status == "not reproduced"
    unfit = {"c": finals["c"], "d": [lost + [0.2] * 6, lost + [0.2] * 6]}
    v = span_gain(C, unfit, "c", "d", slice(6, 11), slice(0, 5))
    assert v.status == "inconclusive" and "no arm fits #0-#4 (c 0.500, d 0.500" in v.evidence


def test_last_first_every_arm_needs_each_arm():
    early = curve([[0.95, 0.5, 0.5, 0.92], [0.95, 0.91, 0.5, 0.95], [0.95] * 4])
    late = curve([[0.95, 0.95, 0.95, 0.5], [0.95] * 4])
    assert last_first_every_arm(C, {"BERT": [early], "ALBERT": [early]}).status == "reproduced"
    v = last_first_every_arm(C, {"BERT": [early], "ALBERT": [late]})
    assert v.status == "not reproduced" and "ALBERT (not reproduced)" in v.evidence
