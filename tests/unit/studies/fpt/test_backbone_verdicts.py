"""The verdict rules of FPT's other backbones (fpt/_support/backbone_verdicts.py) on noisy
numbers, and which runs fpt-backbones / fpt-vit build: each status reachable, one seed decides
nothing, a task only one arm ran is compared on nothing, and the preconditions (some task
learned, the arms learned what they are compared on) turn a verdict inconclusive with their
reason."""

from __future__ import annotations

import numpy as np
import pytest

from reasonlab.studies import STUDIES
from reasonlab.studies.kit import sequential
from reasonlab.studies.fpt._support.backbone_verdicts import ABOUT, LIKE, less_verdict, like_verdict

BERT_LIKE = STUDIES["fpt-backbones"].claim("bert-like-gpt2")
LESS = STUDIES["fpt-backbones"].claim("longformer-less")
LISTOPS, C10 = "ListOps (fpt2021)", "CIFAR-10"


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def table(rng, means, sd=0.005, n=5):
    """task -> arm -> mean  ->  task -> arm -> n noisy seeds."""
    return {t: {a: rng.normal(m, sd, n).tolist() for a, m in arms.items()}
            for t, arms in means.items()}


SLIDES = {LISTOPS: {"GPT-2": 0.384, "BERT": 0.383, "Longformer": 0.170},
          C10: {"GPT-2": 0.682, "BERT": 0.688, "Longformer": 0.668}}


def test_bert_like_gpt2_on_the_slides_numbers(rng):
    # the interval is at least as wide as at each task's measured per-seed noise (ListOps 0.06,
    # CIFAR-10 0.032: kit stats.at_noise): the 3-point margin needs about 30 seeds, not 5
    v = like_verdict(BERT_LIKE, table(rng, SLIDES, n=30), "BERT", "GPT-2", LIKE)
    assert v.status == "reproduced" and -LIKE < v.effect.lo and v.effect.hi < LIKE
    assert like_verdict(BERT_LIKE, table(rng, SLIDES), "BERT", "GPT-2", LIKE).status == \
        "inconclusive"
    assert "ListOps (fpt2021) -0.00" in v.evidence or "ListOps (fpt2021) +0.00" in v.evidence
    # BERT 8 points behind on both tasks: confidently outside the margin
    far = {t: {"GPT-2": a["GPT-2"], "BERT": a["GPT-2"] - 0.08} for t, a in SLIDES.items()}
    assert like_verdict(BERT_LIKE, table(rng, far), "BERT", "GPT-2", LIKE).status == \
        "not reproduced"
    # noisy seeds (ListOps' provisional 0.08 per seed): the interval spans the margin
    v = like_verdict(BERT_LIKE, table(rng, SLIDES, sd=0.08), "BERT", "GPT-2", LIKE)
    assert v.status == "inconclusive" and "underpowered" in v.why


def test_one_seed_decides_nothing(rng):
    v = like_verdict(BERT_LIKE, table(rng, SLIDES, n=1), "BERT", "GPT-2", ABOUT)
    assert v.status == "inconclusive" and "too few units" in v.why
    v = less_verdict(LESS, table(rng, SLIDES, n=1), "Longformer", "GPT-2")
    assert v.status == "inconclusive" and "too few units" in v.why


