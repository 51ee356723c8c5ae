"""Data efficiency of identity-augmented attention (Boix-Adsera et al., ICLR 2024, §4.3, Fig. 2).

Same/different with unseen test symbols: test accuracy against the number of training samples
(log scale) for the plain transformer and for the modified one (attention logits += a_h X X^T,
output += b_h Attn_h X, a_h = b_h = 0 at init). The paper reports that the modification cuts
the samples needed by about an order of magnitude. We measure the sample count at which each
seed of each arm first reaches a fixed target along its own sweep (log-linear interpolation
between grid points) and decide from the geometric-mean ratio over seeds with its interval
(symbols/verdicts.py, ratio_verdict).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.symbols.analysis import samples_section, targets_section
from reasonlab.studies.symbols.common import n_train_sweep, recipe
from reasonlab.studies.symbols.verdicts import ratio_verdict

ARMS = {"transformer": {}, "+ identity (a, b)": {"model": {"attention": "identity"}}}
N_TRAIN: dict[Scale, list[int]] = {"smoke": [32, 128], "cpu": [100, 300, 1000, 3000, 10_000],
                                   "paper": [100, 300, 1000, 3000, 10_000, 30_000, 100_000]}
TARGET = 0.9
"""Accuracy at which the two arms' sample counts are compared."""
SECOND_TARGET = 0.75
"""Reported as well, not used by the verdict."""
MIN_RATIO = 10 ** 0.5
"""'About an order of magnitude': a ratio within half a decade of 10 (>= 3.16) reproduces."""
NO_GAIN = 1.5
"""A ratio below this is no gain: reproducing needs the ratio's lower bound above it."""
PAPER_RATIO = 10.0
"""The paper's 'order of magnitude': the ratio the verdict's power is quoted at."""


@STUDIES.register("symbols-data-efficiency")
class SymbolsDataEfficiency(Study):
    title = "Abstract symbols: samples needed with and without identity-augmented attention"
    default_seeds = {"paper": 5}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(recipe(scale, preset="same_different"), ARMS, n_train_sweep(N_TRAIN[scale]),
                    seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        test = results.sweep()
        plain, mod = (test[a] for a in ARMS)
        rep = samples_section(Report(self.title, out).recipe(results), test)
        targets_section(rep, plain, mod, (TARGET, SECOND_TARGET))
        rep.verdicts = [ratio_verdict(self.claim("order-of-magnitude"), plain, mod, TARGET,
                                      MIN_RATIO, NO_GAIN, PAPER_RATIO)]
        return rep
