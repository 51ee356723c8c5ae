"""LEGO: per-layer linear probes, BERT-like vs ALBERT-like (Zhang et al. 2022, §4.1 Q2, Fig. 4).

The two arms are `lego-extrapolation`'s (same recipe). After training, one linear probe per
layer reads each variable's value from its frozen token representation (analysis/probes.py),
trained on fresh sentences and tested on held-out ones, broken down by chain depth, with a
shuffled-label baseline. The diagonal score (1 = exactly one layer per reasoning step, see
`diagonal_score`) summarises each (layer, depth) map. The verdict rests on the SUPERVISED
depths #0-#5: over all depths a for-loop that also extrapolates scores higher than the same
for-loop that does not, which would credit extrapolation (measured by `lego-extrapolation`) to
the loop's shape. The extrapolated depths a for-loop can still reach (#6..#L-1; none for the
6-layer cpu model) are scored separately and reported.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.lego.analysis import per_position, probe_sections
from reasonlab.studies.lego.common import N_TRAIN_VARS, WITH_LONG, bert_albert, recipe
from reasonlab.studies.lego.verdicts import needs_fit
from reasonlab.studies.kit.verdicts import gain_verdict


@STUDIES.register("lego-probes")
class LegoProbes(Study):
    title = "LEGO: information percolation by linear probes (BERT-like vs ALBERT-like)"
    # are lego-extrapolation's
    scales = WITH_LONG
    cpu_after = ("lego-extrapolation",)

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(recipe(scale), bert_albert(scale), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        rep = Report(self.title, out).recipe(results)
        scores = probe_sections(rep, results, out)  # arm -> [seeds, (supervised, extrapolated)]
        # a probe map of a model that has not learned the task says nothing about how it solves it
        rep.verdicts = [needs_fit(gain_verdict(self.claim("for-loop"), scores["ALBERT"][:, 0],
                                               scores["BERT"][:, 0], ("ALBERT", "BERT"),
                                               f"diagonal score on #0-#{N_TRAIN_VARS - 1}"),
                                  per_position(results), slice(0, N_TRAIN_VARS))]
        return rep