def test_longformer_less_than_gpt2_on_the_tasks_both_ran(rng):
    # Longformer runs CIFAR-10 only (ListOps' 512 tokens exceed its window): the comparison
    # is CIFAR-10's, and the evidence says ListOps was not run on both
    values = table(rng, SLIDES)
    del values[LISTOPS]["Longformer"]
    v = less_verdict(LESS, values, "Longformer", "GPT-2")
    assert v.status == "reproduced" and v.effect.value == pytest.approx(
        np.mean(values[C10]["GPT-2"]) - np.mean(values[C10]["Longformer"]))
    assert "not run on both: ListOps (fpt2021)" in v.evidence
    assert "mean over 1 tasks" in v.evidence
    # GPT-2 confidently at chance on a counted task (Longformer learned it): the shortfall
    # tests nothing there, and more seeds cannot lift GPT-2, so a sequential look stops
    flat = table(rng, {C10: {"GPT-2": 0.1, "Longformer": 0.5}})
    v = less_verdict(LESS, flat, "Longformer", "GPT-2")
    assert v.status == "inconclusive" and not v.curtailed
    with sequential.adding(3):
        assert less_verdict(LESS, flat, "Longformer", "GPT-2").curtailed
        assert like_verdict(BERT_LIKE, {C10: {**flat[C10], "BERT": flat[C10]["Longformer"]}},
                            "BERT", "GPT-2", LIKE).curtailed
    # no shortfall: confidently below the LESS the claim needs
    same = {C10: {"GPT-2": 0.682, "Longformer": 0.682}}
    v = less_verdict(LESS, table(rng, same, sd=0.002), "Longformer", "GPT-2")
    assert v.status == "not reproduced" and v.effect.hi < 0.01


def test_preconditions(rng):
    # every arm confidently at chance on every task: nothing is compared
    chance = {C10: {"GPT-2": 0.1, "BERT": 0.1}}
    v = like_verdict(BERT_LIKE, table(rng, chance), "BERT", "GPT-2", LIKE)
    assert v.status == "inconclusive" and "no task on which either arm learned" in v.why
    # a task where both sit at chance is left out; the other decides
    mixed = {LISTOPS: {"GPT-2": 0.1, "BERT": 0.1}, C10: {"GPT-2": 0.682, "BERT": 0.688}}
    v = like_verdict(BERT_LIKE, table(rng, mixed, n=30), "BERT", "GPT-2", LIKE)
    assert v.status == "reproduced" and "below chance + 0.1): ListOps (fpt2021)" in v.evidence
    # two arms just short of learned (not confidently below it) would be trivially alike
    near = {C10: {"GPT-2": 0.17, "BERT": 0.17}}
    v = like_verdict(BERT_LIKE, table(rng, near, sd=0.05), "BERT", "GPT-2", ABOUT)
    assert v.status == "inconclusive" and "precondition not met" in v.why \
        and "CIFAR-10: BERT" in v.why
    # GPT-2 never learned: a shortfall below it tests nothing
    low = {C10: {"GPT-2": 0.17, "Longformer": 0.10}}
    v = less_verdict(LESS, table(rng, low, sd=0.05), "Longformer", "GPT-2")
    assert v.status == "inconclusive" and "GPT-2 is not 0.1 above chance" in v.why


def test_the_paper_runs_skip_what_does_not_map_and_take_the_folders_given(tmp_path,
                                                                         monkeypatch):
    from reasonlab.model.tiny_hf import POSITIONS, tiny_folder

    monkeypatch.setenv("REASONLAB_CACHE", str(tmp_path))
    backbones = STUDIES["fpt-backbones"]()
    backbones.configure({})
    cells = {(s.arm, s.factors["task"]) for s in backbones.runs("paper", 5)}
    assert cells == {("GPT-2", LISTOPS), ("GPT-2", C10), ("BERT", LISTOPS), ("BERT", C10),
                     ("Longformer", C10)}  # ListOps' 512 tokens exceed Longformer's 257
    folder = tiny_folder("bert")  # a BERT folder of 64 positions: CIFAR-10's 64 patches only
    backbones.configure({"bert": str(folder)})
    specs = backbones.runs("paper", 5)
    assert {(s.arm, s.config.init_from) for s in specs} == {
        ("GPT-2", "gpt2"), ("BERT", f"hf:{folder}"), ("Longformer", "longformer-base-4096")}
    assert {s.factors["task"] for s in specs if s.arm == "BERT"} == {C10} and POSITIONS == 64
    vit = STUDIES["fpt-vit"]()
    vit.configure({})
    specs = vit.runs("smoke", 1)
    assert {s.config.init_from for s in specs} == {"tiny-gpt2", "tiny-vit"}
