"""The base of fpt-universal and fpt-lstm (universal.py, lstm.py; Lu et al. 2021, slides
"Performance on Multimodal Sequence Benchmarks", "Importance of language pre-training",
"Importance of architecture: random weights"): the FPT and Random transformer arms both run on
every backbone and task, and the report both print (the slides' tables per backbone,
analysis.universal_sections), each claim judged on both backbones."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reasonlab.studies.fpt._support.backbone import backbone_grid, results_note
from reasonlab.studies.fpt._support.slides import SlideStudy, arm
from reasonlab.studies.fpt.analysis import SlideRows, universal_sections
from reasonlab.studies.fpt.common import FPT, RANDOM, recipe, tasks
from reasonlab.studies.fpt.verdicts import Values
from reasonlab.studies.kit.base import Claim, Report, Results, RunSpec, Scale, Verdict
from reasonlab.studies.kit.verdicts import all_of_each


def transformer_arms(scale: Scale, seeds: int, backbones: tuple[str, ...]) -> list[RunSpec]:
    """FPT and the frozen random transformer (Random) on every backbone and task."""
    return backbone_grid(recipe(scale), lambda b: {FPT: arm(b, scale),
                                                   RANDOM: arm(b, scale, "random")},
                         tasks(scale), seeds, backbones=backbones)


class UniversalStudy(SlideStudy):
    """A study whose report prints `slides` (analysis.SlideRows) per backbone and judges its
    claims with `verdicts` on each backbone: a claim holds when it holds on both."""

    slides: list[SlideRows] = []
    verdicts: Callable[[Callable[[str], Claim], Values], list[Verdict]]

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results, note=results_note(results))
        values = universal_sections(rep, results, out, self.slides)
        # a claim holds when it holds on both backbones
        rep.verdicts = all_of_each(self.claims, {b: self.verdicts(self.claim, v)
                                                 for b, v in values.items()})
        return rep
