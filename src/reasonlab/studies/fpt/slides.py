"""Arms and tables shared by the FPT studies that each reproduce one more slide table on both
offline backbones (studies/fpt/{initialization,modality,fitting,scaling,attention_maps}.py;
Lu et al. 2021, slides).

Every run carries the factors backbone, arm and task (`backbones.backbone_grid`); a report
prints one table per backbone, in the slide's layout (models as rows, tasks as columns), the
slide's number in brackets beside ours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reasonlab.model.fpt import FPT_BACKBONES, Backbone, Init
from reasonlab.model.pretrained import PRETRAINED
from reasonlab.studies.fpt.backbones import BACKBONES, backbone_line, depth
from reasonlab.studies.fpt.common import FPTStudy, accuracy_table, by_task, finals
from reasonlab.studies.kit.base import Report, Results, Scale


class SlideStudy(FPTStudy):
    """Base of the studies run on every backbone: each backbone's weights package must be
    installed."""

    @classmethod
    def missing(cls) -> str | None:
        for name in BACKBONES:
            ckpt = PRETRAINED[FPT_BACKBONES[name].checkpoint]
            if not ckpt.available():
                return f"needs the {name} weights package: {ckpt.install_hint}"
        return None


def arm(backbone: Backbone, scale: Scale, init: Init = "pretrained", trainable: str = "fpt",
        n_layers: int | None = None) -> dict[str, Any]:
    """An FPT arm on `backbone`: its first n_layers layers (the scale's depth by default),
    weights as `init` says, the groups of `trainable` trained (model/freeze.py)."""
    return {**backbone.fields(n_layers or depth(backbone, scale), init),
            "trainable": trainable}


def by_backbone(results: Results) -> dict[str, Results]:
    """backbone name -> its runs (the `backbone` factor), in report order."""
    return results.by("backbone")


def means(values: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    """task -> arm -> mean over seeds."""
    return {t: {a: float(np.mean(v)) for a, v in arms.items()} for t, arms in values.items()}


def backbone_tables(rep: Report, results: Results, arms: list[str],
                    paper: dict[str, dict[str, str]], heading: str, note: str
                    ) -> dict[str, dict[str, dict[str, float]]]:
    """One accuracy table per backbone (the slide's rows `arms`, its numbers in brackets);
    returns backbone -> task -> arm -> mean metric, what the verdicts read."""
    out = {}
    for name, runs in by_backbone(results).items():
        values = finals(by_task(runs))
        rep.add(f"{heading}: {FPT_BACKBONES[name].title} (%)",
                f"{backbone_line(name)}\n\n{note}\n\n" + accuracy_table(values, arms, paper))
        out[name] = means(values)
    return out


def title(name: str) -> str:
    return FPT_BACKBONES[name].title
