"""LEGO mixed lengths (min_clauses): padded training sentences, full-length test set."""

import numpy as np
import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.tasks import build_task
from reasonlab.tasks.lego import CLAUSE_LEN


def mixed(**kw):
    return build_task({"name": "lego", "n_clauses": 8, "n_train_vars": 3, "min_clauses": 3,
                       **kw})


@pytest.mark.parametrize("group", ["z2", "s3"])
def test_mixed_sentences_agree_with_solver_and_are_padded(group):
    t = mixed(group=group)
    b = t.sample(np.random.default_rng(0), 600)
    real = b.pad_mask.sum(1)  # [B] real tokens
    n = (b.label_pos >= 0).sum(1)  # [B] clauses
    assert torch.equal(real, CLAUSE_LEN * n + 2)
    assert set(n.tolist()) == set(range(3, 9))  # every length in [min_clauses, n_clauses]
    for i in range(len(b)):
        k = int(n[i])
        text = t.render(b, i)
        assert text.count(";") == k - 1
        assert t.parse(text) == b.tokens[i, : CLAUSE_LEN * k + 2].tolist()
        assert t.solve(text) == t.labels_text(b, i)
        assert (b.tokens[i, CLAUSE_LEN * k + 2 :] == 0).all()  # [PAD]
        assert b.tokens[i, CLAUSE_LEN * k + 1] == t.vocab.id("[SEP]")
        assert (b.label_pos[i, k:] == -1).all() and not b.loss_mask[i, k:].any()
        assert b.loss_mask[i, : min(k, 3)].all()
        assert sorted(t.depths(b, i).values()) == list(range(k))


def test_test_split_is_full_length_and_disjoint():
    t = mixed()
    train, test = t.splits(np.random.default_rng(1), 500, 200)
    assert train.pad_mask is not None and (train.label_pos < 0).any()
    assert test.pad_mask is None and (test.label_pos >= 0).all()
    keys = {tuple(r) for r in train.tokens.tolist()}
    assert len(keys) == 500 and not keys & {tuple(r) for r in test.tokens.tolist()}


def test_mixed_training_runs_and_model_reads_padded_slots(tmp_path):
    from reasonlab.runs import config_id
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.loop import train

    task = {"name": "lego", "n_clauses": 4, "n_train_vars": 2}
    model = {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 16}
    cfg = TrainConfig.build({"task": {**task, "min_clauses": 2}, "model": model, "steps": 4,
                             "eval_every": 2, "ckpt_every": 2, "n_train": 64, "n_test": 16})
    # unset min_clauses leaves run ids as they were
    plain = TrainConfig.build({"task": task, "model": model, "steps": 4, "eval_every": 2,
                               "ckpt_every": 2, "n_train": 64, "n_test": 16})
    assert "min_clauses" not in plain.model_dump()["task"] and config_id(plain) != config_id(cfg)
    final = train(cfg, tmp_path, quiet=True)
    assert np.isfinite(final["train_loss"]) and len(final["acc_by_depth"]) == 4


def test_min_clauses_above_n_clauses_is_an_error():
    with pytest.raises(ConfigError, match="min_clauses=9 exceeds n_clauses=8"):
        mixed(min_clauses=9)


def test_mixed_lengths_arm_never_supervises_the_chains_last_variable():
    """Issue 18: with #0-#5 supervised, lengths drawn from 6 make #5 the LAST variable of
    6-clause sentences (§4.3's shortcut); the study's arm draws from 7 and never does."""
    from reasonlab.studies.lego.mixed_lengths import MIXED, MIXED_LAST, LegoMixedLengths, \
        last_supervised

    tasks = {s.arm: s.config.task.model_dump() for s in LegoMixedLengths().runs("cpu", 1)}
    b = build_task(tasks[MIXED]).sample(np.random.default_rng(3), 5000)
    n = (b.label_pos >= 0).sum(1)
    assert set(n.tolist()) == set(range(7, 13))
    for i in range(len(b)):  # the last chain variable's slot is n - 1: never in the loss
        assert not b.loss_mask[i, int(n[i]) - 1]
        assert b.loss_mask[i, :6].all() and not b.loss_mask[i, 6:].any()
    assert last_supervised(tasks[MIXED], 5000) == 0.0
    # the earlier mixture does, in the 1 sentence of 7 that has 6 clauses
    assert last_supervised(tasks[MIXED_LAST], 7000) == pytest.approx(1 / 7, abs=0.02)
