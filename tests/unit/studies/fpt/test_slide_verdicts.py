"""The verdict rules of the FPT slide-table studies on noisy numbers (a seeded generator draws
each seed's value around the arm's mean): each status reachable, a table without the paper's
effect never reads reproduced, one seed per arm decides nothing, and each precondition turns a
verdict inconclusive with its reason."""

from __future__ import annotations

import numpy as np
import pytest

from reasonlab.studies import STUDIES
from reasonlab.studies.fpt._support.slide_verdicts import (BIT_LEARNED, attention_verdict,
                                                           better_on_both, better_verdict,
                                                           both_backbones, fitting_verdict,
                                                           lead_verdict, pretraining_learned,
                                                           scaling_verdict, statistics_verdict)

C = STUDIES["fpt-init"].claim("statistics-only")
P, S, D = "Pretrained", "Statistics Only", "Default"


@pytest.fixture
def rng():
    return np.random.default_rng(1)


def noisy(rng, mean, sd=0.01, n=3):
    return rng.normal(mean, sd, n).tolist()


def table(rng, means, sd=0.01, n=3):
    """task -> arm -> mean  ->  task -> arm -> n noisy seeds."""
    return {t: {a: noisy(rng, m, sd, n) for a, m in arms.items()} for t, arms in means.items()}


def test_statistics_only_share_of_pretrainings_gain(rng):
    # the slides' ListOps and MNIST: 38.4 / 37.4 / 34.3 and 98.0 / 97.2 / 91.7
    slides = {"ListOps (fpt2021)": {P: 0.384, S: 0.374, D: 0.343},
              "digits": {P: 0.98, S: 0.972, D: 0.917}}
    # Fieller's interval is at least as wide as at each task's measured per-seed noise (ListOps
    # 0.06, digits 0.032: kit stats.at_noise), so the slides' small gains need about 30 seeds
    v = statistics_verdict(C, table(rng, slides, 0.005, n=30), P, S, D)
    assert v.status == "reproduced" and v.effect.scale == "ratio" and v.effect.lo >= 0.5
    assert statistics_verdict(C, table(rng, slides, 0.005), P, S, D).status == "inconclusive"
    # absent the effect (Statistics Only no better than Default): not reproduced
    none = {"digits": {P: 0.98, S: 0.7, D: 0.7}}
    assert statistics_verdict(C, table(rng, none), P, S, D).status == "not reproduced"
    # pretraining itself does not help: there is no gain to recover, the share tests nothing
    v = statistics_verdict(C, table(rng, {"digits": {P: 0.80, S: 0.85, D: 0.80}}), P, S, D)
    assert v.status == "inconclusive" and "precondition not met (Pretrained does not beat " \
        "Default" in v.why
    # a task where pretraining gains little adds little to the summed gains (SmolLM2's
    # Fashion-MNIST at cpu scale: 69.9 / 73.0 / 68.8)
    both = {**slides, "Fashion-MNIST": {P: 0.699, S: 0.73, D: 0.688}}
    v = statistics_verdict(C, table(rng, both, 0.005, n=30), P, S, D)
    assert v.status == "reproduced" and "Fashion-MNIST +0.04" in v.evidence


def test_statistics_only_share_interval_and_cap(rng):
    """SmolLM2 at cpu scale, one seed: Statistics Only beats Pretrained on ListOps (share
    1.18). With seeds, the share gets Fieller's interval and shows capped at 1."""
    over = {"ListOps (fpt2021)": {P: 0.32, S: 0.344, D: 0.188}}
    v = statistics_verdict(C, table(rng, over), P, S, D)
    assert v.effect.value == 1.0 and "uncapped 1.1" in v.evidence
    noisy_half = {"digits": {P: 0.95, S: 0.83, D: 0.7}}  # share 0.52, noisy: either side
    v = statistics_verdict(C, table(rng, noisy_half, 0.04), P, S, D)
    # its power is quoted at the slides' smallest share (0.76, 0.26 above the bar), never at
    # the observed share
    assert v.status == "inconclusive" and "for an effect of 0.26" in v.why
    one = statistics_verdict(C, table(rng, {"digits": {P: 0.98, S: 0.97, D: 0.5}}, n=1), P, S,
                             D)
    assert one.status == "inconclusive" and "too few units" in one.why


