"""FPT: a frozen pretrained transformer vs a fully trained one, a frozen random one and an LSTM
(Lu, Grover, Abbeel, Mordatch 2021, "Performance on Multimodal Sequence Benchmarks" and
"Importance of architecture" tables; docs/papers.md §4).

Arms, each through the same training loop (fpt.common):
  FPT            pretrained SmolLM2 backbone, input / output / positions / norms trained
  Full           the same architecture from random init, everything trained
  Frozen random  the same architecture from random init, trained as FPT
  LSTM           3 layers (the paper's baseline), everything trained
on bit memory (verdicts read the MASKED query bits), bit XOR, ListOps in both tokenisations
(`lra`: the benchmark's, brackets kept; `fpt2021`: the authors', closing brackets dropped,
truncated at 512), the 8x8 digits and Fashion-MNIST in 4x4 patches. The paper's MNIST and
CIFAR-10 files are not available offline; its MNIST numbers are printed beside ours for scale.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt.analysis import plot_accuracy
from reasonlab.studies.fpt.common import (FPT, FULL, LSTM, NO_GPT2, RANDOM, FPTStudy,
                                          accuracy_table, by_task, finals, fpt_arm, lstm_arm,
                                          params_line, random_arm, recipe, task_baselines,
                                          tasks)
from reasonlab.studies.fpt.paper import UNIVERSAL_TABLE
from reasonlab.studies.fpt.verdicts import universal_verdicts
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, grid


@STUDIES.register("fpt-universal")
class FptUniversal(FPTStudy):
    title = "FPT: frozen pretrained transformers as universal computation engines"
    claims = (
        Claim("matches-full", "FPT reaches the accuracy of a fully trained transformer",
              "Lu et al. 2021, Performance on Multimodal Sequence Benchmarks"),
        Claim("random-worse", "A frozen random transformer is worse than FPT",
              "Lu et al. 2021, Importance of language pre-training"),
        Claim("lstm-worse", "The LSTM is much worse on the bit tasks",
              "Lu et al. 2021, Performance on Multimodal Sequence Benchmarks",
              "Bit memory 60.9% vs FPT 100%, bit XOR 50.1% vs 100%"),
    )
    cpu_minutes = 9.6  # measured: 578 s on the 2-core machine, otherwise idle (README)
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        arms = {FPT: fpt_arm(scale), FULL: random_arm(scale, "full"),
                RANDOM: random_arm(scale, "fpt"), LSTM: lstm_arm(scale)}
        return grid(recipe(scale), arms, sweep=tasks(scale), seeds=seeds, sweep_factor="task")

    def analyse(self, results: Results, out: Path) -> Report:
        runs = by_task(results)
        values = finals(runs)
        arms = [FPT, FULL, RANDOM, LSTM]
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        rep.add("Accuracy (%)", "Test accuracy at the end of training, mean over seeds; bit "
                "memory: MASKED query bits only (all bits in the next table). In brackets: "
                "the paper's number for that cell (GPT-2 backbone; MNIST where we have digits "
                "and Fashion-MNIST, whose files the paper used are not available offline).\n\n"
                + accuracy_table(values, arms, UNIVERSAL_TABLE, task_baselines(results)))
        if "bit memory" in runs:
            all_bits = {"bit memory (all bits)": {a: [r["final"]["acc"] for r in rs]
                                                  for a, rs in runs["bit memory"].items()}}
            rep.add("Bit memory on all bits (%)", "Copying the visible query bits and "
                    "guessing the rest scores 75% here.\n\n" + accuracy_table(all_bits, arms))
        rep.add("Parameters", params_line(runs))
        plot_accuracy(values, arms, out / "accuracy.png")
        rep.figure("accuracy.png", "Final test accuracy per task and model (bit memory: masked "
                   "bits); black ticks: chance")
        rep.verdicts = universal_verdicts(self.claim, values)
        return rep
