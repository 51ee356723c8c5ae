"""Verdict rules of the FPT studies that each reproduce one more slide table (Lu et al. 2021,
slides: "Weight initialization", "Importance of language pre-training", "Over- and
underfitting", "Scaling with size", "GPT-2 - first layer attention"), each deciding from
intervals over replication units (kit/stats.py; the unit: fpt/verdicts.py). Inputs are values
per seed, task -> arm -> metric per seed (or a rule's own shape, below), for ONE backbone; a
study judges each backbone and joins them with `both_backbones`. Thresholds are constants fixed
before any run. Unit tests on noisy numbers: tests/unit/studies/fpt/test_slide_verdicts.py;
each rule under its null: fpt/calibration.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from reasonlab.report import pm
from reasonlab.studies.fpt.common import CHANCE
from reasonlab.studies.fpt.verdicts import (LEARNED, LEFT_OUT, Values, learned, per_task,
                                            share_verdict_of, task_mean_gain, testable,
                                            unmet, with_evidence)
from reasonlab.studies.kit import stats
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import (all_of, at_least, at_most, decided,
                                            every_unit_verdict, requires, trend_verdict)

RECOVERS = 0.5
"""Statistics Only 'recovers much' of pretraining's gain over Default: the lower bound of its
share at least this (the slides' shares on memory / ListOps / MNIST: 1.0 / 0.76 / 0.87)."""
PAPER_SHARE = 0.76
"""The smallest share the slides show (ListOps), where an inconclusive share's power is quoted."""
BETTER = 0.02
"""One arm 'transfers better' than another: the mean gain over the counted tasks at least
this, its lower bound above 0 (the slides' FPT - Bit gaps: ListOps 3.0, MNIST 0.2, C10 5.6
points)."""
UNDERFIT = 0.05
"""FPT 'underfits': the upper bound of its train - test accuracy at most this (the slides:
38.5 - 38.6 = -0.1 point)."""
OVERFIT = 0.1
"""The from-scratch transformer 'overfits': its train - test gap exceeds FPT's by at least
this (the slides: vanilla transformer 70 - 42 = 28 points)."""
SCALES_UP = 0.02
"""'Larger backbones transfer better': FPT's accuracy rises by at least this from the smallest
to the largest backbone (the slides' CIFAR-10: +3.9 points from Small to Large)."""
LIFT = 2.0
"""First-layer attention 'shows the task's structure': the lower bound of its mass on the keys
the task needs at least LIFT x what uniform attention puts there ..."""
LEARNS = 0.05
"""... and at least this above the same model's mass before training (the authors' demo: "the
model learns to attend to the relevant bits"), the lower bound of the paired rise above 0."""
BIT_LEARNED = CHANCE["bit memory"] + LEARNED
"""The Bit backbone learned its pretraining task: each seed's bit-memory pretraining run ends
with its masked-bit accuracy at least this (chance 0.5 + LEARNED, the level at which every
comparison of this family counts a task as learned). A backbone below it holds nothing of bit
memory that a random backbone lacks, so comparing it with one tests nothing (the paper's Bit
backbone reached 100%)."""


def _mean(xs: Sequence[float]) -> float:
    return float(np.mean(xs))


def both_backbones(claim: Claim, verdicts: Mapping[str, Verdict]) -> Verdict:
    """One verdict from each backbone's (title -> verdict): reproduced when both are, not
    reproduced when either is not (kit.verdicts.all_of: an intersection-union test, each part
    at the kit's level keeps the whole at it)."""
    return all_of(claim, verdicts)


# -- Weight initialization ---------------------------------------------------------------------
def statistics_verdict(claim: Claim, values: Values, pretrained: str, statistics: str,
                       default: str) -> Verdict:
    """Statistics Only recovers at least RECOVERS of (Pretrained - Default) (slides, Weight
    initialization): the share of the summed gains over every task, sum(Statistics -
    Default) / sum(Pretrained - Default), with Fieller's interval, reproduced when its lower
    bound >= RECOVERS, not reproduced when its upper bound < RECOVERS, shown capped to [0, 1]
    (fpt.verdicts.share_verdict_of). Precondition: Pretrained beats Default."""
    return share_verdict_of(claim, values, statistics, default, pretrained, RECOVERS,
                            "share of pretraining's gain over Default that Statistics Only "
                            "recovers", paper=PAPER_SHARE)


# -- Importance of language pre-training ------------------------------------------------------
def better_verdict(claim: Claim, values: Values, better: str, worse: str) -> Verdict:
    """`better` transfers better than `worse` (slides, Importance of language pre-training).
    Aggregation: the mean over the tasks not left out (fpt.verdicts.unlearned) of
    mean(better) - mean(worse), decided by better_by(BETTER)."""
    tasks = testable(values, better, worse)
    left = f"{LEFT_OUT}: " + (", ".join(t for t in values if t not in tasks) or "none")
    if not tasks:
        return unmet(claim, left, "neither arm learned any task")
    est = task_mean_gain(values, tasks, better, worse,
                         f"{better} - {worse}, mean over {len(tasks)} tasks")
    return decided(claim, stats.better_by(est, BETTER),
                   f"{better} - {worse} per task: {per_task(values, tasks, better, worse)}; "
                   f"{left}")


def pretraining_learned(accuracy: Sequence[float]) -> str | None:
    """Why a Bit backbone did not learn its pretraining task (some seed's pretraining run ends
    below BIT_LEARNED on the masked bits), or None: each unit's backbone must have learned it,
    since a unit whose backbone did not compares two random-like backbones."""
    low = [a for a in accuracy if a < BIT_LEARNED]
    if not accuracy:
        return "no bit-memory pretraining run"
    if low:
        return (f"{len(low)} of {len(accuracy)} bit-memory pretraining runs end below "
                f"{BIT_LEARNED:g} on the masked bits ({', '.join(f'{a:.3f}' for a in low)})")
    return None


def better_on_both(claim: Claim, values: Mapping[str, Values], better: str, worse: str,
                   pretraining: Mapping[str, Sequence[float]] | None = None) -> Verdict:
    """`better_verdict` on each backbone (values: backbone title -> task -> arm -> metric per
    seed), joined by `both_backbones`. `pretraining` (backbone title -> each seed's Bit
    pretraining run's masked-bit accuracy): the precondition that the Bit backbone learned bit
    memory (`pretraining_learned`), for a claim that compares it with anything."""
    out = {}
    for b, v in values.items():
        verdict = better_verdict(claim, v, better, worse)
        if pretraining is not None:
            why = pretraining_learned(pretraining[b])
            verdict = with_evidence(verdict, "Bit pretraining (masked bits, per seed): "
                                    + ", ".join(f"{a:.3f}" for a in pretraining[b]))
            # a seed's backbone that did not learn stays in every later look: out of reach
            # (no run at all yet is within reach: runs may come)
            verdict = requires(verdict, why is None, why or "",
                               reachable=why is None or not pretraining[b])
        out[b] = verdict
    return both_backbones(claim, out)


# -- Over- and underfitting -------------------------------------------------------------------
TrainTest = tuple[Sequence[float], Sequence[float]]
"""(train accuracy per seed, test accuracy per seed) of one arm."""


def fitting_verdict(claim: Claim, task: str, fpt: TrainTest, scratch: TrainTest,
                    names: tuple[str, str]) -> Verdict:
    """FPT underfits where the transformer trained from scratch overfits (slides, Over- and
    underfitting), two parts that must both hold (kit all_of): FPT's train - test gap is at
    most UNDERFIT in more than half the seeds, by the exact lower bound of that share (kit
    every_unit_verdict: a seed fits or overfits, where the mean's t interval collapses), and
    the scratch arm's gap exceeds FPT's by better_by(OVERFIT). Precondition: either arm ends
    LEARNED above chance on the test set."""
    gap_f = np.asarray(fpt[0], float) - np.asarray(fpt[1], float)
    gap_s = np.asarray(scratch[0], float) - np.asarray(scratch[1], float)
    under = every_unit_verdict(claim, gap_f, at_most(UNDERFIT), f"<= {UNDERFIT}",
                               f"{names[0]} train - test",
                               f"{task}: {names[0]} train {pm(fpt[0])} / test {pm(fpt[1])}")
    over = decided(claim, stats.better_by(stats.difference(
        gap_s, gap_f, f"gap {names[1]} - gap {names[0]}"), OVERFIT),
        f"{task}: {names[1]} train {pm(scratch[0])} / test {pm(scratch[1])}, gap "
        f"{pm(gap_s)}; {names[0]} gap {pm(gap_f)}")
    v = all_of(claim, {f"{names[0]} underfits": under,
                       f"{names[1]} overfits more": over})
    return requires(v, learned(task, _mean(fpt[1]), _mean(scratch[1])),
                    f"neither model is {LEARNED} above chance on the test set")


# -- Scaling with size --------------------------------------------------------------------------
def scaling_verdict(claim: Claim, task: str, by_size: Mapping[int, Sequence[float]]
                    ) -> Verdict:
    """FPT's accuracy rises from the smallest to the largest backbone by better_by(SCALES_UP)
    over seeds (kit trend_verdict, end to end; the middle size is reported). Precondition:
    FPT learned the task at some size."""
    v = trend_verdict(claim, by_size, SCALES_UP, f"{task}, FPT by layers", x="layers")
    return requires(v, learned(task, *(_mean(x) for x in by_size.values())),
                    "FPT learned the task at no size")


def lead_verdict(claim: Claim, task: str, fpt: Mapping[int, Sequence[float]],
                 random: Mapping[int, Sequence[float]]) -> Verdict:
    """FPT beats the frozen random backbone of the same size. Aggregation: every size (kit
    all_of), each FPT - Random by better_by(BETTER); not reproduced when at some size the
    upper bound is below BETTER. Precondition: some arm learned the task."""
    per = {f"{k} layers": decided(claim, stats.better_by(
        stats.difference(fpt[k], random[k], "FPT - Random"), BETTER),
        f"{task}: FPT {pm(fpt[k])} vs Random {pm(random[k])}") for k in sorted(fpt)}
    return requires(all_of(claim, per),
                    learned(task, *(_mean(x) for x in (*fpt.values(), *random.values()))),
                    "no arm learned the task")


# -- First-layer attention maps -----------------------------------------------------------------
def attention_verdict(claim: Claim, task: str, trained: Sequence[float],
                      initial: Sequence[float], uniform: float,
                      accuracy: Sequence[float]) -> Verdict:
    """The trained model's first layer (mean over heads) attends to the keys the task needs
    (slides, GPT-2 - first layer attention), two parts that must both hold (kit all_of), per
    seed: its mass there over uniform attention's (`uniform`: fixed by the task's length and
    the mask) is at least LIFT in more than half the seeds, by the exact lower bound of that
    share (kit every_unit_verdict: robust near the bar, where seeds split), and it rose
    during training, mass after - before training by better_by(LEARNS) paired over seeds
    (the same run twice). Precondition: the model learned the task (the slides draw a trained
    model)."""
    t, i = np.asarray(trained, float), np.asarray(initial, float)
    lift = every_unit_verdict(claim, t / uniform, at_least(LIFT), f">= {LIFT:g}",
                              "lift over uniform",
                              f"{task}: mass on the needed keys after training {pm(t)}, uniform "
                              f"{uniform:.3f}")
    rise = decided(claim, stats.better_by(stats.paired(t, i, "rise during training"), LEARNS),
                   f"{task}: before training {pm(i)}")
    v = all_of(claim, {"lift": lift, "learned during training": rise})
    return requires(with_evidence(v, f"accuracy {pm(accuracy)}"),
                    learned(task, _mean(accuracy)),
                    "the model did not learn the task (the slides draw a trained model)")

