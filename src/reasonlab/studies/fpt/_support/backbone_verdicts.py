"""Verdict rules of the studies that compare FPT's backbone with other pretrained models (Lu et
al. 2021, slides "Model - differences with GPT", "Importance of language pre-training" ViT
row), each deciding from an interval over seeds (kit/stats.py; the unit: fpt/verdicts.py).
Inputs: task -> arm -> the verdict metric per seed, one arm per backbone, FPT trained alike
on each. A backbone that does not map onto our Transformer on a task (Longformer past its
window) has no arm there: a rule compares the tasks both of its arms ran. Thresholds are
constants fixed before any run. Unit tests: tests/unit/studies/fpt/test_backbone_verdicts.py;
each rule under its null: fpt/calibration.py.
"""

from __future__ import annotations

import numpy as np

from reasonlab.studies.fpt.common import CHANCE
from reasonlab.studies.fpt.verdicts import (LEARNED, LEFT_OUT, Values, learned, out_of_reach,
                                            per_task, task_mean_gain, task_sd, testable, unmet)
from reasonlab.studies.kit import stats
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import decided, requires

LIKE = 0.03
"""'Transfers like': the mean over tasks of the two backbones' difference confidently within
+-LIKE (the slides' BERT - GPT-2: ListOps -0.1, CIFAR-10 +0.6 points)."""
ABOUT = 0.05
"""'About as well': the same within +-ABOUT (the slides' ViT - GPT-2: ListOps -1.0, MNIST -0.2,
CIFAR-10 +4.3 points, a mean of +1.0)."""
LESS = 0.01
"""'Transfers less': the mean shortfall at least LESS, its lower bound above 0 (the slides'
GPT-2 - Longformer: ListOps 21.4, CIFAR-10 1.4 points; GPT-2 - T5: 23.0 and 3.5)."""


def _shared(values: Values, a: str, b: str) -> list[str]:
    """The tasks on which both arms ran, less those left out (fpt.verdicts.unlearned)."""
    both = {t: arms for t, arms in values.items() if a in arms and b in arms}
    return testable(both, a, b)


def _left(values: Values, tasks: list[str], a: str, b: str) -> str:
    absent = [t for t, arms in values.items() if a not in arms or b not in arms]
    out = [t for t in values if t not in tasks and t not in absent]
    return (f"{LEFT_OUT}: {', '.join(out) or 'none'}; not run on both: "
            f"{', '.join(absent) or 'none'}")


def _unlearned(values: Values, tasks: list[str], arms: tuple[str, ...]) -> list[str]:
    """'task: arm mean' for each arm whose mean over seeds is below chance + LEARNED on a
    counted task (fpt.verdicts.learned): there it tests nothing."""
    return [f"{t}: {a} {np.mean(values[t][a]):.3f} (chance {CHANCE[t]})" for t in tasks
            for a in arms if not learned(t, float(np.mean(values[t][a])))]


def like_verdict(claim: Claim, values: Values, a: str, b: str, margin: float) -> Verdict:
    """`a` transfers like `b`: the mean over the shared tasks of mean(a) - mean(b), two
    one-sided tests within +-margin (stats.equivalent): reproduced when its interval lies
    inside, not reproduced when wholly outside. Preconditions: some task is testable, and both
    arms learned every counted task (two arms at chance are trivially alike)."""
    tasks = _shared(values, a, b)
    left = _left(values, tasks, a, b)
    if not tasks:
        return unmet(claim, left, "no task on which either arm learned")
    # at the measured noise too: the null sits at the margin (kit stats.at_noise says why)
    est = task_mean_gain(values, tasks, a, b, f"{a} - {b}, mean over {len(tasks)} tasks",
                         task_sd)
    v = decided(claim, stats.equivalent(est, margin),
                f"{a} - {b} per task: {per_task(values, tasks, a, b)}; {left}")
    low = _unlearned(values, tasks, (a, b))
    return requires(v, not low, f"an arm is not {LEARNED} above chance: {'; '.join(low)}",
                    reachable=not out_of_reach(values, tasks, (a, b)))


def less_verdict(claim: Claim, values: Values, worse: str, better: str) -> Verdict:
    """`worse` transfers less than `better`: the mean over the shared tasks of mean(better) -
    mean(worse), decided by stats.better_by(LESS). Preconditions: some task is testable, and
    `better` learned every counted task (a shortfall below a backbone at chance tests
    nothing)."""
    tasks = _shared(values, better, worse)
    left = _left(values, tasks, better, worse)
    if not tasks:
        return unmet(claim, left, "no task on which either arm learned")
    est = task_mean_gain(values, tasks, better, worse,
                         f"{better} - {worse}, mean over {len(tasks)} tasks")
    v = decided(claim, stats.better_by(est, LESS),
                f"{better} - {worse} per task: {per_task(values, tasks, better, worse)}; "
                f"{left}")
    low = _unlearned(values, tasks, (better,))
    return requires(v, not low, f"{better} is not {LEARNED} above chance: {'; '.join(low)}",
                    reachable=not out_of_reach(values, tasks, (better,)))
