"""The baselines every FPT table prints (slides: "Linear classifier on raw MNIST: 92%"),
checked against independent computations on the run's own data."""

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
