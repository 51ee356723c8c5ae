"""MLP vs transformer on unseen symbols (Boix-Adsera et al., ICLR 2024, §3 and §4; Fig. 1).

Same/different (`$a $a` -> same, `$a $b` -> different) with symbols drawn from a training
alphabet, tested on a disjoint alphabet. The paper proves that an MLP trained by SGD cannot
beat chance on unseen symbols (permutation symmetry over the symbol alphabet), while a
transformer generalises given enough training samples.

The MLP's input decides whether the proof applies (model/mlp_baseline.py), so both are arms, each
with
the authors' initialization (PyTorch's defaults) and BERT's N(0, 0.02^2): the theorem's one-hot
tokens into position-specific first-layer weights (the authors' `TemplateMatchingMLP`), on
which the paper's claim is judged; and one embedding table shared by every position, on which a
repeated symbol gives the same vector twice -- our finding that equality is then detectable is
judged as its own claim. The one-hot MLP fed the exact equality matrix X X^T (the authors'
other baseline) is shown for reference.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.kit.base import STUDIES, Report, Results, RunSpec, Scale, Study, grid
from reasonlab.studies.symbols.analysis import samples_section
from reasonlab.studies.symbols.common import BERT_INIT, mlp_arm, n_train_sweep, recipe
from reasonlab.studies.symbols.verdicts import chance_verdict, reaches_verdict

ARMS = {"transformer": {}, "MLP one-hot": mlp_arm("one_hot"),
        "MLP one-hot, BERT init": mlp_arm("one_hot", **BERT_INIT),
        "MLP shared table": mlp_arm("shared_embedding"),
        "MLP shared table, BERT init": mlp_arm("shared_embedding", **BERT_INIT),
        "MLP one-hot + X X^T": mlp_arm("one_hot", equality=True)}
N_TRAIN: dict[Scale, list[int]] = {"smoke": [64, 256], "cpu": [1000, 10_000],
                                   "paper": [1000, 10_000, 100_000]}
CHANCE = 0.5
MLP_MAX = 0.55
"""The MLP 'stays at chance' when the upper bound of its mean test accuracy is at most this at
every n (and it fits its training examples: symbols/verdicts.py, MLP_FIT_MIN)."""
TRANSFORMER_MIN = 0.9
"""The transformer 'generalises' when the lower bound of its mean test accuracy reaches this at
the largest n."""
SHARED_MIN = 0.75
"""The shared-table MLP 'detects equality' when the lower bound of its mean test accuracy at
the largest n reaches this: halfway from chance to perfect."""


@STUDIES.register("symbols-mlp-vs-transformer")
class SymbolsMlpVsTransformer(Study):
    title = "Abstract symbols: MLP vs transformer on unseen symbols (same/different)"
    # estimate: 79 s measured at 2 seeds (6 arms x 2 sample sizes, 2 workers), x 5 / 2; 5 seeds
    # give the chance and generalisation rules a power of 0.93-1.0 (0.58-0.60 at 3:
    # symbols/calibration.py)
    default_seeds = {"cpu": 5}
    # its verdicts read test and training accuracy alone, so at paper scale the weights need
    # not stay (keep_checkpoints=none): 113 GB kept otherwise, 3.8 GB per one-hot MLP run
    reads_weights = False

    def runs(self, scale: Scale, seeds: int) -> list[RunSpec]:
        base = {**recipe(scale, preset="same_different"), "eval_train": True}
        return grid(base, ARMS, n_train_sweep(N_TRAIN[scale]), seeds)

    def analyse(self, results: Results, out: Path) -> Report:
        test, train = results.sweep(), results.sweep(key="train_acc")
        rep = samples_section(Report(self.title, out).recipe(results), test)
        rep.sweep(train, "n_train", "Accuracy on training examples (seen symbols)")
        mlp, shared, claim = "MLP one-hot", "MLP shared table", self.claim
        rep.verdicts = [
            chance_verdict(claim("mlp-chance"), test[mlp], train[mlp], CHANCE, MLP_MAX, who=mlp),
            reaches_verdict(claim("transformer-generalises"), test["transformer"],
                            TRANSFORMER_MIN),
            reaches_verdict(claim("shared-table-equality"), test[shared], SHARED_MIN, who=shared)]
        return rep
