"""LEGO, earlier version: convolutional key / query / value maps on program execution (abstract;
docs/papers.md §1.1).

"We begin to explore the task of learning to execute C programs, where a convolutional
modification to transformers, namely adding convolutional structures in the key/query/value
maps, shows an encouraging edge." The paper gives neither the programs nor the model; ours:
the program task of tasks/programs.py (predict the printed digit), a pre-LN encoder read out at
[CLS], and two arms at equal parameter count -- softmax attention, and `conv_qkv` (depthwise
convolutions of width 3 before W_Q, W_K, W_V; model/conv_attention.py) -- the softmax arm's
feed-forward block widened by as many parameters as the convolutions add.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reasonlab.sizes import n_params
from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.lego._support.programs import (RECIPES, arms, by_value, edge_verdict,
                                                      plot_by_program)
from reasonlab.train.loop import make_data


@STUDIES.register("lego-conv-qkv-programs")
class LegoConvQKVPrograms(Study):
    title = "LEGO (earlier version): convolutional key/query/value maps on program execution"

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(RECIPES[scale], arms(scale), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        by = results.arms()
        finals = {a: [r["final"]["acc"] for r in rs] for a, rs in by.items()}
        test = make_data(results.first.config)[1]
        majority = float(np.bincount(test.labels[:, 0].numpy()).max() / len(test))
        rep = Report(self.title, out).recipe(results)
        params = {s.arm: n_params(s.config) for s, _ in results}
        rep.table("Final test accuracy", ["arm", "accuracy (mean ± std)", "parameters"],
                  [[a, f"{np.mean(f):.3f} ± {np.std(f):.3f}", f"{params[a]:,}"]
                   for a, f in finals.items()],
                  after=f"Majority class of the test set: {majority:.3f}.")
        for key in ("length", "nesting"):
            rep.sweep({a: by_value(rs, key) for a, rs in by.items()}, key,
                      f"Final test accuracy by program {key}")
        plot_by_program(by, majority, out / "accuracy_by_program.png")
        rep.figure("accuracy_by_program.png", "Final test accuracy by program length "
                   "(assignments) and nesting depth, mean over seeds")
        rep.verdicts = [edge_verdict(self.claim("conv-qkv-edge"), finals, majority)]
        return rep
