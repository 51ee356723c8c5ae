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

import numpy as np

from reasonlab.analysis.probes import plot_probe_maps, split_diagonal
from reasonlab.report import table
from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.lego.analysis import probe_run
from reasonlab.studies.lego.common import N_TRAIN_VARS, WITH_LONG, bert_albert, recipe
from reasonlab.studies.lego.verdicts import needs_fit
from reasonlab.studies.kit.verdicts import gain_verdict


@STUDIES.register("lego-probes")
class LegoProbes(Study):
    title = "LEGO: information percolation by linear probes (BERT-like vs ALBERT-like)"
    claims = (Claim("for-loop", "ALBERT's probe map is closer to the one-layer-per-step "
                    "for-loop than BERT's (higher diagonal score on the supervised depths)",
                    "Zhang et al. 2022, §4.1 Q2, Fig. 4"),)
    cpu_minutes = 4.8  # measured: 287 s; its 4 runs reused; trains seed 2
    scales = WITH_LONG
    cpu_after = "lego-extrapolation"

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return grid(recipe(scale), bert_albert(scale), seeds=seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        arms = results.arms()
        maps: dict[str, np.ndarray] = {}
        scores: dict[str, np.ndarray] = {}  # arm -> [seeds, (supervised, extrapolated)]
        rows, shuffled_gap = [], 0.0
        chance = 0.5
        for arm, rs in arms.items():
            probed = [probe_run(Path(r["dir"])) for r in rs]
            chance = float(np.mean([c for _, _, c in probed]))
            maps[arm] = np.mean([a for a, _, _ in probed], axis=0)
            scores[arm] = np.array([split_diagonal(a, c, N_TRAIN_VARS) for a, _, c in probed])
            shuffled_gap = max(shuffled_gap, max(float(np.nanmax(np.abs(s - c)))
                                                 for _, s, c in probed))
            for layer, accs in enumerate(maps[arm]):
                rows.append([arm, str(layer)] + [f"{x:.2f}" for x in accs])
        plot_probe_maps(maps, out / "probe_maps.png", chance, n_supervised=N_TRAIN_VARS)
        n = next(iter(maps.values())).shape[1]
        n_layers = next(iter(maps.values())).shape[0] - 1
        rep = Report(self.title, out).recipe(results)
        rep.sections.append(
            "## Held-out probe accuracy by layer (0 = embeddings) and chain depth "
            f"(mean over seeds; chance {chance:.2f})\n\n"
            + table(["arm", "layer"] + [f"#{d}" for d in range(n)], rows)
            + f"\n\nShuffled-label probes: largest distance from chance {shuffled_gap:.3f}.\n\n"
            + "## Diagonal score per seed (1 = one layer per chain step)\n\n"
            + table(["arm", "seed", f"supervised #0-#{N_TRAIN_VARS - 1}",
                     f"extrapolated #{N_TRAIN_VARS}-#{n_layers - 1} (within reach of "
                     f"{n_layers} layers)" if n_layers > N_TRAIN_VARS else
                     f"extrapolated (none within reach of {n_layers} layers)"],
                    [[a, str(i), f"{x[0]:.3f}", "n/a" if np.isnan(x[1]) else f"{x[1]:.3f}"]
                     for a, s in scores.items() for i, x in enumerate(s)])
            + "\n\nThe verdict compares the supervised-depth scores.")
        rep.figure("probe_maps.png", "Probe accuracy over (layer, depth); dashed: the "
                   "one-layer-per-step for-loop")
        # a probe map of a model that has not learned the task says nothing about how it solves it
        finals = results.per_position()
        rep.verdicts = [needs_fit(gain_verdict(self.claim("for-loop"), scores["ALBERT"][:, 0],
                                               scores["BERT"][:, 0], ("ALBERT", "BERT"),
                                               f"diagonal score on #0-#{N_TRAIN_VARS - 1}"),
                                  finals, slice(0, N_TRAIN_VARS))]
        return rep
