"""A shorter LEGO chain: does a 6-clause chain fit where the 12-clause one does not? (our
finding; docs/papers.md §7)

Zhang et al. 2022 §3 train on sentences of 12 clauses with the loss on the first 6 chain
variables (#0-#5) and test extrapolation on the other 6. No model this lab trained fits #0-#5
at that length (lego-plateau: every recipe and remedy sits on the one-hop rule at #2). The
declared scale-down measured here: 6 clauses, the loss on the first 3 (#0-#2), #3-#5
extrapolated -- the paper's supervised/extrapolated split in proportion, at half the length.
A claim it can carry is about extrapolation past the supervised part, not about n = 12.

Arms: lego-plateau's `long` recipe and its best combination (NormSoftmax + small init,
lego-plateau's COMBINED) on the short chain, 3 seeds each, seed by seed, with the attention
diagnostics. Nothing else changes: the same model, optimiser, steps and 50,000 training
sentences (each sentence half as long, so a run costs about half a 12-clause one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid, merge
from reasonlab.studies.lego._support.remedies import (COMBINATION, COMBINED, DIAGNOSED,
                                                      RECIPE, staircase_report)
from reasonlab.studies.lego.common import N_CLAUSES, N_TRAIN_VARS, recipe
from reasonlab.studies.lego.verdicts import fit_gain_verdict, more_seeds_verdict

SHORT_CLAUSES, SHORT_TRAIN_VARS = N_CLAUSES // 2, N_TRAIN_VARS // 2
"""6 clauses, the loss on #0-#2: the paper's 12 / 6 split (§3) at half the length."""
SHORT: dict[str, Any] = {"task": {"n_clauses": SHORT_CLAUSES, "n_train_vars": SHORT_TRAIN_VARS}}
ARMS: dict[str, dict[str, Any]] = {RECIPE: {}, COMBINATION: COMBINED[COMBINATION]}


def short_runs(scale: Scale, seeds: int) -> list[RunSpec]:
    """Both arms on the short chain, `seeds` units each, seed 0 of each arm first."""
    specs = grid(merge(recipe(scale), DIAGNOSED, SHORT), ARMS, seeds=seeds)
    return sorted(specs, key=lambda s: s.seed)


@STUDIES.register("lego-short-chain")
class LegoShortChain(Study):
    title = (f"LEGO: a {SHORT_CLAUSES}-clause chain supervised on #0-#{SHORT_TRAIN_VARS - 1} "
             "(the paper's split at half the length)")
    scales = ("smoke", "long", "paper")  # paper: the authors' BERT-base recipe, for a GPU

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return short_runs(scale, seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        rep, finals, second = staircase_report(self.title, results, out, SHORT_TRAIN_VARS)
        rep.verdicts = [
            fit_gain_verdict(self.claim("combination-short-chain"), finals, COMBINATION, RECIPE,
                             SHORT_TRAIN_VARS),
            more_seeds_verdict(self.claim("combination-short-seeds"), second, COMBINATION,
                               RECIPE),
        ]
        return rep
