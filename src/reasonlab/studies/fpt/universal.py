"""FPT against a fully trained and a frozen random transformer (`fpt-universal`, here), and
against the authors' LSTM, trained and frozen random (`fpt-lstm`, lstm.py) (Lu, Grover,
Abbeel, Mordatch 2021,
slides: "Performance on Multimodal Sequence Benchmarks", "Importance of language pre-training",
"Importance of architecture: random weights"; docs/papers.md §4).

Arms, each through the same training loop and recipe (fpt.common: the authors' Adam lr 1e-3,
clipping 1, dropout 0.1), the transformer ones on each offline backbone (_support/backbone.py:
SmolLM2 and MiniLM, the factor `backbone`):
  FPT                 the pretrained backbone, input / output / positions / norms trained
  Full                the same architecture from random init, everything trained, at each
                      learning rate of FULL_LRS; the one with the best validation metric is
                      kept per backbone and task (fpt.common.choose_full). At cpu scale the
                      sweep ran once (seed 0) and every seed runs the rate it chose
                      (fpt.common.FULL_LR_CPU)
  Random              the same architecture from random init, frozen and trained as FPT
  LSTM                the authors' 3-layer LayerNorm LSTM (model/lstm.py), everything trained
  Random LSTM         the same LSTM, its recurrent maps frozen at random init (their freeze
                      rule trains its input, output and norms)
fpt-universal runs FPT, Full and Random; fpt-lstm the two LSTMs beside fpt-universal's FPT and
Random runs (same configs: trained once in a shared runs folder). Two studies so
that each fits the cpu budget. The LSTMs have no backbone: their runs enter every backbone's
tables. Tasks: bit memory (verdicts read the MASKED query bits), bit XOR, ListOps in the
authors' tokenisation (`fpt2021`; paper scale also `lra` and the authors' read position 511),
the 8x8 digits and Fashion-MNIST. The paper's MNIST and CIFAR-10 files are not available
offline; its MNIST numbers are printed beside ours for scale.
"""

from __future__ import annotations

from reasonlab.studies.fpt._support.backbone import resolve
from reasonlab.studies.fpt._support.slides import arm
from reasonlab.studies.fpt._support.universal import UniversalStudy, transformer_arms
from reasonlab.studies.fpt.analysis import UNIVERSAL_SLIDES
from reasonlab.studies.fpt.common import FULL, full_lrs, recipe, tasks
from reasonlab.studies.fpt.verdicts import universal_verdicts
from reasonlab.studies.kit.base import STUDIES, RunSpec, Scale, grid
from reasonlab.studies.kit.claims import family_claims


@STUDIES.register("fpt-universal")
class FptUniversal(UniversalStudy):
    title = "FPT: frozen pretrained transformers as universal computation engines"
    claims = family_claims(__package__)["fpt-universal"]
    # estimated for 3 seeds (fpt README, "Seeds and time"): the 1-seed measurement (1767 s on
    # 2 quiet cores for the 36 runs fpt-init and fpt-attention had not trained) less the 20
    # Full runs of the two rates not chosen, times 3; the CPU-seconds per step of each arm
    # measured beside it. To be replaced by the 3-seed run's measurement
    cpu_after = ("fpt-init", "fpt-attention")
    slides = UNIVERSAL_SLIDES
    verdicts = staticmethod(universal_verdicts)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        specs = transformer_arms(scale, seeds, self.backbones(scale))
        for name in self.backbones(scale):
            b = resolve(name)
            for task, point in tasks(scale).items():
                # the Full arm's sweep, chosen on validation (choose_full); at cpu scale the
                # rate the sweep chose at seed 0 (common.FULL_LR_CPU). Not a backbone_grid:
                # the rates differ per backbone and task
                for lr in full_lrs(scale, name, task):
                    specs += grid(recipe(scale), {FULL: {**arm(b, scale, "random", "full"),
                                                         "optim": {"lr": lr}}},
                                  sweep={task: point}, seeds=seeds,
                                  factors={"backbone": name, "lr": lr}, sweep_factor="task")
        return specs
