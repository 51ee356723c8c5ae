"""n_val: a validation split held out of the training draw, logged beside the test metrics
(the FPT studies choose the fully trained arm's learning rate on it, never on the test set)."""

from __future__ import annotations

import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import make_data, make_splits, train


def config(**over):
    return TrainConfig.build({"task": {"name": "digits"},
                              "model": {"arch": "fpt", "d_model": 16, "n_heads": 2,
                                        "n_layers": 1, "d_mlp": 32},
                              "n_train": 100, "n_test": 40, "batch_size": 8, "steps": 4,
                              "eval_every": 2, "ckpt_every": 2, **over})


def test_validation_examples_are_the_held_out_tail_of_the_training_draw():
    plain_train, plain_test = make_data(config())
    train_set, val, test = make_splits(config(n_val=30))
    assert len(train_set) == 70 and len(val) == 30
    assert torch.equal(train_set.features, plain_train.features[:70])  # trained on: the head
    assert torch.equal(val.features, plain_train.features[70:])
    assert torch.equal(test.features, plain_test.features)
    assert len(make_data(config(n_val=30))[0]) == 70  # make_data: what the run trains on
    assert "n_val" not in config().model_dump(exclude_defaults=False)  # old run ids kept


def test_every_evaluation_logs_the_validation_metrics(tmp_path):
    final = train(config(n_val=30), tmp_path / "run", quiet=True)
    assert set(final["val"]) >= {"acc", "loss"} and 0 <= final["val"]["acc"] <= 1
    assert "val" not in train(config(), tmp_path / "plain", quiet=True)


def test_validation_cannot_take_the_whole_training_draw():
    with pytest.raises(ConfigError, match="n_val"):
        config(n_val=100)