def test_better_verdict_needs_learned_tasks_and_a_gain(rng):
    claim = STUDIES["fpt-modality"].claim("language-over-bit")
    m = table(rng, {"digits": {"FPT": 0.9, "Bit": 0.8}, "bit XOR": {"FPT": 0.52, "Bit": 0.5}})
    v = better_verdict(claim, m, "FPT", "Bit")
    assert v.status == "reproduced"
    assert "confidently below chance + 0.1): bit XOR" in v.evidence
    assert better_verdict(claim, table(rng, {"digits": {"FPT": 0.85, "Bit": 0.86}}), "FPT",
                          "Bit").status == "not reproduced"
    v = better_verdict(claim, table(rng, {"digits": {"FPT": 0.87, "Bit": 0.85}}, 0.02), "FPT",
                       "Bit")
    assert v.status == "inconclusive" and "underpowered" in v.why
    v = better_verdict(claim, table(rng, {"bit XOR": {"FPT": 0.5, "Bit": 0.5}}), "FPT", "Bit")
    assert v.status == "inconclusive" and "precondition not met" in v.why
    v = better_verdict(claim, table(rng, {"digits": {"FPT": 0.95, "Bit": 0.5}}, n=1), "FPT",
                       "Bit")
    assert v.status == "inconclusive" and "too few units" in v.why


def test_bit_backbone_must_have_learned_bit_memory(rng):
    """A Bit backbone whose pretraining never learned bit memory is a random backbone: Bit
    beating (or losing to) anything then tests nothing, so the verdict is inconclusive."""
    claim = STUDIES["fpt-modality"].claim("bit-over-random")
    gain = table(rng, {"digits": {"Bit": 0.9, "Random": 0.8}})
    learned = {"SmolLM2-135M": noisy(rng, 0.9, 0.02), "MiniLM-L6": noisy(rng, 0.73, 0.03)}
    v = better_on_both(claim, {"SmolLM2-135M": gain, "MiniLM-L6": gain}, "Bit", "Random",
                       learned)
    assert v.status == "reproduced" and "Bit pretraining (masked bits, per seed)" in v.evidence
    failed = {**learned, "MiniLM-L6": noisy(rng, 0.52, 0.02)}  # chance 0.5
    v = better_on_both(claim, {"SmolLM2-135M": gain, "MiniLM-L6": gain}, "Bit", "Random",
                       failed)
    assert v.status == "inconclusive"
    assert f"MiniLM-L6: precondition not met (3 of 3 bit-memory pretraining runs end below " \
           f"{BIT_LEARNED:g}" in v.why
    assert pretraining_learned([0.9, 0.58, 0.91]) is not None  # one seed's backbone is enough
    assert pretraining_learned([0.9, 0.61, 0.91]) is None
    # a seed whose backbone did not learn stays in every later look: a sequential run stops
    # there, the other backbone's part being decided (a part still open keeps it going)
    assert v.curtailed
    open_ = table(rng, {"digits": {"Bit": 0.82, "Random": 0.8}}, sd=0.05)
    v = better_on_both(claim, {"SmolLM2-135M": open_, "MiniLM-L6": gain}, "Bit", "Random",
                       failed)
    assert v.status == "inconclusive" and not v.curtailed


def test_fitting_verdict(rng):
    claim = STUDIES["fpt-fitting"].claim("underfitting")
    names = ("FPT", "From scratch")
    t = "Fashion-MNIST"

    def arm(train, test, sd=0.01, n=3):
        return noisy(rng, train, sd, n), noisy(rng, test, sd, n)

    # the slides: FPT 38.5 / 38.6, vanilla transformer 70 / 42; "FPT underfits" reads the
    # share of seeds whose gap is <= UNDERFIT, which 6 unanimous seeds decide and 3 cannot
    assert fitting_verdict(claim, t, arm(0.385, 0.386, n=6), arm(0.70, 0.42, n=6),
                           names).status == "reproduced"
    three = fitting_verdict(claim, t, arm(0.385, 0.386), arm(0.70, 0.42), names)
    assert three.status == "inconclusive" and "unanimous ones from 6" in three.why
    # fit-or-not FPT seeds: 3 of 6 underfit, 3 overfit by 0.2: not decided either way
    split = ([0.4] * 6, [0.4] * 3 + [0.2] * 3)
    v = fitting_verdict(claim, t, split, arm(0.70, 0.42, n=6), names)
    assert v.status == "inconclusive" and "3 of 6 <= 0.05" in v.evidence
    # both overfit alike (ours at cpu scale): not reproduced
    v = fitting_verdict(claim, t, arm(0.82, 0.727), arm(0.816, 0.742), names)
    assert v.status == "not reproduced" and "From scratch overfits more (not reproduced)" in \
        v.evidence
    # neither overfits: the contrast is absent, so not reproduced
    assert fitting_verdict(claim, t, arm(0.60, 0.60), arm(0.60, 0.61),
                           names).status == "not reproduced"
    v = fitting_verdict(claim, t, arm(0.64, 0.60, 0.02), arm(0.76, 0.61, 0.02), names)
    assert v.status == "inconclusive"
    v = fitting_verdict(claim, t, arm(0.15, 0.12), arm(0.9, 0.1), names)
    assert v.status == "inconclusive" and "precondition not met" in v.why
    v = fitting_verdict(claim, t, arm(0.4, 0.4, 0, 6), arm(0.9, 0.4, 0, 6), names)
    assert v.status == "reproduced"  # identical seeds: no spread, the share still counts them
    one = fitting_verdict(claim, t, (noisy(rng, 0.4, n=1), noisy(rng, 0.4, n=1)),
                          (noisy(rng, 0.9, n=1), noisy(rng, 0.4, n=1)), names)
    assert one.status == "inconclusive" and "too few units" in one.why


