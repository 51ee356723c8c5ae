"""FPT: what does the first attention layer do on the bit tasks? (Lu et al. 2021, slides "GPT-2
- first layer attention for bit XOR / bit memory", figures; the authors' demo notebook draws
the first layer's attention, mean over heads, and finds "two consistent diagonal lines for
output tokens 5-9 ... denoting each position of either string".)

FPT (pretrained backbone, frozen; input, output, positions, norms trained) on bit XOR and bit
memory, on each backbone (studies/fpt/backbones.py). For each trained run: the first layer's
attention, mean over heads, on 64 test inputs, and its mass on the keys the task says a query
needs (`Task.attention_targets`: bit j of either string for XOR's output token j; patch j of
every stored pattern for the query's patch j in bit memory), beside the same model before
training and uniform attention. `reasonlab attention RUN` draws every head of any such run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.runs import load_run_model
from reasonlab.studies.fpt.backbones import NO_GPT2, backbone_grid
from reasonlab.studies.fpt.common import metric, recipe, tasks
from reasonlab.studies.fpt.first_layer import first_layer, mass, plot_maps, uniform
from reasonlab.studies.fpt.slide_verdicts import attention_verdict, both_backbones
from reasonlab.studies.fpt.slides import SlideStudy, arm, by_backbone, title
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, merge
from reasonlab.studies.kit.verdicts import all_of
from reasonlab.tasks.base import build_task
from reasonlab.train.init_stages import build_model

TASKS = ("bit XOR", "bit memory")
LONGER: dict[Scale, dict[str, dict[str, Any]]] = {
    "smoke": {}, "paper": {},
    # FPT's masked bits reach 0.90 at step 1250 in 4000-step runs of the cpu recipe (fpt
    # README): 1500 steps, fresh examples throughout (batch 4)
    "cpu": {"bit memory": {"steps": 1_500, "n_train": 6_000}},
}
N = 64
"""Test inputs the masses average over."""


@STUDIES.register("fpt-attention")
class FptAttention(SlideStudy):
    title = "FPT: first-layer attention on the bit tasks"
    claims = (Claim("attention-maps", "FPT's first attention layer attends to the bits each "
                    "output needs (bit XOR: bit j of either string; bit memory: the same patch "
                    "of every stored pattern)", "Lu et al. 2021, slides, GPT-2 - first layer "
                    "attention for bit XOR / bit memory (figures); the authors' demo notebook"),)
    # measured: 1378 s, 4 runs (bit memory 1500 steps), on the 2-core machine shared with five
    # other sessions (load average ~20; README): not a quiet-machine time
    cpu_minutes = 23.0
    default_seeds = {"cpu": 1, "paper": 1}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = {t: merge(tasks(scale)[t], LONGER[scale].get(t, {})) for t in TASKS}
        return backbone_grid(recipe(scale), lambda b: {"FPT": arm(b, scale)}, points, seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        claim, rows, maps, verdicts = self.claim("attention-maps"), [], {}, {}
        for b, runs in by_backbone(results).items():
            per_task = {}
            for t, rs in runs.by("task").items():
                spec, result = rs[0]
                task = build_task(spec.config.task)
                batch = task.sample(np.random.default_rng(0), N)
                targets = task.attention_targets(batch)  # type: ignore[attr-defined]
                trained = first_layer(load_run_model(Path(result["dir"]))[1], batch)
                before = first_layer(build_model(spec.config).eval(), batch)
                flat = uniform(batch.tokens.shape[1], spec.config.model.causal, N)
                m = [mass(p, targets, batch) for p in (trained, before, flat)]
                acc = metric(result["final"])
                rows.append([title(b), t, *(f"{x:.3f}" for x in m), f"{acc:.3f}"])
                per_task[t] = attention_verdict(claim, t, *m, acc)
                maps[title(b), t] = trained[0]
            verdicts[title(b)] = all_of(claim, per_task)
        rep.table("First-layer attention on the needed keys (mean over heads and test inputs)",
                  ["backbone", "task", "trained", "before training", "uniform", "accuracy"],
                  rows, before=f"{N} test inputs; accuracy: bit memory on masked bits.")
        plot_maps(maps, out / "first_layer.png")
        rep.figure("first_layer.png", "First-layer attention, mean over heads, of one test "
                   "input after training (row = query, column = key), as the slides' figures")
        rep.verdicts = [both_backbones(claim, verdicts)]
        return rep
