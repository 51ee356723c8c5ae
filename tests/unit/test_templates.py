"""Template tasks: generator vs the independent solver, text round trips, disjoint alphabets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import build_task
from reasonlab.tasks.templates import OUT, distinct_draws

PRESETS = [
    {"preset": "same_different"},
    {"preset": "variable_binding"},
    {"preset": "copy", "length": 4},
    {"preset": "random", "length": 5, "n_wildcards": 3, "n_regular": 2, "n_templates": 12},
    {"preset": "random", "length": 4, "n_wildcards": 2, "n_regular": 3, "n_templates": 6,
     "symbolic": True, "template_seed": 3},
    # templates of different lengths: [OUT] moves and the tail is padded
    {"templates": ["$x -> one", "$x $y -> two", "$x k $x $y -> three"]},
]


def task_(**kw):
    return build_task({"name": "templates", "n_train_symbols": 50, "n_val_symbols": 8,
                       "n_test_symbols": 8, **kw})


@pytest.mark.parametrize("cfg", PRESETS)
@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_generator_agrees_with_solver_and_text_round_trips(cfg, split):
    task = task_(**cfg)
    batch = task.sample(np.random.default_rng(7), 1000, split)
    for i in range(len(batch)):
        text = task.render(batch, i)
        assert task.solve(text) == {"label": task.label_text(batch, i)}
        n = int(batch.label_pos[i, 0]) + 1
        assert task.parse(text) == batch.tokens[i, :n].tolist()
        assert batch.tokens[i, n - 1] == task.vocab.id(OUT)
        assert (batch.tokens[i, n:] == 0).all()  # padding after [OUT]
        if batch.pad_mask is not None:
            assert batch.pad_mask[i].tolist() == [j < n for j in range(task.seq_len)]


@pytest.mark.parametrize("cfg", PRESETS)
def test_substitution_distinct_symbols_for_distinct_wildcards(cfg):
    task = task_(**cfg)
    batch = task.sample(np.random.default_rng(1), 1000, "train")
    for i in range(len(batch)):
        tp = task.templates[int(batch.meta["template"][i, 0])]
        words = task.render(batch, i).split()
        binding: dict[str, str] = {}
        for t, w in zip(tp.tokens, words, strict=True):
            if t.startswith("$"):
                assert binding.setdefault(t, w) == w  # a wildcard always gets one symbol
            else:
                assert t == w  # regular tokens are copied as they are
        assert len(set(binding.values())) == len(binding)  # distinct wildcards, distinct symbols


@pytest.mark.parametrize("cfg", PRESETS)
def test_splits_use_disjoint_alphabets(cfg):
    task = task_(**cfg)
    train, test = task.splits(np.random.default_rng(0), 3000, 1000)
    val = task.sample(np.random.default_rng(1), 1000, "val")
    ids = {s: set(task.symbol_ids[s].tolist()) for s in ("train", "val", "test")}
    assert not ids["train"] & ids["test"] and not ids["train"] & ids["val"]
    assert not ids["val"] & ids["test"]
    regular = {task.vocab.id(t) for t in task.regular} | {0, task.vocab.id(OUT)}
    for batch, split in ((train, "train"), (val, "val"), (test, "test")):
        used = set(batch.tokens.unique().tolist()) - regular
        assert used <= ids[split]
    # the proof that matters: no test symbol appears anywhere in training
    assert not set(test.tokens.unique().tolist()) & set(train.tokens.unique().tolist()) - regular
    if task.symbolic:  # and no test label is a training symbol
        assert set(test.labels.unique().tolist()) <= ids["test"]


def test_templates_equal_up_to_renaming_are_rejected():
    with pytest.raises(ConfigError, match="up to renaming"):
        task_(templates=["$a $b $a -> x", "$b $a $b -> y"])
    with pytest.raises(ConfigError, match="up to renaming"):
        task_(templates=["$p k $q -> $p", "$q k $p -> $q"])
    task_(templates=["$a $b $a -> x", "$a $a $b -> y"])  # different patterns are fine


def test_random_templates_are_distinct_up_to_renaming_and_use_every_class():
    task = task_(preset="random", length=4, n_wildcards=3, n_regular=1, n_templates=20,
                 n_label_classes=3)
    keys = [t.canonical()[0] for t in task.templates]
    assert len(set(keys)) == 20
    assert task.classes == ["c0", "c1", "c2"]


def test_config_errors():
    with pytest.raises(ConfigError, match="exactly one of preset and templates"):
        task_(preset="copy", templates=["$a -> $a"])
    with pytest.raises(ConfigError, match="mix of real and symbolic"):
        task_(templates=["$a $b -> $a", "$a $a -> same"])
    with pytest.raises(ConfigError, match="not one of its wildcards"):
        task_(templates=["$a $b -> $c"])
    with pytest.raises(ConfigError, match="n_test_symbols=2"):
        task_(preset="copy", length=3, n_test_symbols=2)
    with pytest.raises(ConfigError, match="clashes"):
        task_(templates=["$a s3 -> x"])
    with pytest.raises(ConfigError, match="could not draw"):
        task_(preset="random", length=1, n_wildcards=1, n_regular=1, n_templates=5)
    with pytest.raises(ParseError):
        task_(preset="same_different").solve("s1 = s2")


def test_symbolic_labels_are_token_ids_of_the_named_symbol():
    task = task_(preset="copy", length=3)
    assert task.n_classes == len(task.vocab)
    batch = task.sample(np.random.default_rng(0), 500, "test")
    assert (batch.labels[:, 0] == batch.tokens[:, 0]).all()


@pytest.mark.parametrize("size, k", [(5, 3), (1000, 4)])  # permutation and rejection paths
def test_distinct_draws_rows_distinct_and_uniform(size, k):
    """Rows hold k distinct symbols, and each slot is uniform over the whole alphabet: every
    symbol appears (>= 50 expected draws each) and the counts' chi-square statistic stays below
    the z = 5 upper quantile of chi2(size - 1) (Wilson-Hilferty; a uniform sampler exceeds it
    with probability ~3e-7; the seed is fixed, so the test is deterministic)."""
    n = 50 * (math.perm(size, k) if size == 5 else size)  # >= 50 expected per counted cell
    d = distinct_draws(np.random.default_rng(0), n, k, size)
    assert d.shape == (n, k) and d.min() >= 0 and d.max() < size
    assert all(len(set(r)) == k for r in d.tolist())
    for slot in range(k):
        counts = np.bincount(d[:, slot], minlength=size)
        assert counts.min() > 0, f"slot {slot} never draws symbol {counts.argmin()}"
        chi2 = float(((counts - n / size) ** 2 / (n / size)).sum())
        df = size - 1
        assert chi2 < df * (1 - 2 / (9 * df) + 5 * math.sqrt(2 / (9 * df))) ** 3, chi2
    if size == 5:  # every ordered k-tuple of distinct symbols occurs (5 * 4 * 3 = 60 of them)
        assert len({tuple(r) for r in d.tolist()}) == math.perm(size, k)


def test_same_config_same_batch():
    a = task_(preset="variable_binding").sample(np.random.default_rng(3), 100)
    b = task_(preset="variable_binding").sample(np.random.default_rng(3), 100)
    assert (a.tokens == b.tokens).all() and (a.labels == b.labels).all()


def test_class_mask_is_the_split_alphabet_for_symbolic_labels_only():
    task = task_(preset="copy", length=2)
    for split in ("train", "val", "test"):
        mask = task.class_mask(split)
        assert mask.shape == (len(task.vocab),)
        assert set(mask.nonzero()[:, 0].tolist()) == set(task.symbol_ids[split].tolist())
    assert task_(preset="same_different").class_mask("train") is None


def test_restricted_loss_and_prediction_match_a_softmax_over_the_allowed_classes():
    import torch

    from reasonlab.tasks.base import Batch
    from reasonlab.train.metrics import predict, slot_loss

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 1, 9, generator=g, dtype=torch.float64)
    allowed = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1, 0], dtype=torch.bool)
    labels = torch.tensor([1, 2, 4, 7, 1, 2])[:, None]
    batch = Batch(tokens=torch.zeros(6, 2, dtype=torch.long), label_pos=torch.zeros(6, 1,
                  dtype=torch.long), labels=labels, loss_mask=torch.ones(6, 1, dtype=torch.bool))
    idx = allowed.nonzero()[:, 0].tolist()
    ref = -sum(float(logits[i, 0, y] - torch.logsumexp(logits[i, 0, idx], 0))
               for i, y in enumerate(labels[:, 0].tolist())) / 6
    assert abs(float(slot_loss(logits, batch, allowed)) - ref) < 1e-6  # slot_loss runs in fp32

    class Fixed(torch.nn.Module):
        def forward(self, tokens, label_pos, pad_mask=None):
            return logits[: len(tokens)]

    pred = predict(Fixed(), batch, 6, classes=allowed)[:, 0].tolist()
    assert pred == [max(idx, key=lambda c: float(logits[i, 0, c])) for i in range(6)]
