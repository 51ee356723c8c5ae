"""The wall at #2: the field's plateau remedies on LEGO (our finding; docs/papers.md §7).

Every LEGO model this lab trained learns #0 and #1 and then sits at chance on #2, computing a
one-hop rule (README, "Past the second step"): finding a variable's defining clause by its name
is the wall. Three papers describe such a wall and how to remove it:

- Hoffmann et al. 2024 ("Eureka-moments", arXiv 2310.12956): the intermediate step of a
  two-step task is learned only after a long plateau, because ill-distributed softmax attention
  gives W_Q and W_K vanishing gradients; NormSoftmax, a lower softmax temperature and heat
  treatment shorten it (model/temperature_attention.py);
- Zhang et al. 2024 (our anchors family's paper): a small initialization (rate gamma > 0.5)
  makes a model compose rather than memorise (INITS "rate", the anchors family's own init);
- Musat 2024 (arXiv 2411.12118): stacked retrieval heads are learned under an implicit
  curriculum of easier instances; LEGO's mixed lengths (task.min_clauses) are one.

Arms: the `long` recipe (lego-extrapolation's BERT-like arm, 3000 steps) and each remedy alone,
3 seeds each, seed 0 of every arm first (the screening seed); then the two remedies that climbed
the staircase fastest in the screening seed, combined (`COMBINED`), alone and with a
short-chain curriculum, 3 seeds each. Every run logs the attention
diagnostics (train/diagnostics.py: attention entropy, W_Q / W_K / W_V gradient norms on a
fixed probe batch at every evaluation), so the report can say whether the plateau shows the
mechanism Hoffmann et al. name. At 3 seeds per arm an exact test of "earlier" or "in more
seeds" cannot reach the 2.5% level (a complete split has p = 1/20); those claims decide from 4
seeds per arm (1/70), which one session's compute does not buy beside the seven arms: their
verdicts say so.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid, merge
from reasonlab.studies.lego.analysis import op_split_section
from reasonlab.studies.lego.common import N_TRAIN_VARS, recipe
from reasonlab.studies.lego._support.remedies import (COMBINATION, COMBINED, CURRICULUM,
                                                      DIAGNOSED, HEAT, NORMSOFTMAX, RECIPE,
                                                      REMEDIES, SMALL_INIT, TEMPERATURE,
                                                      staircase_report)
from reasonlab.studies.lego.verdicts import (fit_gain_verdict, more_seeds_verdict,
                                             plateau_verdict)


def remedy_runs(scale: Scale, seeds: int) -> list[RunSpec]:
    """The recipe arm and every remedy, `seeds` units each, ordered seed by seed so that seed
    0 of every arm (the screening seed) trains first."""
    specs = grid(merge(recipe(scale), DIAGNOSED), {RECIPE: {}, **REMEDIES}, seeds=seeds)
    return sorted(specs, key=lambda s: s.seed)  # stable: arm order within a seed


def combined_runs(scale: Scale, seeds: int) -> list[RunSpec]:
    """The two combinations (COMBINED), `seeds` units each, seed by seed."""
    specs = grid(merge(recipe(scale), DIAGNOSED), COMBINED, seeds=seeds)
    return sorted(specs, key=lambda s: s.seed)


@STUDIES.register("lego-plateau")
class LegoPlateau(Study):
    title = "LEGO: the wall at #2 and the field's plateau remedies"
    scales = ("smoke", "long", "paper")  # paper: the authors' BERT-base recipe, for a GPU

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return remedy_runs(scale, seeds) + combined_runs(scale, seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        rep, finals, second = staircase_report(self.title, results, out, N_TRAIN_VARS)
        op_split_section(rep, results)
        rep.verdicts = [
            plateau_verdict(self.claim("normsoftmax-plateau"), second, NORMSOFTMAX, RECIPE),
            plateau_verdict(self.claim("temperature-plateau"), second, TEMPERATURE, RECIPE),
            plateau_verdict(self.claim("heat-treatment-plateau"), second, HEAT, RECIPE),
            more_seeds_verdict(self.claim("normsoftmax-seeds"), second, NORMSOFTMAX, RECIPE),
            fit_gain_verdict(self.claim("small-init-chain"), finals, SMALL_INIT, RECIPE,
                             N_TRAIN_VARS),
            plateau_verdict(self.claim("combination-plateau"), second, COMBINATION, RECIPE),
            plateau_verdict(self.claim("curriculum-plateau"), second, CURRICULUM, RECIPE),
        ]
        return rep
