"""Launch savings for GPUs that keep CPU bits: rotary tables cast once per dtype, frozen
linear weights stored in bf16 once for bf16 runs on CUDA, SDPA's is_causal / enable_gqa on
CUDA, and torch.compile's modes (CUDA graphs) as an opt-in that enters the run id."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from reasonlab.model import MODELS, ModelConfig
from reasonlab.model import attention
from reasonlab.model.attention import Rotary
from reasonlab.train.config import TrainConfig, config_id
from reasonlab.train.device import cast_frozen_matrices


def test_rotary_tables_are_cast_once_and_equal_the_per_call_cast():
    r = Rotary(8, 16, 10_000.0)
    x = torch.randn(2, 10, 3, 8)
    half = 4
    want = (x * r.cos[:10, None, :].to(x.dtype)
            + torch.cat([-x[..., half:], x[..., :half]], -1) * r.sin[:10, None, :].to(x.dtype))
    assert torch.equal(r(x), want)
    first = r.tables(10, torch.float32)
    assert r.tables(10, torch.float32)[0] is first[0]  # cached
    assert r.tables(10, torch.bfloat16)[0].dtype == torch.bfloat16  # one per dtype
    r64 = r.tables(10, torch.float64)[0]
    assert torch.equal(r64, r.cos[:10, None, :])  # float64 exact
    r.double()  # buffers replaced in place: the cache follows them
    assert torch.equal(r.tables(10, torch.float32)[0], first[0])


def test_rotary_tables_made_under_inference_mode_serve_training():
    r = Rotary(8, 16, 10_000.0)
    with torch.inference_mode():
        r(torch.randn(1, 5, 2, 8))
    x = torch.randn(1, 5, 2, 8, requires_grad=True)
    r(x).sum().backward()  # an inference tensor saved for backward would fail here
    assert x.grad is not None


def fpt_model() -> tuple[TrainConfig, torch.nn.Module]:
    from reasonlab.train.loop import build_model

    cfg = TrainConfig.build({"task": {"name": "bit_xor", "n_bits": 5},
                             "model": {"arch": "fpt", "d_model": 32, "n_layers": 2,
                                       "n_heads": 4, "d_mlp": 64, "positions": "rotary",
                                       "norm_position": "pre", "causal": True},
                             "trainable": "fpt", "n_train": 32, "n_test": 16,
                             "batch_size": 8})
    return cfg, build_model(cfg)


def test_frozen_matrices_in_bf16_compute_what_autocast_computes():
    """Under bf16 autocast (the CPU's here; CUDA's casts alike) a frozen linear weight stored
    in bf16 gives bitwise the logits and trained gradients of one cast at every call."""
    from reasonlab.train.loop import make_data
    from reasonlab.train.metrics import model_inputs, slot_loss

    cfg, a = fpt_model()
    _, b = fpt_model()
    assert cast_frozen_matrices(b) == sum(
        1 for m in b.modules() if isinstance(m, torch.nn.Linear)
        for p in (m.weight, m.bias) if p is not None and not p.requires_grad) > 0
    assert all(p.dtype == torch.float32 for p in b.parameters() if p.requires_grad)
    batch = make_data(cfg)[0][:8]
    outs = []
    for m in (a, b):
        m.eval()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = m(batch.tokens, batch.label_pos, batch.pad_mask, **model_inputs(batch))
        slot_loss(logits, batch).backward()
        outs.append((logits, {n: p.grad for n, p in m.named_parameters() if p.requires_grad}))
    assert torch.equal(outs[0][0], outs[1][0])
    assert all(torch.equal(outs[0][1][n], outs[1][1][n]) for n in outs[0][1])


def test_sdpas_shortcuts_compute_the_masked_attention():
    """is_causal and enable_gqa (CUDA's shortcuts) against the explicit causal mask and
    repeated key/value heads the CPU keeps."""
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, 6, 5, 4, generator=g)  # [batch, H, seq, d]
    k, v = torch.randn(2, 2, 5, 4, generator=g), torch.randn(2, 2, 5, 4, generator=g)
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    want = F.scaled_dot_product_attention(q, k.repeat_interleave(3, 1),
                                          v.repeat_interleave(3, 1), attn_mask=mask)
    got = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_the_model_with_cudas_shortcuts_is_the_model_without(monkeypatch, dtype):
    """A causal grouped-query model (SmolLM2's structure) with cuda_shortcut forced on: the
    same outputs (is_causal; enable_gqa in half precision), and its CPU path untouched."""
    cfg = ModelConfig.build({"d_model": 48, "n_layers": 2, "n_heads": 6, "n_kv_heads": 2,
                             "d_mlp": 64, "positions": "rotary", "norm_position": "pre",
                             "causal": True, "vocab_size": 11, "n_classes": 11,
                             "max_seq_len": 7, "attn_bias": False})
    model = MODELS["transformer"](cfg).to(dtype).eval()
    tokens = torch.randint(0, 11, (3, 7), generator=torch.Generator().manual_seed(1))
    want = model(tokens)
    calls = []
    real = F.scaled_dot_product_attention

    def spy(*a, **k):
        calls.append(k)
        return real(*a, **k)

    monkeypatch.setattr(attention.F, "scaled_dot_product_attention", spy)
    monkeypatch.setattr(attention, "cuda_shortcut", lambda x: True)
    got = model(tokens)
    assert calls and all(c.get("is_causal") for c in calls)
    assert all(c.get("enable_gqa", False) == (dtype == torch.float16) for c in calls)
    torch.testing.assert_close(got, want, atol=2e-3 if dtype == torch.float16 else 1e-6,
                               rtol=2e-3 if dtype == torch.float16 else 1e-6)


def test_the_cpu_takes_no_shortcut():
    assert not attention.cuda_shortcut(torch.zeros(1))


def test_compile_modes_are_opt_in_and_enter_the_id():
    base = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
            "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32}}
    plain = TrainConfig.build({**base, "compile": True})
    assert "compile_mode" not in plain.model_dump(mode="json")
    graphs = TrainConfig.build({**base, "compile": True, "compile_mode": "reduce-overhead"})
    assert config_id(graphs) != config_id(plain)
    assert config_id(TrainConfig.build({**base, "compile": True, "compile_mode": "default"})
                     ) == config_id(plain)
    from reasonlab.errors import ConfigError

    with pytest.raises(ConfigError, match="needs compile=true"):
        TrainConfig.build({**base, "compile_mode": "reduce-overhead"})
