"""Head scores against values computed by hand on tiny hand-built attention patterns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reasonlab.analysis.attention import (attention_patterns, head_scores, plot_attention,
                                          plot_head_scores, reading_order, top_heads)
from reasonlab.model import ModelConfig, Transformer
from reasonlab.tasks.base import build_task

# Example 1: [CLS] a = a [SEP] as ids 1 5 3 5 2; special = (1, 2); window = 1.
TOK1 = [1, 5, 3, 5, 2]
HEAD0_EX1 = [[1, 0, 0, 0, 0],
             [.2, .1, .1, .6, 0],
             [0, .5, .5, 0, 0],
             [0, .3, 0, .5, .2],
             [.25, .25, .25, .25, 0]]
# Example 2: ids 1 5 5 2 then one padding position (its row and column are ignored).
TOK2 = [1, 5, 5, 2, 0]
HEAD0_EX2 = [[0, .5, .5, 0, 0],
             [0, 0, 1, 0, 0],
             [.5, .5, 0, 0, 0],
             [0, 0, 0, 1, 0],
             [0, 0, 0, 0, 1]]


def patterns(rows_per_example):
    """[layers=1, batch, heads=2, T, T]: head 0 as given, head 1 the identity."""
    eye = torch.eye(5)
    return torch.stack([torch.stack([torch.tensor(r, dtype=torch.float32), eye])
                        for r in rows_per_example])[None]


def test_scores_single_example_by_hand():
    s = head_scores(patterns([HEAD0_EX1]), torch.tensor([TOK1]), special=(1, 2), window=1)
    # association: queries 1 and 3 (token 5 occurs twice): row1[3] = .6, row3[1] = .3
    assert s["association"][0, 0].item() == pytest.approx(0.45)
    # manipulation, |q-k| = 1 (own position left out): rows give 0, .3, .5, .2, .25
    assert s["manipulation"][0, 0].item() == pytest.approx(1.25 / 5)
    # broadcast, keys 0 and 4: rows give 1, .2, 0, .2, .25
    assert s["broadcast"][0, 0].item() == pytest.approx(1.65 / 5)
    # identity head: never another occurrence nor a neighbour; 2 of 5 queries are special
    assert s["association"][0, 1].item() == 0
    assert s["manipulation"][0, 1].item() == 0
    assert s["broadcast"][0, 1].item() == pytest.approx(0.4)


def test_scores_pool_queries_over_batch_and_ignore_padding():
    tokens = torch.tensor([TOK1, TOK2])
    pad = tokens != 0
    pad[0] = True
    s = head_scores(patterns([HEAD0_EX1, HEAD0_EX2]), tokens, pad, special=(1, 2), window=1)
    # ex2: association row1[2] = 1, row2[1] = .5; manipulation .5, 1, .5, 0 (its neighbour 4 is
    # padding); broadcast 0, 0, .5, 1
    assert s["association"][0, 0].item() == pytest.approx((0.6 + 0.3 + 1 + 0.5) / 4)
    assert s["manipulation"][0, 0].item() == pytest.approx((1.25 + 2) / 9)
    assert s["broadcast"][0, 0].item() == pytest.approx((1.65 + 1.5) / 9)
    assert top_heads(s["broadcast"], 1) == [(0, 1, pytest.approx(4 / 9))]


def test_patterns_from_hooks_and_plots(tmp_path):
    cfg = ModelConfig.build(dict(vocab_size=7, n_classes=2, max_seq_len=8, d_model=16,
                                 n_heads=2, d_mlp=16, n_layers=2, init_std=0.5))
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    tokens = torch.tensor([[1, 3, 4, 3, 2, 0], [1, 5, 5, 6, 2, 0]])
    pad = tokens != 0
    p = attention_patterns(model, tokens, pad)  # [2, 2, 2, 6, 6]
    assert p.shape == (2, 2, 2, 6, 6)
    torch.testing.assert_close(p.sum(-1), torch.ones(2, 2, 2, 6))
    assert p[:, :, :, :5, 5].abs().max() == 0  # no real query attends to the padding key
    s = head_scores(p, tokens, pad, special=(1, 2))
    assert all(((v >= 0) & (v <= 1)).all() for v in s.values())
    plot_attention(p[:, 0], [str(t) for t in tokens[0].tolist()], tmp_path / "a.png", scores=s)
    plot_head_scores(s, tmp_path / "s.png")
    assert (tmp_path / "a.png").stat().st_size > 1000 and (tmp_path / "s.png").exists()


def test_reading_order_puts_lego_clauses_in_chain_order():
    task = build_task({"name": "lego", "n_clauses": 6, "n_train_vars": 6})
    batch = task.sample(np.random.default_rng(0), 5)
    for i in range(5):
        order = reading_order(task.seq_len, batch.label_pos[i].tolist(), 5)
        assert sorted(order) == list(range(task.seq_len))
        toks = batch.tokens[i, order]
        clauses = toks[1:-1].view(6, 5)  # [clause, (var = op arg ,)] in chain order
        assert torch.equal(clauses[1:, 3], clauses[:-1, 0])  # each arg is the previous var
        assert toks[0] == task.vocab.id("[CLS]") and toks[-1] == task.vocab.id("[SEP]")
