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

from reasonlab.studies.kit.base import STUDIES, Claim, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.symbols.analysis import samples_section
from reasonlab.studies.symbols.common import n_train_sweep, recipe
from reasonlab.studies.symbols.verdicts import chance_verdict, reaches_verdict

ARMS = {"transformer": {}, "MLP": {"model": {"arch": "mlp", "n_layers": 2}},
        "MLP + X X^T": {"model": {"arch": {"name": "mlp", "equality": True}, "n_layers": 2}}}
N_TRAIN: dict[Scale, list[int]] = {"smoke": [64, 256], "cpu": [1000, 10_000],
                                   "paper": [1000, 10_000, 100_000]}
CHANCE = 0.5
MLP_MAX = 0.55
"""The MLP 'stays at chance' when its mean test accuracy is at most this at every n."""
TRANSFORMER_MIN = 0.9
"""The transformer 'generalises' when its mean test accuracy reaches this at the largest n."""


@STUDIES.register("symbols-mlp-vs-transformer")
class SymbolsMlpVsTransformer(Study):
    title = "Abstract symbols: MLP vs transformer on unseen symbols (same/different)"
    claims = (
        Claim("mlp-chance", "An MLP trained by SGD stays at chance on unseen symbols",
              "Boix-Adsera et al. 2024, §3 (MLPs fail to reason; permutation symmetry)"),
        Claim("transformer-generalises", "A transformer generalises to unseen symbols given "
              "enough training samples", "Boix-Adsera et al. 2024, Thm 1.1 (§4) and Fig. 1"),
    )
    cpu_minutes = 1.0  # measured: 59 s (authors' init)
    default_seeds = {"cpu": 2}

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = {**recipe(scale, preset="same_different"), "eval_train": True}
        return grid(base, ARMS, n_train_sweep(N_TRAIN[scale]), seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        test, train = results.sweep(), results.sweep(key="train_acc")
        rep = samples_section(Report(self.title, out).recipe(results), test)
        rep.sweep(train, "n_train", "Accuracy on training examples (seen symbols)")
        rep.verdicts = [chance_verdict(self.claim("mlp-chance"), test["MLP"], train["MLP"],
                                       CHANCE, MLP_MAX),
                        reaches_verdict(self.claim("transformer-generalises"), test["transformer"],
                                        TRANSFORMER_MIN)]
        return rep
