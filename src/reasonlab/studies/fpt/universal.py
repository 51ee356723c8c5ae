"""FPT: a frozen pretrained transformer vs a fully trained one, a frozen random one and the
authors' LSTM, trained and frozen random (Lu, Grover, Abbeel, Mordatch 2021, slides:
"Performance on Multimodal Sequence Benchmarks", "Importance of language pre-training",
"Importance of architecture: random weights"; docs/papers.md §4).

Arms, each through the same training loop and recipe (fpt.common: the authors' Adam lr 1e-3,
clipping 1, dropout 0.1), the transformer ones on each offline backbone (fpt.backbones: SmolLM2
and MiniLM, the factor `backbone`):
  FPT                 the pretrained backbone, input / output / positions / norms trained
  Full                the same architecture from random init, everything trained, at each
                      learning rate of FULL_LRS; the one with the best validation metric is
                      kept per backbone and task (fpt.common.choose_full)
  Frozen random       the same architecture from random init, trained as FPT
  LSTM                the authors' 3-layer LayerNorm LSTM (model/lstm.py), everything trained
  Frozen random LSTM  the same LSTM, its recurrent maps frozen at random init (their freeze
                      rule trains its input, output and norms)
The LSTMs have no backbone: their runs enter every backbone's tables. Tasks: bit memory
(verdicts read the MASKED query bits), bit XOR, ListOps in the authors' tokenisation
(`fpt2021`; paper scale also `lra` and the authors' read position 511), the 8x8 digits and
Fashion-MNIST. The paper's MNIST and CIFAR-10 files are not available offline; its MNIST
numbers are printed beside ours for scale.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt.analysis import plot_accuracy
from reasonlab.studies.fpt.backbones import NO_GPT2, backbone_line
from reasonlab.model.fpt import FPT_BACKBONES
from reasonlab.studies.fpt.backbones import BACKBONES
from reasonlab.studies.fpt.common import (FPT, FULL, FULL_LRS, LSTM, RANDOM, RANDOM_LSTM,
                                          accuracy_table, by_backbone, by_task, choose_full,
                                          chosen_line, finals, lstm_arm, params_line, recipe,
                                          task_baselines, tasks)
from reasonlab.studies.fpt.paper import ARCHITECTURE_TABLE, PERFORMANCE_TABLE, PRETRAINING_TABLE
from reasonlab.studies.fpt.slide_verdicts import both_backbones
from reasonlab.studies.fpt.slides import SlideStudy, arm, title
from reasonlab.studies.fpt.verdicts import universal_verdicts
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, grid

SLIDES = "Lu et al. 2021, slides"
ARMS = [FPT, FULL, RANDOM, LSTM, RANDOM_LSTM]


@STUDIES.register("fpt-universal")
class FptUniversal(SlideStudy):
    title = "FPT: frozen pretrained transformers as universal computation engines"
    claims = (
        Claim("matches-full", "FPT reaches the accuracy of a fully trained transformer",
              f"{SLIDES}, Performance on Multimodal Sequence Benchmarks (FPT vs Full)"),
        Claim("random-worse", "A frozen random transformer is worse than FPT",
              f"{SLIDES}, Importance of language pre-training (FPT vs Random)"),
        Claim("lstm-worse", "The LSTM is much worse on the bit tasks",
              f"{SLIDES}, Performance on Multimodal Sequence Benchmarks (LSTM row)",
              "Bit memory 60.9% vs FPT 100%, bit XOR 50.1% vs 100%"),
        Claim("random-lstm", "A frozen random LSTM is far worse than a frozen random "
              "transformer", f"{SLIDES}, Importance of architecture: random weights",
              "Trans. / LSTM: Bit memory 75.8 / 50.9%, XOR 100 / 50.0%, ListOps 34.3 / "
              "16.8%, MNIST 91.7 / 70.9%"),
    )
    cpu_minutes = None  # not measured with today's recipe (README)
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        points = tasks(scale)
        lstms = {LSTM: lstm_arm(scale), RANDOM_LSTM: lstm_arm(scale, "fpt")}
        specs = grid(recipe(scale), lstms, sweep=points, seeds=seeds, sweep_factor="task")
        for name in BACKBONES:
            b = FPT_BACKBONES[name]
            specs += grid(recipe(scale), {FPT: arm(b, scale), RANDOM: arm(b, scale, "random")},
                          sweep=points, seeds=seeds, factors={"backbone": name},
                          sweep_factor="task")
            for lr in FULL_LRS:  # the Full arm's sweep, chosen on validation (choose_full)
                specs += grid(recipe(scale), {FULL: {**arm(b, scale, "random", "full"),
                                                     "optim": {"lr": lr}}},
                              sweep=points, seeds=seeds, factors={"backbone": name, "lr": lr},
                              sweep_factor="task")
        return specs

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=NO_GPT2)
        base = task_baselines(results)
        note = ("Test accuracy at the end of training (%), mean over seeds; bit memory: MASKED "
                "query bits only (all bits in the last table). In brackets: the slide's number "
                "for that cell (GPT-2 backbone; MNIST where we have digits and Fashion-MNIST, "
                "whose files the paper used are not available offline; the slides' bit memory "
                "is on all bits). Last rows: the baselines on the same data.")
        verdicts = {}
        for name, runs_b in by_backbone(results).items():
            kept, chosen = choose_full(runs_b)
            runs = by_task(kept)
            values = finals(runs)
            head = f"{backbone_line(name)}\n\n{note}\n\n"
            rep.add(f"Performance on Multimodal Sequence Benchmarks: {title(name)}", head
                    + accuracy_table(values, [FPT, FULL, LSTM], PERFORMANCE_TABLE, base)
                    + "\n\n" + chosen_line(chosen, runs_b))
            rep.add(f"Importance of language pre-training: {title(name)}", head
                    + accuracy_table(values, [FPT, RANDOM], PRETRAINING_TABLE, base))
            rep.add(f"Importance of architecture: random weights: {title(name)}", head
                    + accuracy_table(values, [RANDOM, RANDOM_LSTM], ARCHITECTURE_TABLE, base))
            if "bit memory" in runs:
                all_bits = {"bit memory (all bits)": {a: [r["final"]["acc"] for r in rs]
                                                      for a, rs in runs["bit memory"].items()}}
                rep.add(f"Bit memory on all bits (%): {title(name)}", "Copying the visible "
                        "query bits and guessing the rest scores 75% here.\n\n"
                        + accuracy_table(all_bits, ARMS))
            rep.add(f"Parameters: {title(name)}", params_line(runs))
            plot_accuracy(values, ARMS, out / f"accuracy_{name}.png", title(name))
            rep.figure(f"accuracy_{name}.png", f"Final test accuracy per task and model, "
                       f"{title(name)} backbone (bit memory: masked bits); black ticks: chance")
            verdicts[title(name)] = universal_verdicts(self.claim, values)
        rep.verdicts = [both_backbones(c, {b: vs[i] for b, vs in verdicts.items()})
                        for i, c in enumerate(self.claims)]
        return rep
