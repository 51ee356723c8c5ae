"""FPT bit tasks (docs/papers.md §4): bit memory and bit XOR against the paper's definitions
and against references computed here from the raw features."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reasonlab.errors import ConfigError, ParseError
from reasonlab.tasks.base import build_task
from reasonlab.train.metrics import accuracy_by

SMALL_MEMORY = {"name": "bit_memory", "n_bits": 40, "patch": 8}


def query_pattern(features: np.ndarray, n_patterns: int) -> np.ndarray:
    """Reference recall, written from the definition: the stored pattern agreeing with every
    visible (non-zero) query bit. features [T, patch] -> the pattern [N] (+-1)."""
    strings = features.reshape(n_patterns + 1, -1)
    query, stored = strings[-1], strings[:-1]
    visible = query != 0
    fits = [k for k in range(n_patterns) if (stored[k][visible] == query[visible]).all()]
    assert len(fits) >= 1
    return stored[fits[0]]


def test_bit_memory_matches_the_papers_definition():
    # "Input: concatenation of 5 bitstrings of length 1000 split into 20 tokens of dimension 50
    # each; a 6th bitstring which is created by taking a random one of the previous 5 and
    # randomly masking 50% of the bits. Output: recreation of the masked bitstring"
    # (FPT, section "Evaluation tasks - 1. Bit memory")
    task = build_task({"name": "bit_memory"})
    assert (task.seq_len, task.d_input, task.outputs_per_token, task.n_classes) == (120, 50, 50, 2)
    b = task.sample(np.random.default_rng(0), 16)
    x = b.features.numpy()
    assert x.shape == (16, 120, 50) and x.dtype == np.float32
    assert (b.tokens == 1).all() and b.pad_mask is None
    strings = x.reshape(16, 6, 1000)  # 5 stored patterns + the query, 20 tokens each
    assert set(np.unique(strings[:, :5])) == {-1.0, 1.0}
    assert set(np.unique(strings[:, 5])) == {-1.0, 0.0, 1.0}
    masked = strings[:, 5] == 0
    assert abs(masked.mean() - 0.5) < 0.02  # 16000 bits, sd 0.004
    for i in range(16):
        target = query_pattern(x[i], 5)
        assert any((target == strings[i, k]).all() for k in range(5))  # one of the previous 5
        assert ((b.labels[i].numpy() * 2 - 1) == target).all()  # output: the whole pattern
    # slot j reads output j % 50 of query token 100 + j // 50
    j = np.arange(1000)
    assert (b.label_pos.numpy() == 100 + j // 50).all()
    assert (b.label_sub.numpy() == j % 50).all()
    assert (b.meta["masked"].numpy() == masked).all()
    # the slots address the query bits: features at (label_pos, label_sub) = the query
    q = x[np.arange(16)[:, None], b.label_pos.numpy(), b.label_sub.numpy()]
    assert (q == strings[:, 5]).all()


def test_copying_visible_bits_scores_75_percent_on_all_bits_and_chance_on_masked():
    task = build_task({"name": "bit_memory", "n_bits": 200, "patch": 20})
    b = task.sample(np.random.default_rng(1), 200)
    query = b.features.numpy().reshape(200, 6, 200)[:, 5]
    guess = np.where(query == 0, 1, query)  # copy the visible bits, say +1 where masked
    right = guess == (b.labels.numpy() * 2 - 1)
    masked = b.meta["masked"].numpy().astype(bool)
    assert abs(right.mean() - 0.75) < 0.01
    assert right[~masked].all() and abs(right[masked].mean() - 0.5) < 0.02
    # what evaluate() reports as acc_by_masked: [visible bits, masked bits]
    visible_acc, masked_acc = accuracy_by(torch.from_numpy(right), b.meta["masked"])
    assert visible_acc == 1.0 and masked_acc == pytest.approx(right[masked].mean())


def test_bit_memory_solver_agrees_with_labels_and_text_is_readable():
    task = build_task(SMALL_MEMORY)
    b = task.sample(np.random.default_rng(2), 300)
    for i in range(len(b)):
        text = task.render(b, i)
        assert text.count("|") == 5 and text.split(" | ")[-1].startswith("Q: ")
        assert task.solve(text) == task.example_json(b, i)["labels"]
    with pytest.raises(ParseError):
        task.solve("1: +- | 2: ++ | Q: +?")  # two different patterns fit: not determined
    assert task.solve("1: +- | 2: +- | Q: +?") == {"bits": "+-"}  # equal ones agree


def test_bit_memory_p_mask_and_config_errors():
    b = build_task({**SMALL_MEMORY, "p_mask": 0.0}).sample(np.random.default_rng(3), 50)
    assert int(b.meta["masked"].sum()) == 0
    with pytest.raises(ConfigError, match="multiple of patch"):
        build_task({"name": "bit_memory", "n_bits": 30, "patch": 8})


def test_bit_memory_splits_are_distinct_and_reproducible():
    task = build_task(SMALL_MEMORY)
    tr, te = task.splits(np.random.default_rng(4), 30, 10)
    tr2, te2 = task.splits(np.random.default_rng(4), 30, 10)
    assert torch.equal(tr.features, tr2.features) and torch.equal(te.labels, te2.labels)
    rows = {r.tobytes() for r in torch.cat([tr.features, te.features]).numpy()}
    assert len(rows) == 40
    assert tr.label_sub.shape == (30, 40) and te.meta["masked"].shape == (10, 40)


def test_bit_xor_matches_the_papers_definition():
    # "Input: concatenation of 2 bitstrings of length 5. Output: a bitstring of length 5 which
    # is the XOR of the 2 input bitstrings" (FPT, section "Evaluation tasks - 2. Bit XOR")
    task = build_task({"name": "bit_xor"})
    assert (task.seq_len, task.d_input, task.outputs_per_token, task.n_classes) == (10, 1, 1, 2)
    b = task.sample(np.random.default_rng(5), 500)
    x = b.features.numpy()
    assert x.shape == (500, 10, 1) and set(np.unique(x)) == {0.0, 1.0}  # one bit per token
    for i in range(500):
        a, c = [int(v) for v in x[i, :5, 0]], [int(v) for v in x[i, 5:, 0]]
        assert b.labels[i].tolist() == [(p + q) % 2 for p, q in zip(a, c)]
    assert (b.label_pos == torch.arange(5, 10)).all() and b.label_sub is None


def test_bit_xor_solver_and_text():
    task = build_task({"name": "bit_xor", "n_bits": 7})
    b = task.sample(np.random.default_rng(6), 100)
    for i in range(100):
        assert task.solve(task.render(b, i)) == task.example_json(b, i)["labels"]
    assert task.solve("01101 | 11000") == {"xor": "10101"}
    with pytest.raises(ParseError):
        task.solve("0110 | 1")


def test_bit_xor_held_out_split_partitions_inputs_and_fresh_overlaps():
    task = build_task({"name": "bit_xor"})
    tr, te = task.splits(np.random.default_rng(7), 768, 256)
    key = lambda b: {r.tobytes() for r in b.features.numpy()}  # noqa: E731
    assert len(key(tr)) == 768 and len(key(te)) == 256 and not key(tr) & key(te)
    with pytest.raises(ConfigError, match="1024 distinct inputs"):
        task.splits(np.random.default_rng(7), 1000, 100)
    fresh = build_task({"name": "bit_xor", "test_inputs": "fresh"})
    tr, te = fresh.splits(np.random.default_rng(7), 1000, 100)
    assert key(tr) & key(te)  # the authors' i.i.d. test batches repeat training inputs


def test_distinct_splits_drop_repeated_examples():
    from reasonlab.tasks.patches import distinct_splits, feature_batch

    rng = np.random.default_rng(8)

    def draw(k):  # 3 bits: only 8 different examples exist
        return feature_batch(rng.integers(0, 2, (k, 3, 1)), label_pos=np.zeros((k, 1)),
                             labels=np.zeros((k, 1)))

    tr, te = distinct_splits(draw, 5, 3, "toy")
    rows = [r.tobytes() for r in torch.cat([tr.features, te.features]).numpy()]
    assert len(tr) == 5 and len(te) == 3 and len(set(rows)) == 8
    with pytest.raises(ConfigError, match="could not draw 9 distinct"):
        distinct_splits(draw, 5, 4, "toy")


def test_attention_targets_point_at_the_bits_an_output_needs():
    """Bit memory: the query's patch j needs patch j of every stored pattern -- among them the
    recalled pattern's, whose bits agree with every visible bit of that query token (checked
    from the raw features); bit XOR: output token 5 + j needs bits j and 5 + j (the authors'
    demo notebook), the first string's tokens nothing."""
    task = build_task(SMALL_MEMORY)
    batch = task.sample(np.random.default_rng(0), 8)
    need = task.attention_targets(batch)  # [8, 30, 30]
    P, first = 5, 25  # 40 bits / patch 8; 5 patterns
    assert need.shape == (8, 30, 30) and not need[:, :first].any()
    for b in range(8):
        x = batch.features[b].numpy()  # [30, 8]
        pattern = query_pattern(x, 5).reshape(P, 8)  # the recalled pattern's patches
        for q in range(first, 30):
            keys = need[b, q].nonzero().flatten().tolist()
            assert keys == [k * P + (q - first) for k in range(5)]
            visible = x[q] != 0
            assert (pattern[q - first][visible] == x[q][visible]).all()
            assert any((x[k] == pattern[q - first]).all() for k in keys)
    xor = build_task({"name": "bit_xor"})
    need = xor.attention_targets(xor.sample(np.random.default_rng(0), 2))
    assert [need[0, q].nonzero().flatten().tolist() for q in range(10)] == \
        [[]] * 5 + [[j, 5 + j] for j in range(5)]
