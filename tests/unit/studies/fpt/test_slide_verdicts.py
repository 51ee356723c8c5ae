"""The verdict rules of the FPT slide-table studies on hand-made numbers: each status
reachable, and a table without the paper's effect never reads reproduced."""

from __future__ import annotations

from reasonlab.studies import STUDIES
from reasonlab.studies.fpt.slide_verdicts import (attention_verdict, better_on_both,
                                                  better_verdict,
                                                  both_backbones, fitting_verdict, lead_verdict,
                                                  scaling_verdict, statistics_verdict)

C = STUDIES["fpt-init"].claim("statistics-only")
P, S, D = "Pretrained", "Statistics Only", "Default"


def init(pre, stats, default, task="digits"):
    return {task: {P: pre, S: stats, D: default}}


def test_statistics_only_share_of_pretrainings_gain():
    # the slides' MNIST: 98.0 / 97.2 / 91.7 -> 0.87 of the gain recovered
    assert statistics_verdict(C, init(0.98, 0.972, 0.917), P, S, D).status == "reproduced"
    # absent the effect (Statistics Only no better than Default): not reproduced
    assert statistics_verdict(C, init(0.98, 0.90, 0.917), P, S, D).status == "not reproduced"
    v = statistics_verdict(C, init(0.98, 0.93, 0.917), P, S, D)  # 0.2 of the gain
    assert v.status == "inconclusive" and "0.21" in v.evidence
    # pretraining itself does not help: the comparison tests nothing
    v = statistics_verdict(C, init(0.80, 0.85, 0.79), P, S, D)
    assert v.status == "inconclusive" and "on no task" in v.evidence
    # a task where pretraining does not help is left out of the mean
    both = {**init(0.98, 0.972, 0.917), **init(0.5, 0.2, 0.49, "ListOps (fpt2021)")}
    v = statistics_verdict(C, both, P, S, D)
    assert v.status == "reproduced" and "left out: ListOps (fpt2021)" in v.evidence


def test_better_verdict_needs_learned_tasks_and_a_gain():
    claim = STUDIES["fpt-modality"].claim("language-over-bit")
    m = {"digits": {"FPT": 0.9, "Bit": 0.85}, "bit XOR": {"FPT": 0.52, "Bit": 0.5}}
    v = better_verdict(claim, m, "FPT", "Bit")
    assert v.status == "reproduced" and "left out (neither 0.1 above chance): bit XOR" in v.evidence
    assert better_verdict(claim, {"digits": {"FPT": 0.85, "Bit": 0.86}}, "FPT",
                          "Bit").status == "not reproduced"
    assert better_verdict(claim, {"digits": {"FPT": 0.86, "Bit": 0.85}}, "FPT",
                          "Bit").status == "inconclusive"
    assert better_verdict(claim, {"bit XOR": {"FPT": 0.5, "Bit": 0.5}}, "FPT",
                          "Bit").status == "inconclusive"


def test_fitting_verdict():
    claim = STUDIES["fpt-fitting"].claim("underfitting")
    names = ("FPT", "From scratch")
    t = "Fashion-MNIST"
    # the slides: FPT 38.5 / 38.6, vanilla transformer 70 / 42
    assert fitting_verdict(claim, t, (0.385, 0.386), (0.70, 0.42), names).status == "reproduced"
    # both overfit alike: not reproduced
    assert fitting_verdict(claim, t, (0.70, 0.45), (0.72, 0.45), names).status == "not reproduced"
    # neither overfits: the contrast is absent, so not reproduced
    assert fitting_verdict(claim, t, (0.60, 0.60), (0.60, 0.61), names).status == "not reproduced"
    assert fitting_verdict(claim, t, (0.64, 0.60), (0.70, 0.61), names).status == "inconclusive"
    assert fitting_verdict(claim, t, (0.15, 0.12), (0.9, 0.1), names).status == "inconclusive"


def test_scaling_and_lead_verdicts():
    grow, lead = (STUDIES["fpt-scaling"].claim(k) for k in ("scaling", "scaling-lead"))
    t = "Fashion-MNIST"
    assert scaling_verdict(grow, t, {1: 0.60, 2: 0.62, 4: 0.65}).status == "reproduced"
    assert scaling_verdict(grow, t, {1: 0.65, 2: 0.62, 4: 0.64}).status == "not reproduced"
    assert scaling_verdict(grow, t, {1: 0.60, 2: 0.62, 4: 0.61}).status == "inconclusive"
    assert scaling_verdict(grow, t, {1: 0.1, 2: 0.12, 4: 0.15}).status == "inconclusive"
    fpt, rnd = {1: 0.6, 2: 0.62, 4: 0.65}, {1: 0.55, 2: 0.58, 4: 0.6}
    assert lead_verdict(lead, t, fpt, rnd).status == "reproduced"
    assert lead_verdict(lead, t, fpt, {**rnd, 4: 0.66}).status == "not reproduced"
    assert lead_verdict(lead, t, fpt, {**rnd, 2: 0.61}).status == "inconclusive"


def test_attention_verdict():
    claim = STUDIES["fpt-attention"].claim("attention-maps")
    # mass 0.6 on the needed keys where uniform attention puts 0.2, up from 0.25 at step 0
    assert attention_verdict(claim, "bit XOR", 0.6, 0.25, 0.2, 1.0).status == "reproduced"
    # structure already there before training and unchanged: the model did not learn it
    assert attention_verdict(claim, "bit XOR", 0.6, 0.6, 0.2, 1.0).status == "not reproduced"
    # uniform-like attention
    assert attention_verdict(claim, "bit XOR", 0.22, 0.1, 0.2, 1.0).status == "not reproduced"
    assert attention_verdict(claim, "bit XOR", 0.3, 0.2, 0.2, 1.0).status == "inconclusive"
    v = attention_verdict(claim, "bit XOR", 0.6, 0.2, 0.2, 0.52)  # task not learned
    assert v.status == "inconclusive" and "did not learn" in v.evidence


def test_both_backbones_reproduce_only_together():
    claim = STUDIES["fpt-attention"].claim("attention-maps")
    ok = attention_verdict(claim, "bit XOR", 0.6, 0.25, 0.2, 1.0)
    bad = attention_verdict(claim, "bit XOR", 0.22, 0.1, 0.2, 1.0)
    assert both_backbones(claim, {"a": ok, "b": ok}).status == "reproduced"
    v = both_backbones(claim, {"SmolLM2-135M": ok, "MiniLM-L6": bad})
    assert v.status == "not reproduced" and "MiniLM-L6 (not reproduced)" in v.evidence


def test_better_on_both_needs_the_gain_on_each_backbone():
    claim = STUDIES["fpt-modality"].claim("bit-over-random")
    gain = {"digits": {"Bit": 0.9, "Random": 0.8}}
    none = {"digits": {"Bit": 0.8, "Random": 0.8}}
    assert better_on_both(claim, {"a": gain, "b": gain}, "Bit", "Random").status == "reproduced"
    v = better_on_both(claim, {"SmolLM2-135M": gain, "MiniLM-L6": none}, "Bit", "Random")
    assert v.status == "not reproduced" and "MiniLM-L6 (not reproduced)" in v.evidence
