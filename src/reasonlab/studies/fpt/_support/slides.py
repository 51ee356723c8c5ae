"""Arms and tables shared by the FPT studies that each reproduce one more slide table on both
offline backbones (studies/fpt/{init,modality,fitting,scaling,attention}.py; Lu et al. 2021,
slides).

Every run carries the factors backbone, arm and task (`backbones.backbone_grid`); a report
prints one table per backbone, in the slide's layout (models as rows, tasks as columns), the
slide's number in brackets beside ours.
"""

from __future__ import annotations

from typing import Any

from reasonlab.model.fpt import Backbone, Init
from reasonlab.model.pretrained import checkpoint
from reasonlab.studies.fpt._support.backbone import BACKBONES, backbone_line, depth, resolve
from reasonlab.studies.fpt._support.slide_verdicts import BIT_LEARNED
from reasonlab.studies.fpt.common import (FPTStudy, accuracy_table, by_backbone, by_task, finals,
                                          metric, recipe, task_baselines, tasks)
from reasonlab.studies.kit.base import Report, Results, Scale, merge


class SlideStudy(FPTStudy):
    """Base of the studies run on every backbone: each backbone's weights package must be
    installed."""

    @classmethod
    def missing(cls) -> str | None:
        for name in BACKBONES:  # the offline ones (paper scale: kit/assets.py checks)
            ckpt = checkpoint(resolve(name).checkpoint)
            if not ckpt.available():
                return f"needs the {name} weights package: {ckpt.install_hint}"
        return None


def arm(backbone: Backbone, scale: Scale, init: Init = "pretrained", trainable: str = "fpt",
        n_layers: int | None = None) -> dict[str, Any]:
    """An FPT arm on `backbone`: its first n_layers layers (the scale's depth by default),
    weights as `init` says, the groups of `trainable` trained (model/freeze.py)."""
    return {**backbone.fields(n_layers or depth(backbone, scale), init),
            "trainable": trainable}


BIT_TASK: dict[Scale, dict[str, Any]] = {
    "smoke": {"task": {"name": "bit_memory", "n_bits": 20, "patch": 10}, "steps": 4},
    "cpu": {"task": {"name": "bit_memory", "n_bits": 60, "patch": 10}, "steps": 1500},
    "paper": {"task": {"name": "bit_memory", "n_bits": 5000, "patch": 50}, "steps": 20_000},
}
"""The bit-memory pretraining per scale: 5 patterns and a query as the paper, patterns long
enough that the learned position table covers every downstream task (cpu: 36 tokens >=
ListOps' 32; paper: 600 >= ListOps' 512)."""


def bit_pretraining(backbone: Backbone, scale: Scale, seed: int) -> dict[str, Any]:
    """The Bit backbone's pretraining run of one seed: the architecture at random init, every
    parameter trained on bit memory, with the downstream recipe (Adam lr 1e-3, batch 4 as the
    authors'). One per seed: the seed pretrains as it trains downstream (the replication unit
    is the whole pipeline's seed)."""
    task = tasks(scale)["bit memory"]
    return merge(recipe(scale), task, arm(backbone, scale, "random", "full"), BIT_TASK[scale],
                 {"n_train": BIT_TASK[scale]["steps"] * task["batch_size"], "seed": seed})


def backbone_tables(rep: Report, results: Results, arms: list[str],
                    paper: dict[str, dict[str, str]], heading: str, note: str
                    ) -> dict[str, dict[str, dict[str, list[float]]]]:
    """One accuracy table per backbone (the slide's rows `arms`, its numbers in brackets, then
    the baselines the slides cite: linear classifier on the raw input, majority class, chance);
    returns backbone -> task -> arm -> the metric per seed, what the verdicts read."""
    out = {}
    base = task_baselines(results)  # the data do not depend on the backbone
    for name, runs in by_backbone(results).items():
        values = finals(by_task(runs))
        rep.add(f"{heading}: {resolve(name).title} (%)",
                f"{backbone_line(name)}\n\n{note}\n\n" + accuracy_table(values, arms, paper,
                                                                      base))
        out[name] = values
    return out


def baselines_text(results: Results) -> str:
    """The baselines the slides cite, on each task's own data (fpt.common.baselines)."""
    return "Baselines on the same data (test, %): " + "; ".join(
        f"{t}: " + ", ".join(f"{b} {100 * v:.1f}" for b, v in base.items())
        for t, base in task_baselines(results).items()) + "."


def pretraining_accuracy(results: Results) -> dict[str, list[float]]:
    """Backbone title -> the masked-bit accuracy of each seed's bit-memory pretraining run
    (factor phase=pretrain) at its end, seed order."""
    return {title(b): [metric(r["final"]) for _, r in rs.where(phase="pretrain")]
            for b, rs in by_backbone(results).items()}


def pretraining_section(rep: Report, accuracy: dict[str, list[float]]) -> None:
    """The masked-bit accuracy of each Bit backbone's pretraining runs: a Bit backbone that
    never learned bit memory tests nothing (slide_verdicts.BIT_LEARNED)."""
    rep.add("The Bit backbones' pretraining", "Masked-bit accuracy of each seed's bit-memory "
            f"pretraining run at its end (chance 0.5; each must reach {BIT_LEARNED:g} for the "
            "comparisons with the Bit backbone to count):\n\n" + "\n".join(
                f"- {b}: " + ", ".join(f"{a:.3f}" for a in accs)
                for b, accs in accuracy.items()))


def title(name: str) -> str:
    return resolve(name).title
