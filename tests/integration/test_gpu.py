"""On a user's own GPU: `pytest -m gpu` (skipped where torch sees no CUDA device). The checks
of scripts/gpu-check as tests, at small sizes: strict determinism (a rerun and a killed and
resumed run, bitwise), training steps that never wait for the host, bf16 against fp32, the
CUDA-only savings computing what they replace (frozen weights in bf16, SDPA's is_causal and
enable_gqa), the LSTMs under CUDA autocast, analyses on the GPU, and a smoke study."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parents[2]


def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lego(**over: Any):
    from reasonlab.train.config import TrainConfig

    base = gpu_check().tiny(device="cuda", steps=60, eval_every=10, ckpt_every=20)
    return TrainConfig.build({**base, **over})


class Killed(Exception):
    pass


def test_strict_runs_are_bitwise_reruns_and_resumes(tmp_path, monkeypatch):
    """Dropout and SDPA's backward (deterministic only with warn_only=False), bf16 autocast,
    fused AdamW: a rerun and a run killed after a checkpoint and resumed equal the first,
    bit for bit."""
    from reasonlab.runs import execute, run_dir_for
    from reasonlab.train import loop

    g = gpu_check()
    cfg = lego()
    for root in ("a", "b"):
        execute(cfg, tmp_path / root, quiet=True)
    real, calls = loop.train_step, {"n": 0}

    def dying(*a: Any) -> torch.Tensor:
        calls["n"] += 1
        if calls["n"] == 30:
            raise Killed
        return real(*a)

    monkeypatch.setattr(loop, "train_step", dying)
    with pytest.raises(Killed):
        execute(cfg, tmp_path / "resumed", quiet=True)
    monkeypatch.setattr(loop, "train_step", real)
    execute(cfg, tmp_path / "resumed", quiet=True)
    a = run_dir_for(cfg, tmp_path / "a")
    assert g.compare_runs(a, run_dir_for(cfg, tmp_path / "b"))["bitwise"]
    assert g.compare_runs(a, run_dir_for(cfg, tmp_path / "resumed"))["bitwise"]
    data = json.loads((a / "run.json").read_text())
    assert data["device"] == "cuda" and data["deterministic"] == "strict" and data["gpu"]


@pytest.mark.parametrize("family", ["lego BERT-base", "fpt GPT-2 shape"])
def test_training_steps_never_wait_for_the_host(family):
    """torch.cuda.set_sync_debug_mode("error") around sync-free steps: no sync (the batch is
    sliced on the device, the loss masks by ignore_index)."""
    g = gpu_check()
    s = g.Stepper(g.family_config(family, "cuda", quick=True))
    s.steps(2)
    assert g.sync_free(s, 3) == {"checked": True, "no_sync": True, "error": None}


def test_bf16_and_tf32_agree_with_fp32():
    r = gpu_check().precision("cuda", quick=True)
    for p in ("tf32", "bf16"):
        assert r[p]["grad_cosine"] > 0.99, r
        assert r[p]["logits_rel_diff"] < 0.05, r
        assert r[p]["trajectory_max_abs_loss_diff"] < 0.05, r


def test_frozen_matrices_in_bf16_compute_what_cuda_autocast_computes():
    from reasonlab.train.device import cast_frozen_matrices
    from reasonlab.train.loop import build_model, make_data
    from reasonlab.train.metrics import model_inputs, slot_loss

    cfg = gpu_check().family_config("fpt GPT-2 shape", "cuda", quick=True)
    outs = []
    for cast in (False, True):
        model = build_model(cfg, device="cuda").eval()
        if cast:
            assert cast_frozen_matrices(model) > 0
        batch = make_data(cfg)[0][:4].to("cuda")
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(batch.tokens, batch.label_pos, batch.pad_mask, **model_inputs(batch))
        slot_loss(logits, batch).backward()
        outs.append((logits, [p.grad for p in model.parameters() if p.requires_grad]))
    assert torch.equal(outs[0][0], outs[1][0])
    assert all(torch.equal(a, b) for a, b in zip(outs[0][1], outs[1][1], strict=True))


def test_sdpas_cuda_shortcuts_compute_the_masked_attention(monkeypatch):
    from reasonlab.model import MODELS, ModelConfig, attention

    cfg = ModelConfig.build({"d_model": 96, "n_layers": 2, "n_heads": 6, "n_kv_heads": 2,
                             "d_mlp": 128, "positions": "rotary", "norm_position": "pre",
                             "causal": True, "vocab_size": 11, "n_classes": 11,
                             "max_seq_len": 16, "attn_bias": False})
    model = MODELS["transformer"](cfg).cuda().eval()
    tokens = torch.randint(0, 11, (4, 16), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        fast = model(tokens).float()
        monkeypatch.setattr(attention, "cuda_shortcut", lambda x: False)
        plain = model(tokens).float()
    torch.testing.assert_close(fast, plain, atol=3e-2, rtol=3e-2)


@pytest.mark.parametrize("arch", ["lnlstm"])
def test_the_lstm_trains_under_cuda_autocast(arch):
    from reasonlab.model import MODELS, ModelConfig

    cfg = ModelConfig.build({"arch": arch, "d_model": 32, "n_layers": 2, "vocab_size": 5,
                             "n_classes": 3, "max_seq_len": 12, "d_input": 4})
    model = MODELS[arch](cfg).cuda()
    feats = torch.randn(3, 12, 4, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(torch.ones(3, 12, dtype=torch.long, device="cuda"),
                    torch.full((3, 1), 11, device="cuda"), features=feats)
    out.float().sum().backward()
    assert all(p.grad is not None and p.grad.isfinite().all() for p in model.parameters())


def test_analyses_run_on_the_gpu_and_answer_on_the_host(tmp_path):
    from reasonlab.analysis.attention import attention_patterns
    from reasonlab.analysis.probes import slot_features
    from reasonlab.runs import execute, load_run_model, run_dir_for
    from reasonlab.tasks.base import build_task

    cfg = lego(steps=4, eval_every=2, ckpt_every=2)
    execute(cfg, tmp_path, quiet=True)
    _, model = load_run_model(run_dir_for(cfg, tmp_path), device="run")
    assert next(model.parameters()).device.type == "cuda"
    batch = build_task(cfg.task).sample(np.random.default_rng(0), 16)
    assert slot_features(model, batch, 8).device.type == "cpu"
    assert attention_patterns(model, batch.tokens, batch.pad_mask, batch_size=8
                              ).device.type == "cpu"


def test_a_smoke_study_on_cuda(tmp_path):
    from reasonlab.studies import run_study

    report, _ = run_study("lego-extrapolation", "smoke", out=tmp_path, workers=1, quiet=True,
                          overrides={"device": "cuda"})
    assert report.verdicts
