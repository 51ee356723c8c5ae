"""FPT converges faster than a frozen random transformer (Lu et al. 2021, "Training duration"
table; docs/papers.md §4).

The FPT and frozen random arms of fpt-universal (the same configs, so the same runs in a shared
runs folder: nothing new trains after it), read through their test curves: the step at which
each first reaches a fixed accuracy, TARGET of the way from chance to the better arm's final
accuracy, and the speedup = random's step / FPT's step (a run that never reaches it counts as
the run's length x 2, a lower bound on the speedup when it is the random one).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt.analysis import STEPS_HEADER, STEPS_NOTE, plot_curves, steps_rows
from reasonlab.studies.fpt.common import (FPT, NO_GPT2, RANDOM, FPTStudy, by_task, fpt_arm,
                                          random_arm, recipe, tasks)
from reasonlab.studies.fpt.verdicts import convergence_verdict, first_step, target
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, grid


@STUDIES.register("fpt-convergence")
class FptConvergence(FPTStudy):
    title = "FPT: convergence, pretrained vs random frozen backbone"
    claims = (Claim("faster", "FPT converges faster than random initialisation",
                    "Lu et al. 2021, Training duration",
                    "speedup 4x bit memory, 40x bit XOR, 3x ListOps, 4x MNIST"),)
    cpu_minutes = 0.1  # measured: 5 s after fpt-universal (trains nothing new; README)
    cpu_after = "fpt-universal"
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        arms = {FPT: fpt_arm(scale), RANDOM: random_arm(scale, "fpt")}
        return grid(recipe(scale), arms, sweep=tasks(scale), seeds=seeds, sweep_factor="task")

    def analyse(self, results: Results, out: Path) -> Report:
        runs = by_task(results)
        steps = {t: {a: [first_step(r["curve"], target(t, arms)) for r in rs]
                     for a, rs in arms.items()} for t, arms in runs.items()}
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        rep.table("Steps to the target accuracy", STEPS_HEADER, steps_rows(steps, runs),
                  before=STEPS_NOTE)
        plot_curves(runs, out / "convergence.png")
        rep.figure("convergence.png", "Test accuracy during training, FPT vs frozen random")
        rep.verdicts = [convergence_verdict(self.claim("faster"), steps, runs)]
        return rep
