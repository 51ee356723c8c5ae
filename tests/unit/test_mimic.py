"""Mimicking initialisation: targets by hand, the loss floor, and the loss falling to it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.model import ModelConfig, Transformer
from reasonlab.train.mimic import (MIMIC_TARGETS, MimicConfig, batch_loss, loss_floor, mimic,
                                   mimic_loss, normalised, special_ids)
from reasonlab.tasks.base import build_task


def test_targets_by_hand():
    cfg = MimicConfig(kernel=[1, 2, 4, 2, 1])
    tok = torch.tensor([[1, 5, 3, 5, 2]])
    assoc = MIMIC_TARGETS["association"](tok, cfg, (1, 2))[0]
    want = torch.zeros(5, 5)
    want[1, 3] = want[3, 1] = 1
    assert torch.equal(assoc, want)
    manip = MIMIC_TARGETS["manipulation"](tok, cfg, (1, 2))[0]
    assert manip[0].tolist() == [4, 2, 1, 0, 0] and manip[2].tolist() == [1, 2, 4, 2, 1]
    assert manip[4].tolist() == [0, 0, 1, 2, 4]
    bc = MIMIC_TARGETS["broadcast"](tok, cfg, (1, 2))[0]
    assert bc[3].tolist() == [1, 0, 0, 0, 1]
    # +eps then row-normalised; padding keys get nothing
    valid = torch.tensor([[True, True, True, True, False]])
    q = normalised(assoc[None, None], valid, 1e-3)[0, 0]
    off = 1e-3 / 1.004  # row 1: one hit (key 3) + eps on 4 valid keys, sum 1.004
    assert q[1].tolist() == pytest.approx([off, off, off, 1.001 / 1.004, 0])


def test_loss_is_kl_and_floor_matches_brute_force():
    task = build_task({"name": "lego", "n_clauses": 3, "n_train_vars": 2, "n_vars": 5})
    b = task.sample(np.random.default_rng(0), 16)
    valid = torch.ones_like(b.tokens, dtype=torch.bool)
    t = normalised(MIMIC_TARGETS["manipulation"](b.tokens, MimicConfig(), ())[:, None], valid,
                   1e-3)  # [B, 1, T, T]
    # the loss of the target itself: KL(rownorm(q + eps) || q), computed here directly
    qs = (t + 1e-3) / (t + 1e-3).sum(-1, keepdim=True)
    assert mimic_loss([t], t, [0], valid, 1e-3).item() == pytest.approx(
        (qs * (qs / t).log()).sum(-1).mean().item(), rel=1e-5)
    z = torch.zeros_like(t, requires_grad=True)  # free logits: the best any attention can do
    opt = torch.optim.Adam([z], lr=0.1)
    for _ in range(1500):
        loss = mimic_loss([z.softmax(-1)], t, [0], valid, 1e-3)
        opt.zero_grad()
        loss.backward()
        opt.step()
    floor = loss_floor(t, valid, 1e-3).item()
    assert floor <= loss.item() + 1e-6 and loss.item() == pytest.approx(floor, abs=2e-3)
    assert floor > 0.01  # the authors' eps leaves a visible floor for a kernel summing to 10


def test_mimicking_loss_falls_to_the_floor():
    task = build_task({"name": "lego", "n_clauses": 4, "n_train_vars": 2, "n_vars": 6})
    cfg = ModelConfig.build(dict(vocab_size=len(task.vocab), n_classes=2,
                                 max_seq_len=task.seq_len, d_model=64, n_heads=2, d_head=64,
                                 d_mlp=64, n_layers=1))
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    mc = MimicConfig(steps=400, batch_size=32, lr=1e-2)
    held_out = task.sample(np.random.default_rng(1), 128)
    special = special_ids(task.vocab.tokens)
    with torch.no_grad():
        start, floor = batch_loss(model, held_out, mc, special)
    losses = mimic(model, task, mc, np.random.default_rng(0))
    with torch.no_grad():
        end, _ = batch_loss(model, held_out, mc, special)
    print(f"held-out mimic loss {start:.3f} -> {end:.4f}; floor {floor:.4f}")
    assert start > 1.0
    assert end - floor < 0.02 * (start - floor)  # 98% of the reducible loss is gone
    # same seed, same weights (deterministic); the cosine schedule makes a 5-step run's lr
    # differ from the 400-step run's after its first update, so only 2 losses are shared
    again = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    assert mimic(again, task, mc.replace(steps=5), np.random.default_rng(0))[:2] == losses[:2]
    again = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    const = mc.replace(schedule="constant")
    first = mimic(again, task, const.replace(steps=5), np.random.default_rng(0))
    again = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    assert mimic(again, task, const.replace(steps=3), np.random.default_rng(0)) == first[:3]


def test_bad_heads_and_targets_are_config_errors():
    with pytest.raises(ConfigError, match="unknown mimic target"):
        MimicConfig.build({"heads": {"0": "nonsense"}})
    task = build_task({"name": "lego", "n_clauses": 3, "n_train_vars": 2})
    cfg = ModelConfig.build(dict(vocab_size=len(task.vocab), n_classes=2,
                                 max_seq_len=task.seq_len, d_model=16, n_heads=2, d_mlp=16,
                                 n_layers=1))
    with pytest.raises(ConfigError, match="do not exist"):
        mimic(Transformer(cfg), task, MimicConfig(heads={5: "association"}, steps=1),
              np.random.default_rng(0))


def test_mimic_reads_every_mimicked_layer_or_fails():
    """The loss sums over every mimicked layer: a model without attention patterns is a user
    error, and an attention that never calls hook_pattern_dropped fails loudly rather than
    silently dropping its layer from the loss."""
    from reasonlab.model import MODELS
    from reasonlab.model.attention import AttentionHooks

    lego = build_task({"name": "lego", "n_clauses": 3, "n_train_vars": 2})
    mlp = ModelConfig.build(dict(vocab_size=len(lego.vocab), n_classes=2,
                                 max_seq_len=lego.seq_len, arch="mlp_baseline", d_model=8,
                                 d_mlp=8))
    with pytest.raises(ConfigError, match="mimic reads attention patterns"):
        mimic(MODELS["mlp_baseline"](mlp), lego, MimicConfig(steps=1), np.random.default_rng(0))

    cfg = ModelConfig.build(dict(vocab_size=len(lego.vocab), n_classes=2,
                                 max_seq_len=lego.seq_len, d_model=16, n_heads=2, d_mlp=16,
                                 n_layers=2))
    model = Transformer(cfg)
    b = lego.sample(np.random.default_rng(0), 4)
    special = special_ids(lego.vocab.tokens)
    batch_loss(model, b, MimicConfig(), special)  # both layers report
    attn = model.layers[1].attn
    real = attn.forward
    attn.forward = lambda x, mask, hooks, *rest: real(x, mask, AttentionHooks(), *rest)  # hooks bypassed
    with pytest.raises(RuntimeError,
                       match=r"\['blocks.1.attn.hook_pattern_dropped'\] never fired"):
        batch_loss(model, b, MimicConfig(), special)


def test_train_config_mimic_initialises_the_model():
    from reasonlab.runs import config_id
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.loop import build_model

    base = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
            "model": {"d_model": 16, "n_layers": 2, "n_heads": 2, "d_mlp": 16}}
    plain = TrainConfig.build(base)
    cfg = TrainConfig.build({**base, "mimic": {"steps": 40, "batch_size": 16, "lr": 1e-2}})
    assert "mimic" not in plain.model_dump() and config_id(plain) != config_id(cfg)
    task = build_task(cfg.task)
    held_out = task.sample(np.random.default_rng(7), 64)
    special = special_ids(task.vocab.tokens)
    with torch.no_grad():
        before, _ = batch_loss(build_model(plain), held_out, cfg.mimic, special)
        after, _ = batch_loss(build_model(cfg), held_out, cfg.mimic, special)
    assert after < 0.5 * before  # same init seed, then 40 mimicking steps (cosine lr)
    assert torch.equal(build_model(cfg).W_E, build_model(cfg).W_E)  # deterministic


def naive_kl_sum(patterns, targets, heads, valid, eps):
    """Reference: one KL per (layer, head, sentence, real query row), in plain loops."""
    total = 0.0
    for p in patterns:
        for j, h in enumerate(heads):
            acc, n = 0.0, 0
            for b in range(p.shape[0]):
                keys = valid[b].nonzero().flatten().tolist()
                for q in keys:
                    row = [float(p[b, h, q, k]) + eps for k in keys]
                    z = sum(row)
                    acc += sum(r / z * np.log(r / z / float(targets[b, j, q, k]))
                               for r, k in zip(row, keys))
                    n += 1
            total += acc / n
    return total


def test_summed_kl_matches_a_naive_loop_and_mean_divides_by_layers_times_heads():
    task = build_task({"name": "lego", "n_clauses": 3, "n_train_vars": 2, "n_vars": 5,
                       "min_clauses": 2})
    b = task.sample(np.random.default_rng(0), 6)
    valid = b.pad_mask
    cfg = MimicConfig()
    raw = torch.stack([MIMIC_TARGETS[n](b.tokens, cfg, ()) for n in ("manipulation",
                                                                      "association")], 1)
    t = normalised(raw, valid, 1e-3).double()
    g = torch.Generator().manual_seed(0)
    T = b.tokens.shape[1]
    patterns = [torch.randn(6, 3, T, T, generator=g, dtype=torch.float64)
                .masked_fill(~valid[:, None, None, :], float("-inf")).softmax(-1)
                for _ in range(2)]  # 2 layers, 3 heads; heads 0 and 2 mimicked
    want = naive_kl_sum(patterns, t, [0, 2], valid, 1e-3)
    got = mimic_loss(patterns, t, [0, 2], valid, 1e-3, "sum")
    assert got.item() == pytest.approx(want, rel=1e-6)
    assert mimic_loss(patterns, t, [0, 2], valid, 1e-3, "mean").item() == pytest.approx(
        want / 4, rel=1e-6)


def test_mimicking_runs_in_train_mode_reading_attention_after_dropout_with_cosine_lr():
    from reasonlab.train.mimic import lr_at_step

    task = build_task({"name": "lego", "n_clauses": 3, "n_train_vars": 2})
    cfg = ModelConfig.build(dict(vocab_size=len(task.vocab), n_classes=2,
                                 max_seq_len=task.seq_len, d_model=16, n_heads=2, d_mlp=16,
                                 n_layers=2, dropout=0.5))
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    b = task.sample(np.random.default_rng(0), 4)
    special = special_ids(task.vocab.tokens)
    mc = MimicConfig(steps=4)
    assert (mc.mode, mc.schedule, mc.reduce) == ("train", "cosine", "sum")
    # train mode: the loss reads the post-dropout attention (rows no longer sum to 1), so it
    # changes from draw to draw; eval mode is deterministic
    model.train()
    torch.manual_seed(0)
    a, _ = batch_loss(model, b, mc, special)
    b_, _ = batch_loss(model, b, mc, special)
    assert a.item() != b_.item()
    model.eval()
    first, second = (batch_loss(model, b, mc, special)[0].item() for _ in range(2))
    assert first == second
    with torch.no_grad():  # eval mode: the loss is the KL of the plain pattern, summed
        from reasonlab.analysis.attention import attention_patterns

        p = attention_patterns(model, b.tokens)  # [L, B, H, T, T]
        valid = torch.ones_like(b.tokens, dtype=torch.bool)
        raw = torch.stack([MIMIC_TARGETS[mc.heads[h]](b.tokens, mc, special) for h in (0, 1)], 1)
        want = naive_kl_sum(list(p.double()), normalised(raw, valid, 1e-3).double(), [0, 1],
                            valid, 1e-3)
    assert batch_loss(model, b, mc, special)[0].item() == pytest.approx(want, rel=1e-5)
    # mimic() puts the model in train mode and gives back its mode; cosine from lr to 0
    seen = []
    model.eval()
    with model.hooks([("blocks.0.hook_resid_pre", lambda x, hook: seen.append(model.training))]):
        mimic(model, task, mc, np.random.default_rng(0))
    assert seen == [True] * 4 and not model.training
    assert [lr_at_step(mc, s) for s in range(4)] == pytest.approx(
        [5e-5 * 0.5 * (1 + np.cos(np.pi * s / 4)) for s in range(4)])
    assert lr_at_step(mc.replace(schedule="constant"), 3) == 5e-5
