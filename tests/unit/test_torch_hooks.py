"""Hook points are visible to PyTorch: `register_forward_hook` (local and global) and nnsight
see the activations our own hooks see, and with nothing attached the fused path still runs
(the speed of that path: benchmarks/bench_hooks.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from reasonlab.model import ModelConfig, Transformer, run_with_cache
from reasonlab.model.attention import SoftmaxAttention
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.init_stages import load_run_model
from reasonlab.runs import execute, run_dir_for

TASK = {"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2}


def model_and_batch():
    task = build_task(TASK)
    batch = task.sample(np.random.default_rng(0), 5)
    cfg = ModelConfig(vocab_size=len(task.vocab), n_classes=task.n_classes,
                      max_seq_len=task.seq_len, d_model=32, n_heads=2, d_mlp=64, n_layers=2)
    return Transformer(cfg, generator=torch.Generator().manual_seed(0)).eval(), batch


def test_register_forward_hook_on_hook_pattern_fires_with_the_pattern():
    model, batch = model_and_batch()
    _, cache = run_with_cache(model, batch.tokens, batch.label_pos,
                              names_filter="blocks.0.attn.hook_pattern")
    seen = []
    point = model.get_submodule("blocks.0.attn.hook_pattern")
    handle = point.register_forward_hook(lambda m, args, out: seen.append(out.detach()))
    model(batch.tokens, batch.label_pos)
    handle.remove()
    assert len(seen) == 1
    torch.testing.assert_close(seen[0], cache["blocks.0.attn.hook_pattern"])
    model(batch.tokens, batch.label_pos)
    assert len(seen) == 1  # removed: it fires no more


def test_a_forward_hook_returning_a_tensor_patches_the_activation():
    model, batch = model_and_batch()
    with torch.no_grad():
        clean = model(batch.tokens, batch.label_pos)
    point = model.get_submodule("blocks.1.hook_resid_pre")
    handle = point.register_forward_hook(lambda m, args, out: torch.zeros_like(out))
    with torch.no_grad():
        patched = model(batch.tokens, batch.label_pos)
    handle.remove()
    with torch.no_grad():  # the same as patching with our own hook
        with model.hooks([("blocks.1.hook_resid_pre", lambda x, h: torch.zeros_like(x))]):
            ours = model(batch.tokens, batch.label_pos)
    assert not torch.allclose(patched, clean)
    torch.testing.assert_close(patched, ours)


def test_a_global_module_hook_sees_every_hook_point():
    model, batch = model_and_batch()
    names = {m: n for n, m in model.named_modules()}
    seen: list[str] = []
    handle = nn.modules.module.register_module_forward_hook(
        lambda m, args, out: seen.append(names.get(m, "")))
    try:
        model(batch.tokens, batch.label_pos)
    finally:
        handle.remove()
    assert set(model.hook_points()) <= set(seen)


def test_with_no_hook_the_pattern_is_never_formed(monkeypatch):
    """No hook anywhere: the fused kernel runs and HookPoints return at once (the fast path);
    a PyTorch hook on the pattern makes the layer form it."""
    model, batch = model_and_batch()
    formed = []
    real = SoftmaxAttention.pattern
    monkeypatch.setattr(SoftmaxAttention, "pattern",
                        lambda self, s, m: formed.append(1) or real(self, s, m))
    model(batch.tokens, batch.label_pos)
    assert formed == []
    handle = model.blocks[0].attn.hook_pattern.register_forward_hook(lambda *a: None)
    model(batch.tokens, batch.label_pos)
    handle.remove()
    assert formed == [1]


def test_nnsight_reads_hook_pattern_of_a_trained_run(tmp_path):
    nnsight = pytest.importorskip("nnsight", reason="nnsight not installed (dev extra)")
    config = TrainConfig.build({"task": TASK, "model": {"d_model": 16, "n_layers": 2,
                                                        "n_heads": 2, "d_mlp": 32},
                                "steps": 4, "eval_every": 2, "ckpt_every": 2, "n_train": 64,
                                "n_test": 16, "batch_size": 8})
    execute(config, tmp_path, quiet=True)
    _, model = load_run_model(run_dir_for(config, tmp_path))
    batch = build_task(config.task).sample(np.random.default_rng(1), 4)
    _, cache = run_with_cache(model, batch.tokens, batch.label_pos,
                              names_filter="blocks.1.attn.hook_pattern")
    wrapped = nnsight.NNsight(model)
    with wrapped.trace(batch.tokens, batch.label_pos):
        pattern = wrapped.blocks[1].attn.hook_pattern.output.save()
    pattern = getattr(pattern, "value", pattern)
    torch.testing.assert_close(pattern.detach(), cache["blocks.1.attn.hook_pattern"])