def test_scaling_verdict(rng):
    grow = STUDIES["fpt-scaling"].claim("scaling")
    t = "Fashion-MNIST"

    def sizes(*means, sd=0.01, n=3):
        return {k: noisy(rng, m, sd, n) for k, m in zip((1, 2, 4), means)}

    v = scaling_verdict(grow, t, sizes(0.60, 0.62, 0.66))
    assert v.status == "reproduced" and "rise from layers=1 to layers=4" in v.effect.what
    assert scaling_verdict(grow, t, sizes(0.65, 0.62, 0.64, sd=0.005)).status == "not reproduced"
    # SmolLM2 at cpu scale: +0.031 at seed 0, -0.008 at seed 1 -- noise of that size decides
    # nothing at 3 seeds
    v = scaling_verdict(grow, t, sizes(0.69, 0.70, 0.70, sd=0.028))
    assert v.status == "inconclusive" and "underpowered" in v.why
    v = scaling_verdict(grow, t, sizes(0.1, 0.12, 0.15))
    assert v.status == "inconclusive" and "precondition not met" in v.why
    v = scaling_verdict(grow, t, sizes(0.6, 0.7, 0.8, n=1))
    assert v.status == "inconclusive" and "too few units" in v.why


def test_lead_verdict_at_every_size(rng):
    lead = STUDIES["fpt-scaling"].claim("scaling-lead")
    t = "Fashion-MNIST"

    def sizes(*means, sd=0.01, n=3):
        return {k: noisy(rng, m, sd, n) for k, m in zip((1, 2, 4), means)}

    fpt = sizes(0.70, 0.72, 0.75)
    assert lead_verdict(lead, t, fpt, sizes(0.60, 0.62, 0.64)).status == "reproduced"
    v = lead_verdict(lead, t, fpt, sizes(0.60, 0.62, 0.78))  # random better at 4 layers
    assert v.status == "not reproduced" and "4 layers (not reproduced)" in v.evidence
    v = lead_verdict(lead, t, sizes(0.70, 0.72, 0.75, sd=0.03), sizes(0.60, 0.62, 0.725))
    assert v.status == "inconclusive"
    v = lead_verdict(lead, t, sizes(0.7, 0.7, 0.7, n=1), sizes(0.5, 0.5, 0.5, n=1))
    assert v.status == "inconclusive" and "too few units" in v.why


def test_attention_verdict(rng):
    claim = STUDIES["fpt-attention"].claim("attention-maps")

    def v(trained, initial, accuracy=1.0, sd=0.01, n=3, uniform=0.2):
        return attention_verdict(claim, "bit XOR", noisy(rng, trained, sd, n),
                                 noisy(rng, initial, sd, n), uniform,
                                 noisy(rng, accuracy, 0.005, n))

    # mass 0.6 on the needed keys where uniform attention puts 0.2, up from 0.25 at step 0:
    # the lift reads the share of seeds >= LIFT, decided by 6 unanimous seeds, not by 3
    assert v(0.6, 0.25, n=6).status == "reproduced"
    assert v(0.6, 0.25).status == "inconclusive"
    # structure already there before training and unchanged: the model did not learn it
    out = v(0.6, 0.6)
    assert out.status == "not reproduced" and "learned during training (not reproduced)" in \
        out.evidence
    assert v(0.22, 0.1, n=6).status == "not reproduced"  # uniform-like attention
    assert v(0.4, 0.2, sd=0.05).status == "inconclusive"  # lift 2.0 +- noise
    out = v(0.6, 0.2, accuracy=0.52)  # task not learned
    assert out.status == "inconclusive" and "did not learn" in out.why
    out = v(0.8, 0.2, n=1)
    assert out.status == "inconclusive" and "too few units" in out.why


def test_both_backbones_reproduce_only_together(rng):
    claim = STUDIES["fpt-modality"].claim("bit-over-random")
    ok = better_verdict(claim, table(rng, {"digits": {"Bit": 0.9, "Random": 0.8}}), "Bit",
                        "Random")
    bad = better_verdict(claim, table(rng, {"digits": {"Bit": 0.8, "Random": 0.8}}), "Bit",
                         "Random")
    assert both_backbones(claim, {"a": ok, "b": ok}).status == "reproduced"
    v = both_backbones(claim, {"SmolLM2-135M": ok, "MiniLM-L6": bad})
    assert v.status == "not reproduced" and "MiniLM-L6 (not reproduced)" in v.evidence
