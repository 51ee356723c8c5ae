"""FPT converges faster than a frozen random transformer (Lu et al. 2021, slides: "Training
duration"; docs/papers.md §4).

Steps to a fixed level, set per task and scale before training (verdicts.LEVELS: 90% of the
pretrained arm's plateau in a pilot), read from each run's test curve, on each offline backbone
(_support/backbone.py): FPT's runs are fpt-universal's (same configs, trained once in a
shared runs folder); the Random (frozen random) arm runs up to RANDOM_LONGER times as many
steps, so that a speedup up to that factor can be measured rather than assumed, and stops at
the first evaluation that reaches the level (TrainConfig.stop_at: nothing after it is read). A
run that never reaches the level is reported as such and produces no number: a task's speedup
is read only where every run of both arms reached the level (verdicts.convergence_verdict).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt._support.backbone import (backbone_grid, backbone_line, results_note,
                                                     slug)
from reasonlab.studies.fpt._support.slide_verdicts import both_backbones
from reasonlab.studies.fpt._support.slides import SlideStudy, arm, title
from reasonlab.studies.fpt.analysis import STEPS_HEADER, plot_curves, steps_rows
from reasonlab.studies.fpt.common import (FPT, RANDOM, by_backbone, by_task, recipe,
                                          task_baselines, tasks)
from reasonlab.studies.fpt.paper import STEPS_TABLE
from reasonlab.studies.fpt.verdicts import LEVELS, convergence_verdict, first_step, speedup
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale
from reasonlab.studies.kit.claims import family_claims

RANDOM_LONGER = 4
"""The frozen random arm's run length in units of FPT's (the slides' speedups: 1-40x)."""


@STUDIES.register("fpt-convergence")
class FptConvergence(SlideStudy):
    title = "FPT: convergence, pretrained vs random frozen backbone"
    claims = family_claims(__package__)["fpt-convergence"]
    # 3 seeds: its 30 frozen random runs, stopping at their level (stop_at), took 103.6
    # run-minutes two at a time (about 52 min, over the 45-minute budget: fpt README, "Seeds");
    # MiniLM's bit-memory runs, which never reach the level, are half of it
    cpu_after = ("fpt-universal",)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = {t: p for t, p in tasks(scale).items() if t in LEVELS[scale]}
        # the random arm stops at the level: only its steps to it are read, and the curve up to
        # the stop is the full run's (TrainConfig.stop_at)
        longer = {t: {**p, "steps": RANDOM_LONGER * p["steps"], "stop_at": LEVELS[scale][t]}
                  for t, p in points.items()}
        return (backbone_grid(recipe(scale), lambda b: {FPT: arm(b, scale)}, points, seeds,
                              backbones=self.backbones(scale))
                + backbone_grid(recipe(scale), lambda b: {RANDOM: arm(b, scale, "random")},
                                longer, seeds, backbones=self.backbones(scale)))

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=results_note(results))
        levels = LEVELS[results.scale]
        base = task_baselines(results)
        verdicts = {}
        for name, runs_b in by_backbone(results).items():
            runs = by_task(runs_b)
            steps = {t: {a: [first_step(r["curve"], levels[t]) for r in rs]
                         for a, rs in arms.items()} for t, arms in runs.items()}
            # run lengths as configured (a random run that stopped at its level ends early)
            lengths: dict[str, dict[str, int]] = {}
            for spec, _ in runs_b:
                lengths.setdefault(spec.factors["task"], {})[spec.arm] = spec.config.steps
            rep.table(f"Training duration: {title(name)}", STEPS_HEADER,
                      steps_rows(steps, levels, {t: speedup(s) for t, s in steps.items()},
                                 STEPS_TABLE, base),
                      before=(f"{backbone_line(name)}\n\nSteps until the test metric (bit "
                              "memory: masked bits) first reaches the task's level, fixed "
                              "before training (90% of FPT's plateau in a pilot); one entry per "
                              "seed, 'never' when the run did not reach it (frozen random runs "
                              f"{RANDOM_LONGER}x FPT's steps). Speedup: geometric-mean random "
                              "steps / geometric-mean FPT steps; none unless every run of both "
                              "arms reached the level. Slides: steps to converge (GPT-2). Last "
                              "columns: the baselines' final metric on the same data."))
            plot_curves(runs, levels, out / f"convergence_{slug(name)}.png")
            rep.figure(f"convergence_{slug(name)}.png", f"Test accuracy during training, FPT vs "
                       f"frozen random, {title(name)}; dashed: the level")
            verdicts[title(name)] = convergence_verdict(self.claim("faster"), steps, lengths)
        rep.verdicts = [both_backbones(self.claim("faster"), verdicts)]
        return rep
