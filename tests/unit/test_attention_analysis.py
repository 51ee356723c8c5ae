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


# -- the paper's association head vs position (issue 18) ------------------------------------


def lego_batch(n=32, n_clauses=12):
    task = build_task({"name": "lego", "n_clauses": n_clauses, "n_train_vars": 6})
    batch = task.sample(np.random.default_rng(1), n)
    variables = [task.vocab.id(v) for v in task.var_names]
    return task, batch, variables


def naive_mass(pattern, tokens, queries):
    """Reference: mean over the chosen queries of the mass on other same-token keys (loops)."""
    total, n = 0.0, 0
    for b in range(tokens.shape[0]):
        toks = tokens[b].tolist()
        for q, t in enumerate(toks):
            if not queries(t) or toks.count(t) < 2:
                continue
            total += sum(float(pattern[b, q, k]) for k, u in enumerate(toks) if u == t and k != q)
            n += 1
    return total / n


def mod_head(T, span):
    """Naive 'same position mod span' head: uniform over the other positions p' = p (mod span)."""
    p = torch.zeros(T, T)
    for q in range(T):
        keys = [k for k in range(T) if k != q and (k - q) % span == 0]
        for k in keys:
            p[q, k] = 1 / len(keys)
    return p


def test_positional_head_scores_half_on_any_token_but_zero_on_variables():
    task, batch, variables = lego_batch()
    B, T = batch.tokens.shape
    blind = mod_head(T, 5).expand(B, T, T)
    pattern = blind[None, :, None]  # [1, B, 1, T, T]
    s = head_scores(pattern, batch.tokens, variables=variables)
    old = naive_mass(blind, batch.tokens, lambda t: True)
    assert s["association"][0, 0].item() == pytest.approx(old, abs=1e-6)
    assert 0.45 < old < 0.55  # the old score rates a content-blind head ~0.50
    assert s["association_variable"][0, 0].item() == 0.0  # never the same variable
    from reasonlab.analysis.attention import association_controls, positional_head

    torch.testing.assert_close(positional_head(torch.ones(B, T, dtype=torch.bool), 5), pattern)
    c = association_controls(pattern, batch.tokens, variables, span=5)
    assert c["positional head, any token"].item() == pytest.approx(old, abs=1e-6)
    # under the new rule it does not pass: its variable score does not beat the controls
    assert c["variables"][0, 0] <= max(c["positional head"].item(),
                                       c["variables, permuted"][0, 0].item())


def test_perfect_variable_head_passes_and_a_non_variable_head_does_not():
    task, batch, variables = lego_batch()
    B, T = batch.tokens.shape
    var_head = torch.zeros(B, T, T)
    other_head = torch.zeros(B, T, T)
    for b in range(B):
        toks = batch.tokens[b].tolist()
        for q, t in enumerate(toks):
            others = [k for k, u in enumerate(toks) if u == t and k != q]
            if t in variables and others:  # the other occurrence of the same variable
                var_head[b, q, others] = 1 / len(others)
            else:
                var_head[b, q, q] = 1.0
            if t not in variables and others:  # `=`, `,`, ops: their other occurrences
                other_head[b, q, others] = 1 / len(others)
            else:
                other_head[b, q, q] = 1.0
    pattern = torch.stack([var_head, other_head], 1)[None]  # [1, B, 2, T, T]
    s = head_scores(pattern, batch.tokens, variables=variables)
    is_var = lambda t: t in variables  # noqa: E731
    assert s["association_variable"][0, 0].item() == pytest.approx(1.0)
    assert s["association_variable"][0, 1].item() == 0.0
    # the old score ranks them the other way round (issue 18: ~0.38 vs ~0.62)
    assert s["association"][0, 0].item() == pytest.approx(naive_mass(var_head, batch.tokens,
                                                                       lambda t: True))
    assert s["association"][0, 0] < 0.45 < 0.55 < s["association"][0, 1]
    assert naive_mass(var_head, batch.tokens, is_var) == pytest.approx(1.0)
    from reasonlab.analysis.attention import association_controls

    c = association_controls(pattern, batch.tokens, variables, span=5)
    assert c["positional head"].item() == 0.0
    # content broken by permuting clauses: the perfect head keeps only chance-level mass
    assert c["variables, permuted"][0, 0] < 0.2
    assert c["variables"][0, 0] - max(c["positional head"].item(),
                                      c["variables, permuted"][0, 0].item()) > 0.8


def test_permute_clauses_moves_whole_clauses_and_keeps_padding():
    from reasonlab.analysis.attention import permute_clauses

    task = build_task({"name": "lego", "n_clauses": 6, "n_train_vars": 2, "min_clauses": 3})
    batch = task.sample(np.random.default_rng(0), 20)
    out = permute_clauses(batch.tokens, batch.pad_mask, 5, 1, np.random.default_rng(0))
    for b in range(20):
        n = (int(batch.pad_mask[b].sum()) - 2) // 5
        before = batch.tokens[b, 1 : 1 + 5 * n].view(n, 5).tolist()
        after = out[b, 1 : 1 + 5 * n].view(n, 5).tolist()
        assert sorted(before) == sorted(after)
        assert torch.equal(out[b, 1 + 5 * n :], batch.tokens[b, 1 + 5 * n :])  # [SEP], pads
        assert out[b, 0] == batch.tokens[b, 0]


def test_manipulation_with_self_scores_a_perfect_kernel_mimic_one():
    T = 10
    kernel = [1, 2, 4, 2, 1]
    p = torch.zeros(T, T)
    for q in range(T):
        for o, w in zip(range(-2, 3), kernel):
            if 0 <= q + o < T:
                p[q, q + o] = w
    p = p / p.sum(-1, keepdim=True)
    s = head_scores(p[None, None, None], torch.arange(T)[None], window=2)
    assert s["manipulation_self"][0, 0].item() == pytest.approx(1.0)
    # without self: edge rows 3/7 and 5/9, interior rows (2 + 2 + 1 + 1) / 10
    assert s["manipulation"][0, 0].item() == pytest.approx((2 * 3 / 7 + 2 * 5 / 9 + 6 * 0.6) / T)
