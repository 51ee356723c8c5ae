"""MLP vs transformer on unseen symbols (Boix-Adsera et al., ICLR 2024, §3 and §4; Fig. 1).

Same/different (`$a $a` -> same, `$a $b` -> different) with symbols drawn from a training
alphabet, tested on a disjoint alphabet. The paper proves that an MLP trained by SGD cannot
beat chance on unseen symbols (permutation symmetry of the symbol embeddings), while a
transformer generalises given enough training samples. The MLP fed the equality matrix X X^T
(its other baseline) is shown for reference: the equality pattern does not depend on which
symbols are used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from reasonlab.report import table
from reasonlab.studies.base import STUDIES, Claim, Report, RunSpec, Scale, Study, Verdict
from reasonlab.studies.symbols_common import config, final, fmt_seeds, plot_sweep, sweep_table

TASK = {"preset": "same_different"}
ARMS: dict[str, dict[str, Any]] = {
    "transformer": {},
    "MLP": {"arch": "mlp", "n_layers": 2},
    "MLP + X X^T": {"arch": "mlp", "n_layers": 2, "mlp_equality": True},
}
N_TRAIN: dict[Scale, list[int]] = {"smoke": [64, 256], "cpu": [1000, 10_000],
                                   "paper": [1000, 10_000, 100_000]}
CHANCE = 0.5
MLP_MAX = 0.55
"""The MLP 'stays at chance' when its mean test accuracy is at most this at every n."""
TRANSFORMER_MIN = 0.9
"""The transformer 'generalises' when its mean test accuracy reaches this at the largest n."""


@STUDIES.register("symbols-mlp-vs-transformer")
class SymbolsMlpVsTransformer(Study):
    name = "symbols-mlp-vs-transformer"
    title = "Abstract symbols: MLP vs transformer on unseen symbols (same/different)"
    claims = (
        Claim("mlp-chance", "An MLP trained by SGD stays at chance on unseen symbols",
              "Boix-Adsera et al. 2024, §3 (MLPs fail to reason; permutation symmetry)"),
        Claim("transformer-generalises", "A transformer generalises to unseen symbols given "
              "enough training samples", "Boix-Adsera et al. 2024, Thm 1.1 (§4) and Fig. 1"),
    )
    cpu_minutes = 1.0  # measured: 59 s (authors' init)
    default_seeds = {"smoke": 1, "cpu": 2, "paper": 3}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        return [RunSpec(arm, seed, config(scale, TASK, n, seed, model, eval_train=True))
                for arm, model in ARMS.items() for n in N_TRAIN[scale]
                for seed in range(seeds)]

    def analyse(self, results: list[tuple[RunSpec, dict[str, Any]]], out: Path) -> Report:
        test = {arm: final(results, arm) for arm in ARMS}
        train = {arm: final(results, arm, key="train_acc") for arm in ARMS}
        plot_sweep(test, out / "accuracy_vs_samples.png", "training samples n",
                   "same/different, unseen symbols", chance=CHANCE)
        rep = Report(self.title)
        h, rows = sweep_table(test, "n_train")
        h2, rows2 = sweep_table(train, "n_train")
        rep.sections += [
            "## Test accuracy on unseen symbols (mean ± std over seeds)\n\n" + table(h, rows),
            "## Accuracy on training examples (seen symbols)\n\n" + table(h2, rows2)]
        rep.figures.append(("accuracy_vs_samples.png", "Test accuracy on unseen symbols "
                            "against training samples (band: ±1 std over seeds)"))
        mlp = test["MLP"]
        worst = max(float(np.mean(v)) for v in mlp.values())
        ev = ("MLP test accuracy " + ", ".join(f"n={n}: {fmt_seeds(v)}" for n, v in mlp.items())
              + f" (train accuracy at n={min(mlp)}: {fmt_seeds(train['MLP'][min(mlp)])}); "
              f"chance {CHANCE}, needs <= {MLP_MAX} at every n")
        v1 = Verdict(self.claims[0], "reproduced" if worst <= MLP_MAX else "not reproduced", ev)
        tr = test["transformer"]
        n_max = max(tr)
        acc = float(np.mean(tr[n_max]))
        ev = ("transformer test accuracy " + ", ".join(f"n={n}: {fmt_seeds(v)}"
                                                       for n, v in tr.items())
              + f"; needs >= {TRANSFORMER_MIN} at n={n_max}")
        v2 = Verdict(self.claims[1], "reproduced" if acc >= TRANSFORMER_MIN else
                     "not reproduced", ev)
        rep.verdicts = [v1, v2]
        return rep
