"""fpt.common: the baselines every FPT table prints (slides: "Linear classifier on raw MNIST:
92%"), checked against independent computations on the run's own data; the Full arm's
learning rate chosen on the validation split."""

from __future__ import annotations

import numpy as np

from reasonlab.studies.fpt.common import LINEAR, MAJORITY, UNIFORM, baselines
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import make_data


def config(task, n_train=400, n_test=200):
    return TrainConfig.build({"task": task, "model": {"arch": "fpt", "d_model": 8, "n_heads": 1,
                                                      "n_layers": 1},
                              "n_train": n_train, "n_test": n_test})


def test_majority_and_chance_match_a_naive_count():
    c = config({"name": "listops", "tokenisation": "lra", "min_length": 16, "max_length": 32})
    train, test = make_data(c, build_task(c.task))
    y_tr, y_te = train.labels[:, 0].numpy(), test.labels[:, 0].numpy()
    common = np.bincount(y_tr).argmax()
    b = baselines(c)
    assert abs(b[MAJORITY] - float(np.mean(y_te == common))) < 1e-6
    assert b[UNIFORM] == 0.1


def test_linear_classifier_reads_raw_pixels_and_cannot_do_xor():
    assert baselines(config({"name": "digits"}))[LINEAR] > 0.9  # logistic regression: ~0.96
    xor = baselines(config({"name": "bit_xor"}, n_train=512, n_test=256))
    assert abs(xor[LINEAR] - 0.5) < 0.1  # XOR of two inputs is not linearly separable
    assert xor[UNIFORM] == 0.5


def test_bit_memory_baselines_read_masked_bits():
    b = baselines(config({"name": "bit_memory", "n_bits": 20, "patch": 10}, 200, 100))
    assert abs(b[MAJORITY] - 0.5) < 0.1  # masked bits are +-1 at random: no majority


def test_full_arm_learning_rate_is_chosen_on_validation_never_on_test():
    """Per task, the Full runs of the learning rate with the best VALIDATION metric are kept;
    a learning rate with a better test accuracy but a worse validation one is dropped."""
    from reasonlab.studies.fpt.common import FPT, FULL, by_task, choose_full
    from reasonlab.studies.kit.base import Results, RunSpec

    c = config({"name": "digits"})

    def run(arm, task, val, test, lr=None):
        factors = {"arm": arm, "task": task, **({"lr": lr} if lr else {})}
        return (RunSpec(arm, 0, c, factors), {"final": {"acc": test, "val": {"acc": val}}})

    results = Results([run(FPT, "digits", 0.8, 0.8),
                       run(FULL, "digits", 0.6, 0.9, 1e-3), run(FULL, "digits", 0.7, 0.5, 1e-4),
                       run(FULL, "ListOps", 0.3, 0.3, 1e-3), run(FULL, "ListOps", 0.2, 0.4,
                                                                   1e-4)], "cpu", 1)
    kept, chosen = choose_full(results)
    assert chosen == {"digits": 1e-4, "ListOps": 1e-3}
    runs = by_task(kept)
    assert [r["final"]["acc"] for r in runs["digits"][FULL]] == [0.5]
    assert [r["final"]["acc"] for r in runs["ListOps"][FULL]] == [0.3]
    assert runs["digits"][FPT][0]["final"]["acc"] == 0.8
