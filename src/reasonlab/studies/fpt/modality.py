"""FPT: does the pretraining modality matter? (Lu et al. 2021, slides "Importance of language
pre-training": FPT / Random / Bit / ViT.)

On each offline backbone (studies/fpt/backbones.py), three frozen backbones of one
architecture, trained as FPT:
  FPT     the language-pretrained checkpoint
  Random  the default random init
  Bit     the architecture pretrained by us on bit memory (every parameter trained: a run of
          the store, `init_from`, trained once before the runs naming it), then frozen; its
          input layer and read-out are dropped, the downstream task gets fresh ones
No ViT weights reach our machines offline: the slide's ViT row is printed, not run. FPT and
Random are fpt-init's Pretrained and Default runs (same configs, shared runs folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.model.fpt import FPT_BACKBONES, Backbone
from reasonlab.studies.fpt.backbones import BACKBONES, NO_GPT2, backbone_grid
from reasonlab.studies.fpt.common import metric, recipe, tasks
from reasonlab.studies.fpt.initialization import TASKS
from reasonlab.studies.fpt.paper import MODALITY_TABLE
from reasonlab.studies.fpt.slide_verdicts import better_verdict, both_backbones
from reasonlab.studies.fpt.slides import SlideStudy, arm, backbone_tables, by_backbone, title
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, merge
from reasonlab.train.config import TrainConfig

FPT, RANDOM, BIT, PRETRAINING = "FPT", "Random", "Bit", "Bit pretraining (bit memory)"
BIT_TASK: dict[Scale, dict[str, Any]] = {
    "smoke": {"task": {"name": "bit_memory", "n_bits": 20, "patch": 10}, "steps": 4},
    "cpu": {"task": {"name": "bit_memory", "n_bits": 60, "patch": 10}, "steps": 1500},
    "paper": {"task": {"name": "bit_memory", "n_bits": 5000, "patch": 50}, "steps": 20_000},
}
"""The bit-memory pretraining per scale: 5 patterns and a query as the paper, patterns long
enough that the learned position table covers every downstream task (cpu: 36 tokens >=
ListOps' 32; paper: 600 >= ListOps' 512)."""


def bit_pretraining(backbone: Backbone, scale: Scale) -> dict[str, Any]:
    """The Bit backbone's pretraining run: the architecture at random init, every parameter
    trained on bit memory, with the downstream recipe (Adam lr 1e-3, batch 4 as the authors')."""
    task = tasks(scale)["bit memory"]
    return merge(recipe(scale), task, arm(backbone, scale, "random", "full"), BIT_TASK[scale],
                 {"n_train": BIT_TASK[scale]["steps"] * task["batch_size"]})


@STUDIES.register("fpt-modality")
class FptModality(SlideStudy):
    title = "FPT: language vs bit-memory pretraining vs random backbone"
    claims = (
        Claim("language-over-bit", "Language pretraining transfers better than pretraining on "
              "bit memory", "Lu et al. 2021, slides, Importance of language pre-training",
              "FPT / Bit: ListOps 38.4 / 35.4%, MNIST 98.0 / 97.8%, C10 68.2 / 62.6%"),
        Claim("bit-over-random", "Pretraining on bit memory transfers better than a random "
              "backbone", "Lu et al. 2021, slides, Importance of language pre-training",
              "Bit / Random: bit memory 100 / 75.8%, ListOps 35.4 / 34.3%, MNIST 97.8 / 91.7%, "
              "C10 62.6 / 61.7%, Homology 7.8 / 9.3%"),
    )
    cpu_minutes = None
    cpu_after = "fpt-init"
    default_seeds = {"cpu": 1, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        """Each backbone's bit-memory pretraining run (one, seed 0; factor phase=pretrain),
        then the downstream grid."""
        points = {t: v for t, v in tasks(scale).items() if t in TASKS[scale]}
        pre = [RunSpec(PRETRAINING, 0, TrainConfig.build(bit_pretraining(FPT_BACKBONES[b], scale)),
                       {"backbone": b, "phase": "pretrain"}) for b in BACKBONES]
        return pre + backbone_grid(recipe(scale), lambda b: {
            FPT: arm(b, scale), RANDOM: arm(b, scale, "random"),
            BIT: {"model": {"arch": "fpt"}, "init_from": bit_pretraining(b, scale),
                  "trainable": "fpt"}}, points, seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=NO_GPT2 + " No ViT weights are "
                                             "available offline: the slide's ViT row is not run.")
        rep.add("The Bit backbones' pretraining", "Masked-bit accuracy of each backbone's "
                "bit-memory pretraining run at its end (chance 0.5):\n\n" + "\n".join(
                    f"- {title(b)}: {self._pretraining(rs):.3f}"
                    for b, rs in by_backbone(results).items()))
        m = backbone_tables(rep, results, [FPT, RANDOM, BIT, "ViT"], MODALITY_TABLE,
                            "Accuracy", "Test accuracy at the end of training, mean over seeds; "
                            "bit memory on MASKED bits. In brackets the slide's number (GPT-2; "
                            "MNIST for our digits and Fashion-MNIST). ViT: not offline.")
        rep.verdicts = [both_backbones(self.claim(k), {
            title(b): better_verdict(self.claim(k), v, hi, lo) for b, v in m.items()})
            for k, hi, lo in (("language-over-bit", FPT, BIT), ("bit-over-random", BIT, RANDOM))]
        return rep

    @staticmethod
    def _pretraining(runs: Results) -> float:
        """The verdict metric (masked bits) of a backbone's bit-memory pretraining run."""
        return metric(runs.where(phase="pretrain")[0][1]["final"])
