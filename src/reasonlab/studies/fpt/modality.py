"""FPT: does the pretraining modality matter? (Lu et al. 2021, slides "Importance of language
pre-training": FPT / Random / Bit / ViT.)

On each offline backbone (_support/backbone.py), three frozen backbones of one
architecture, trained as FPT:
  FPT     the language-pretrained checkpoint
  Random  the default random init
  Bit     the architecture pretrained by us on bit memory (every parameter trained: a run of
          the store, `init_from`, one per seed, trained before the runs naming it), then
          frozen; its input layer and read-out are dropped, the downstream task gets fresh ones
The slide's ViT row is printed, not run here: fpt-vit runs it at paper scale, on ViT-B/16
from a Hugging Face folder (no ViT weights install offline). FPT and Random are fpt-init's
Pretrained and Default runs (same configs, shared runs folder).

The replication unit is the whole pipeline's seed: seed s pretrains the Bit backbone and trains
every arm downstream, so each seed's Bit arm stands on its own pretraining run. Both claims
compare the Bit backbone, so both require that it learned bit memory
(_support/slide_verdicts.py BIT_LEARNED on each pretraining run's masked bits).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.fpt._support.backbone import backbone_grid, resolve, results_note
from reasonlab.studies.fpt._support.slide_verdicts import better_on_both
from reasonlab.studies.fpt._support.slides import (SlideStudy, arm, backbone_tables,
                                                   bit_pretraining, pretraining_accuracy,
                                                   pretraining_section, title)
from reasonlab.studies.fpt.common import (FPT, INIT_TASKS, RANDOM, by_backbone, by_task, finals,
                                          recipe, some_tasks)
from reasonlab.studies.fpt.paper import MODALITY_TABLE
from reasonlab.studies.kit.base import (STUDIES, Report, Results, RunSpec, Scale, Verdict,
                                        merge)
from reasonlab.studies.kit.claims import family_claims
from reasonlab.train.config import TrainConfig

BIT, PRETRAINING = "Bit", "Bit pretraining (bit memory)"


@STUDIES.register("fpt-modality")
class FptModality(SlideStudy):
    title = "FPT: language vs bit-memory pretraining vs random backbone"
    claims = family_claims(__package__)["fpt-modality"]
    # estimated for 3 seeds (fpt README, "Seeds and time"): 3 x the 1-seed measurement (345 s
    # after fpt-init, 2 quiet cores), the pretraining now one run per seed. To be replaced by
    # the 3-seed run's measurement
    cpu_after = ("fpt-init",)
    unit = ("the seed: it pretrains the Bit backbone on bit memory and trains every arm "
            "downstream (data, new layers' init, example order, dropout)")

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        """Each backbone's bit-memory pretraining run per seed (factor phase=pretrain), then
        the downstream grid, whose Bit arm of seed s starts from the pretraining run of seed
        s."""
        points = some_tasks(scale, INIT_TASKS)
        pre = [RunSpec(PRETRAINING, s, TrainConfig.build(bit_pretraining(resolve(b),
                                                                         scale, s)),
                       {"backbone": b, "phase": "pretrain", "arm": PRETRAINING})
               for b in self.backbones(scale) for s in range(seeds)]
        shared = backbone_grid(recipe(scale), lambda b: {FPT: arm(b, scale),
                                                         RANDOM: arm(b, scale, "random")},
                               points, seeds, backbones=self.backbones(scale))
        # grid's merge order (recipe, arm, point, seed), the arm naming its seed's pretraining
        bit = [RunSpec(BIT, s, TrainConfig.build(merge(recipe(scale), {
            "model": {"arch": "fpt"}, "init_from": bit_pretraining(resolve(b), scale, s),
            "trainable": "fpt"}, point, {"seed": s})), {"backbone": b, "arm": BIT, "task": t})
               for b in self.backbones(scale) for t, point in points.items() for s in range(seeds)]
        return pre + shared + bit

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=results_note(results) + (
            " The slide's ViT row is fpt-vit's (ViT-B/16 from a Hugging Face folder, paper "
            "scale; no ViT weights install offline)."))
        pretraining_section(rep, pretraining_accuracy(results))
        backbone_tables(rep, results, [FPT, RANDOM, BIT, "ViT"], MODALITY_TABLE,
                        "Accuracy", "Test accuracy at the end of training, mean over seeds; "
                        "bit memory on MASKED bits. In brackets the slide's number (GPT-2; "
                        "MNIST for our digits and Fashion-MNIST). ViT: fpt-vit's.")
        rep.verdicts = self.judge_runs(results)
        return rep

    def judge_runs(self, results: Results) -> list[Verdict]:
        pretraining = pretraining_accuracy(results)
        # backbone title -> task -> arm -> the metric per seed (what backbone_tables prints)
        m = {title(b): finals(by_task(runs)) for b, runs in by_backbone(results).items()}
        return [
            better_on_both(self.claim("language-over-bit"), m, FPT, BIT, pretraining),
            better_on_both(self.claim("bit-over-random"), m, BIT, RANDOM, pretraining)]
