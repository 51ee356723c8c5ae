"""The Transformer against naive references written here, independently of the model code.

The references loop over examples, layers and heads and read the raw parameter tensors
(fused qkv rows: [Q heads | K heads | V heads], each head d_head rows).
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

from reasonlab.errors import ConfigError
from reasonlab.model import ModelConfig, SoftmaxAttention, Transformer, run_with_cache
from reasonlab.model import attention as attention_module

VOCAB, CLASSES, SEQ = 11, 5, 9


def make(seed: int = 0, dtype: torch.dtype = torch.float64, **kw) -> Transformer:
    base = dict(
        vocab_size=VOCAB, n_classes=CLASSES, max_seq_len=SEQ + 3, d_model=16, n_heads=4,
        d_mlp=24, n_layers=3, init_std=0.3,  # a large init so that every layer matters
    )
    cfg = ModelConfig.build({**base, **kw})
    model = Transformer(cfg, generator=torch.Generator().manual_seed(seed)).eval()
    with torch.no_grad():  # non-trivial LayerNorm and bias parameters, so they are tested too
        for name, p in model.named_parameters():
            if name.endswith("bias") or ".ln" in name or name.startswith("ln"):
                g = torch.Generator().manual_seed(len(name))
                p.add_(0.1 * torch.randn(p.shape, generator=g))
    return model.to(dtype)


def tokens_(batch: int = 3, seq: int = SEQ, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


def right_pad_mask(batch: int, seq: int) -> torch.Tensor:
    lengths = torch.tensor([seq, seq - 3, 2])[:batch]
    return torch.arange(seq)[None, :] < lengths[:, None]  # [batch, seq], True = real


# -- naive reference ------------------------------------------------------------------------


def ref_ln(x, ln):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + ln.eps) * ln.weight + ln.bias


def ref_rotate(x, base):
    """Rotary positions written as complex numbers: dims (i, i + d/2) form z_i, and the row at
    position m is multiplied by exp(1j * m * base^(-2i/d)).  x [T, d] -> [T, d]."""
    T, d = x.shape
    z = torch.complex(x[:, : d // 2], x[:, d // 2 :])
    freq = base ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
    z = z * torch.exp(1j * torch.arange(T, dtype=torch.float64)[:, None] * freq)
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)


def ref_attn(attn, x, allowed, uniform=False, rotary_base=None):
    """x [T, D], allowed [T, T] bool -> [T, D], head by head."""
    H, dh = attn.n_heads, attn.d_head
    W, b = attn.qkv.weight, attn.qkv.bias

    def proj(i, h):
        rows = slice(i * H * dh + h * dh, i * H * dh + (h + 1) * dh)
        return x @ W[rows].T + b[rows]  # [T, dh]

    out = attn.out.bias.expand(x.shape[0], -1).clone()
    for h in range(H):
        q, k, v = proj(0, h), proj(1, h), proj(2, h)
        if rotary_base is not None:
            q, k = ref_rotate(q, rotary_base), ref_rotate(k, rotary_base)
        scores = q @ k.T / math.sqrt(dh)
        if uniform:
            scores = torch.zeros_like(scores)
        scores = scores.masked_fill(~allowed, float("-inf"))
        pattern = torch.exp(scores - scores.max(-1, keepdim=True).values)
        pattern = pattern / pattern.sum(-1, keepdim=True)
        out = out + (pattern @ v) @ attn.out.weight[:, h * dh : (h + 1) * dh].T
    return out


def ref_mlp(mlp, x):
    h = x @ mlp.fc_in.weight.T + mlp.fc_in.bias
    if isinstance(mlp.act, torch.nn.GELU):
        h = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))  # exact GELU
    else:
        h = h.clamp(min=0)
    return h @ mlp.fc_out.weight.T + mlp.fc_out.bias


def ref_forward(model, tokens, pad_mask=None, depth=None, uniform=False):
    cfg = model.config
    L = cfg.n_layers if depth is None else depth
    B, T = tokens.shape
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    outs = []
    for b in range(B):
        rotary = cfg.rotary_base if cfg.positions == "rotary" else None
        x = model.W_E[tokens[b]] + (model.W_pos[:T] if rotary is None else 0)
        if cfg.norm_position == "post":
            x = ref_ln(x, model.ln_embed)
        allowed = torch.ones(T, T, dtype=torch.bool)
        if cfg.causal:
            allowed &= j <= i
        if pad_mask is not None:
            allowed &= pad_mask[b][None, :]
        for layer in range(L):
            p = model.layers[0] if cfg.tie_layers else model.layers[layer]
            if cfg.norm_position == "pre":
                x = x + ref_attn(p.attn, ref_ln(x, p.ln1), allowed, uniform, rotary)
                x = x + ref_mlp(p.mlp, ref_ln(x, p.ln2))
            else:
                x = ref_ln(x + ref_attn(p.attn, x, allowed, uniform, rotary), p.ln1)
                x = ref_ln(x + ref_mlp(p.mlp, x), p.ln2)
        if cfg.norm_position == "pre":
            x = ref_ln(x, model.ln_final)
        outs.append(x @ model.head.weight.T + model.head.bias)
    return torch.stack(outs)  # [B, T, n_classes]


def close(a, b, atol=1e-10):
    assert a.shape == b.shape, (a.shape, b.shape)
    assert torch.allclose(a, b, atol=atol, rtol=0), (a - b).abs().max().item()


# -- hooks ------------------------------------------------------------------------------------

EXPECTED_PER_LAYER = [  # make()'s post-LN block: TransformerLens's BERT hooks
    "hook_resid_pre", "attn.hook_q", "attn.hook_k", "attn.hook_v", "attn.hook_attn_scores",
    "attn.hook_pattern", "attn.hook_pattern_dropped", "attn.hook_z", "hook_attn_out",
    "hook_resid_mid", "hook_normalized_resid_mid", "hook_mlp_out", "hook_resid_post",
    "hook_normalized_resid_post",
]


def test_all_hook_names_exist():
    model = make()
    names = set(model.hook_points())
    expected = {"hook_embed", "hook_pos_embed", "hook_final"} | {
        f"blocks.{l}.{n}" for l in range(3) for n in EXPECTED_PER_LAYER
    }
    assert names == expected
    modules = dict(model.named_modules())
    assert all(modules[n].name == n for n in expected)


def test_hooks_are_identity_by_default():
    model = make(dtype=torch.float32)
    x = tokens_()
    fired = []

    def observe(t, hook):
        fired.append(hook.name)

    def pass_through(t, hook):
        fired.append(hook.name)
        return t

    with torch.no_grad():
        plain = model(x)
        # observing hooks (None) and pass-through hooks (return x) change nothing, bitwise,
        # as long as the attention kernel is the same (hooks on the pattern force the explicit one)
        not_pattern = [
            n for n in model.hook_points()
            if not n.endswith(("hook_pattern", "hook_attn_scores", "hook_pattern_dropped"))
        ]
        with model.hooks([(n, observe) for n in not_pattern[::2]]
                         + [(n, pass_through) for n in not_pattern[1::2]]):
            assert torch.equal(model(x), plain)
        assert sorted(fired) == sorted(not_pattern)  # every hook ran, once
        fired.clear()
        with model.hooks([(lambda n: True, observe)]):
            close(model(x), plain, atol=1e-5)
        assert sorted(fired) == sorted(model.hook_points())
    assert not any(p.has_hooks for p in model.hook_points().values())


@pytest.mark.parametrize("kw", [
    dict(), dict(positions="rotary", norm_position="pre"), dict(norm_position="post_no_embed_ln"),
    dict(d_embed=8, tie_layers=True), dict(attention="identity", norm_position="pre", causal=True),
    dict(n_layers=4, depth_range=(1, 4)),
], ids=["bert", "rotary", "no-embed-ln", "albert", "identity", "stochastic-depth"])
def test_every_hook_point_fires(kw):
    """A hook point that exists is called by the forward pass (at full depth): a model never
    creates one that cannot fire, whatever its variant."""
    model = make(**kw)
    fired: list[str] = []
    with model.hooks([(lambda n: True, lambda t, hook: fired.append(hook.name))]):
        model(tokens_(), pad_mask=right_pad_mask(3, SEQ))
    assert sorted(fired) == sorted(model.hook_points())


def test_hook_pos_embed_sees_and_patches_the_learned_positions():
    model = make()
    x = tokens_()
    seen = {}

    def zero(t, hook):
        seen[hook.name] = t.clone()
        return torch.zeros_like(t)

    with model.hooks([("hook_pos_embed", zero)]):
        patched = model(x)
    assert torch.equal(seen["hook_pos_embed"], model.W_pos[:SEQ].expand(3, SEQ, -1))
    with torch.no_grad():
        model.W_pos.zero_()
    assert torch.equal(patched, model(x))  # zeroing the hook's output == no positions


def test_hooks_patch_and_are_removed_on_error():
    model = make()
    x = tokens_()
    seen = {}

    def zero(t, hook):
        return torch.zeros_like(t)

    def save(t, hook):
        seen[hook.name] = t.clone()

    with pytest.raises(RuntimeError):
        with model.hooks([("blocks.0.hook_normalized_resid_post", zero),
                          ("blocks.1.hook_resid_pre", save)]):
            model(x)
            raise RuntimeError("boom")
    zeros = torch.zeros(3, SEQ, 16, dtype=torch.float64)
    assert torch.equal(seen["blocks.1.hook_resid_pre"], zeros)
    assert not any(p.has_hooks for p in model.hook_points().values())
    with pytest.raises(KeyError):
        with model.hooks([("blocks.9.hook_nothing", zero)]):
            pass


def test_run_with_cache_values():
    model = make()
    x, pad = tokens_(), right_pad_mask(3, SEQ)
    out, cache = run_with_cache(model, x, pad_mask=pad)
    close(out, model(x, pad_mask=pad))  # caching the pattern takes the explicit path
    H, dh = 4, 4
    allowed = pad[:, None, None, :]  # [B, 1, 1, T]
    for l in range(3):
        q, k = cache[f"blocks.{l}.attn.hook_q"], cache[f"blocks.{l}.attn.hook_k"]  # [B,T,H,dh]
        assert q.shape == (3, SEQ, H, dh)
        scores = torch.zeros(3, H, SEQ, SEQ, dtype=q.dtype)
        for h in range(H):
            scores[:, h] = q[:, :, h] @ k[:, :, h].transpose(1, 2) / math.sqrt(dh)
        naive = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        pattern = cache[f"blocks.{l}.attn.hook_pattern"]
        close(pattern, naive)
        close(pattern.sum(-1), torch.ones(3, H, SEQ, dtype=q.dtype))
        assert (pattern.masked_select(~allowed.expand_as(pattern)) == 0).all()
        if l < 2:  # post-LN: the block's output is the normalised raw sum
            post = cache[f"blocks.{l}.hook_normalized_resid_post"]
            assert torch.equal(post, cache[f"blocks.{l + 1}.hook_resid_pre"])
    assert cache.stack("hook_resid_post").shape == (3, 3, SEQ, 16)
    close(cache.stack("attn.hook_pattern")[1], cache["blocks.1.attn.hook_pattern"], atol=0)
    assert not cache["hook_final"].requires_grad

    # the maths-convention weight views agree with the cached q: x @ W_Q[h] + b_Q[h]
    attn = model.layers[0].attn
    x0 = cache["blocks.0.hook_resid_pre"]
    for h in range(H):
        close(x0 @ attn.W_Q[h] + attn.b_Q[h], cache["blocks.0.attn.hook_q"][:, :, h])
        close(x0 @ attn.W_V[h] + attn.b_V[h], cache["blocks.0.attn.hook_v"][:, :, h])
    z = cache["blocks.0.attn.hook_z"]
    close(torch.einsum("bthd,hdm->btm", z, attn.W_O) + attn.b_O, cache["blocks.0.hook_attn_out"])

    _, only = run_with_cache(model, x, names_filter=["hook_embed", "blocks.2.hook_mlp_out"])
    assert set(only) == {"hook_embed", "blocks.2.hook_mlp_out"}


# -- attention paths --------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_sdpa_path_equals_explicit_path(causal, padded, monkeypatch):
    model = make(dtype=torch.float32, causal=causal)
    x = tokens_()
    pad = right_pad_mask(3, SEQ) if padded else None
    calls = []
    real_sdpa = F.scaled_dot_product_attention
    monkeypatch.setattr(
        attention_module.F, "scaled_dot_product_attention",
        lambda *a, **k: calls.append(1) or real_sdpa(*a, **k),
    )
    with torch.no_grad():
        fused = model(x, pad_mask=pad)
        assert len(calls) == 3
        with model.hooks([(lambda n: n.endswith("hook_pattern"), lambda t, hook: None)]):
            explicit = model(x, pad_mask=pad)
        assert len(calls) == 3
        with torch.autocast("cpu", dtype=torch.bfloat16):  # CPU bf16: explicit, docs/design.md §8
            model(x, pad_mask=pad)
        assert len(calls) == 3
    close(fused, explicit, atol=1e-5)
    close(explicit.double(), ref_forward(model.double(), x, pad), atol=1e-5)


def test_fully_masked_rows_give_no_nan():
    for causal in (False, True):
        model = make(causal=causal)
        x = tokens_()
        pad = torch.ones(3, SEQ, dtype=torch.bool)
        pad[0] = False  # an all-padding example
        pad[1, :4] = False  # left padding: causal rows 0..3 see no real key
        for hooked in (False, True):
            with model.hooks([("blocks.0.attn.hook_pattern", lambda t, h: None)] if hooked else []):
                out = model(x, pad_mask=pad)
            assert torch.isfinite(out).all()
        # real examples are unaffected by the padded ones in the batch
        close(out[2:], model(x[2:]))


def test_overriding_one_method_makes_a_variant():
    class Uniform(SoftmaxAttention):
        def scores(self, q, k, x):
            return torch.zeros(q.shape[0], q.shape[2], q.shape[1], k.shape[1], dtype=q.dtype)

    model = make()
    for layer in model.layers:
        variant = Uniform(model.config).double()
        variant.load_state_dict(layer.attn.state_dict())
        layer.attn = variant
    assert not variant.fusable and model.layers[0].attn.fusable is False
    x, pad = tokens_(), right_pad_mask(3, SEQ)
    close(model(x, pad_mask=pad), ref_forward(model, x, pad, uniform=True))


# -- whole forward against the naive reference ------------------------------------------------


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_matches_naive_reference(norm, causal):
    model = make(norm_position=norm, causal=causal, act="gelu" if norm == "post" else "relu")
    x, pad = tokens_(), right_pad_mask(3, SEQ)
    close(model(x), ref_forward(model, x))
    full = ref_forward(model, x, pad)
    close(model(x, pad_mask=pad), full)
    label_pos = torch.tensor([[0, 4], [2, 2], [1, 0]])
    close(model(x, label_pos, pad), torch.stack([full[b, label_pos[b]] for b in range(3)]))


@pytest.mark.parametrize("causal", [False, True])
def test_rotary_matches_naive_reference_on_both_paths(causal):
    model = make(positions="rotary", norm_position="pre", causal=causal, rotary_base=100.0)
    # no W_pos, so no hook_pos_embed: a hook attached there could never be called
    assert model.W_pos is None and "hook_pos_embed" not in model.hook_points()
    with pytest.raises(KeyError):
        with model.hooks([("hook_pos_embed", lambda t, hook: None)]):
            pass
    with pytest.raises(KeyError, match="no hook point 'hook_pos_embed'"):
        run_with_cache(model, tokens_(), names_filter=["hook_final", "hook_pos_embed"])
    x, pad = tokens_(), right_pad_mask(3, SEQ)
    ref = ref_forward(model, x, pad)
    close(model(x, pad_mask=pad), ref)  # fused SDPA path
    _, cache = run_with_cache(model, x, pad_mask=pad)  # explicit path
    close(cache["hook_final"] @ model.head.weight.T + model.head.bias, ref)


def test_rotary_logits_depend_on_relative_position_only():
    model = make(positions="rotary", rotary_base=10.0)
    rot = model.layers[0].attn.rotary
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 1, 1, 4, generator=g).double(), torch.randn(1, 1, 1, 4, generator=g)
    T = SEQ + 3
    q_all, k_all = rot(q.expand(1, T, 1, 4)), rot(k.double().expand(1, T, 1, 4))
    logits = torch.einsum("qd,kd->qk", q_all[0, :, 0], k_all[0, :, 0])  # [T, T]
    for offset in range(-3, 4):
        diag = torch.diagonal(logits, offset)
        close(diag, diag[:1].expand_as(diag))
    assert logits[0].std() > 0.1  # and it does depend on the offset


# -- weight tying (ALBERT; LEGO §3) -----------------------------------------------------------


def test_weight_tying_shares_one_layer():
    tied, untied = make(tie_layers=True, n_layers=4), make(n_layers=4)
    one_layer = sum(p.numel() for p in untied.layers[0].parameters())
    assert len(tied.layers) == 1 and len(tied.blocks) == 4
    assert tied.num_params() == untied.num_params() - 3 * one_layer
    ptrs = {tied.layer(l).attn.qkv.weight.data_ptr() for l in range(4)}
    assert len(ptrs) == 1
    names = set(tied.hook_points())
    assert "blocks.3.hook_resid_post" in names and "blocks.3.attn.hook_pattern" in names
    # no tensor appears twice in the state dict
    sd = tied.state_dict()
    assert len({t.data_ptr() for t in sd.values()}) == len(sd)

    x = tokens_()
    close(tied(x), ref_forward(tied, x))
    _, cache = tied.run_with_cache(x)
    assert cache.stack("hook_resid_post").shape[0] == 4


def test_tied_grads_accumulate_in_the_shared_parameter():
    tied = make(tie_layers=True, n_layers=3)
    copies = make(n_layers=3)  # the same weights copied into 3 independent layers
    with torch.no_grad():
        for name, p in copies.named_parameters():
            src = name.replace("layers.1.", "layers.0.").replace("layers.2.", "layers.0.")
            p.copy_(tied.get_parameter(src))
    x = tokens_()
    close(tied(x), copies(x))
    tied(x).square().sum().backward()
    copies(x).square().sum().backward()
    g = tied.layers[0].attn.qkv.weight.grad
    summed = sum(copies.layers[l].attn.qkv.weight.grad for l in range(3))
    close(g, summed)
    assert not torch.allclose(g, copies.layers[0].attn.qkv.weight.grad)


def test_tied_safetensors_round_trip(tmp_path):
    model = make(tie_layers=True, n_layers=4, dtype=torch.float32)
    save_file(model.state_dict(), tmp_path / "model.safetensors")
    fresh = make(seed=7, tie_layers=True, n_layers=4, dtype=torch.float32)
    x = tokens_()
    assert not torch.equal(fresh(x), model(x))
    fresh.load_state_dict(load_file(tmp_path / "model.safetensors"))
    assert torch.equal(fresh(x), model(x))


# -- stochastic depth (LEGO §4) ---------------------------------------------------------------


@pytest.mark.parametrize("tie", [False, True])
def test_stochastic_depth_runs_the_first_k_blocks(tie):
    model = make(n_layers=4, tie_layers=tie, depth_range=(1, 4))
    x = tokens_()
    for k in (1, 2, 4):
        close(model(x, depth=k), ref_forward(model, x, depth=k))
    assert torch.equal(model(x), model(x, depth=4))
    assert not torch.allclose(model(x), model(x, depth=3))
    _, cache = model.run_with_cache(x, depth=2)
    assert cache.stack("hook_resid_post").shape[0] == 2 and "blocks.2.hook_resid_pre" not in cache
    with pytest.raises(ValueError):
        model(x, depth=5)


# -- masking ----------------------------------------------------------------------------------


def test_causal_mask_leaks_nothing_from_the_future():
    x = tokens_()
    y = x.clone()
    y[:, 5:] = (y[:, 5:] + 1) % VOCAB
    for causal in (True, False):
        model = make(dtype=torch.float32, causal=causal)
        for hooked in (False, True):  # both attention paths
            with model.hooks([("blocks.1.attn.hook_pattern", lambda t, h: None)] if hooked else []):
                a, b = model(x), model(y)
            if causal:
                assert torch.equal(a[:, :5], b[:, :5])
                assert not torch.allclose(a[:, 5:], b[:, 5:])
            else:
                assert not torch.allclose(a[:, :5], b[:, :5])


# -- learning -----------------------------------------------------------------------------------


def test_tiny_model_overfits_a_tiny_batch():
    torch.manual_seed(0)
    cfg = ModelConfig.build(
        vocab_size=VOCAB, n_classes=CLASSES, max_seq_len=8, d_model=32, n_heads=4, d_mlp=64,
        n_layers=2,
    )
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0)).train()
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, VOCAB, (8, 8), generator=g)
    label_pos = torch.stack([torch.randperm(8, generator=g)[:3] for _ in range(8)])  # distinct
    labels = torch.randint(0, CLASSES, (8, 3), generator=g)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(300):
        loss = F.cross_entropy(model(x, label_pos).flatten(0, 1), labels.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() < 0.05:
            break
    assert loss.item() < 0.05


def test_flops_and_params():
    model = make(dtype=torch.float32, n_layers=4, tie_layers=True)
    per_layer = sum(p.numel() for p in model.layers[0].parameters())
    head = 16 * CLASSES + CLASSES
    assert model.flops_per_token(seq_len=8) == 6 * (4 * per_layer + head) + 12 * 4 * 8 * 16
    assert model.flops_per_token(seq_len=8, training=False) * 3 == model.flops_per_token(seq_len=8)
    emb = VOCAB * 16 + (SEQ + 3) * 16
    assert model.num_params() - model.num_params(non_embedding=True) == emb


# -- config validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, field",
    [
        (dict(d_model=30, n_heads=4), "d_model"),
        (dict(depth_range=(0, 2)), "depth_range"),
        (dict(depth_range=(2, 5)), "depth_range"),
        (dict(positions="rotary", d_model=12, n_heads=4), "d_head"),
        (dict(positions="sinusoidal"), "positions"),
        (dict(depth_range=(3, 2)), "depth_range"),
        (dict(attention="nope"), "attention variant"),
        (dict(init="nope"), "init scheme"),
        (dict(n_layer=3), "n_layer"),
    ],
)
def test_model_config_rejects(bad, field):
    base = dict(vocab_size=VOCAB, n_classes=CLASSES, max_seq_len=SEQ, n_layers=4)
    with pytest.raises(ConfigError, match=field):
        ModelConfig.build({**base, **bad})


# -- factorised embedding (ALBERT, d_embed) ------------------------------------------------------


def albert(**kw):
    cfg = ModelConfig.build(dict(vocab_size=11, n_classes=3, max_seq_len=12, d_model=16,
                                 d_embed=8, n_heads=2, d_mlp=32, n_layers=3, tie_layers=True,
                                 init_std=0.3, **kw))
    return Transformer(cfg, generator=torch.Generator().manual_seed(0)).double()


def test_factorised_embedding_against_a_naive_reference():
    model = albert()
    tokens = torch.tensor([[1, 4, 4, 7, 2, 0], [3, 3, 9, 10, 5, 6]])
    _, cache = run_with_cache(model, tokens, names_filter=lambda n: n in (
        "hook_embed", "blocks.0.hook_resid_pre"))
    assert cache["hook_embed"].shape == (2, 6, 8)
    W_E, W_pos, proj = model.W_E.detach(), model.W_pos.detach(), model.embed_proj
    ln = model.ln_embed
    for b in range(2):
        for t in range(6):
            e = W_E[tokens[b, t]] + W_pos[t]  # width 8
            e = (e - e.mean()) / torch.sqrt(e.var(unbiased=False) + 1e-12) * ln.weight + ln.bias
            want = proj.weight @ e + proj.bias  # width 16
            torch.testing.assert_close(cache["blocks.0.hook_resid_pre"][b, t], want)
    n_embed = 11 * 8 + 12 * 8
    assert model.num_params() - model.num_params(non_embedding=True) == n_embed
    with pytest.raises(ConfigError, match="d_embed"):
        ModelConfig.build(dict(vocab_size=3, n_classes=3, max_seq_len=4, d_embed=8,
                               tie_head=True))


def test_factorised_tied_model_matches_transformers_albert():
    from transformers import AlbertConfig, AlbertModel

    model = albert()
    ref = AlbertModel(AlbertConfig(vocab_size=11, embedding_size=8, hidden_size=16,
                                   num_hidden_layers=3, num_attention_heads=2,
                                   intermediate_size=32, hidden_act="gelu",
                                   max_position_embeddings=12, type_vocab_size=1,
                                   layer_norm_eps=1e-12, hidden_dropout_prob=0.0,
                                   attention_probs_dropout_prob=0.0)).double().eval()
    L = model.layers[0]
    q, k, v = L.attn.qkv.weight.chunk(3)
    qb, kb, vb = L.attn.qkv.bias.chunk(3)
    a = "encoder.albert_layer_groups.0.albert_layers.0."
    sd = {"embeddings.word_embeddings.weight": model.W_E,
          "embeddings.position_embeddings.weight": model.W_pos,
          "embeddings.token_type_embeddings.weight": torch.zeros(1, 8, dtype=torch.float64),
          "embeddings.LayerNorm.weight": model.ln_embed.weight,
          "embeddings.LayerNorm.bias": model.ln_embed.bias,
          "encoder.embedding_hidden_mapping_in.weight": model.embed_proj.weight,
          "encoder.embedding_hidden_mapping_in.bias": model.embed_proj.bias,
          a + "attention.query.weight": q, a + "attention.query.bias": qb,
          a + "attention.key.weight": k, a + "attention.key.bias": kb,
          a + "attention.value.weight": v, a + "attention.value.bias": vb,
          a + "attention.dense.weight": L.attn.out.weight,
          a + "attention.dense.bias": L.attn.out.bias,
          a + "attention.LayerNorm.weight": L.ln1.weight,
          a + "attention.LayerNorm.bias": L.ln1.bias,
          a + "ffn.weight": L.mlp.fc_in.weight, a + "ffn.bias": L.mlp.fc_in.bias,
          a + "ffn_output.weight": L.mlp.fc_out.weight, a + "ffn_output.bias": L.mlp.fc_out.bias,
          a + "full_layer_layer_norm.weight": L.ln2.weight,
          a + "full_layer_layer_norm.bias": L.ln2.bias}
    missing, unexpected = ref.load_state_dict({k: t.detach() for k, t in sd.items()},
                                              strict=False)
    assert not unexpected and all(m.startswith("pooler") for m in missing)
    tokens = torch.tensor([[1, 4, 4, 7, 2, 0, 8, 8], [3, 3, 9, 10, 5, 6, 1, 2]])
    with torch.no_grad():
        want = ref(input_ids=tokens).last_hidden_state
        _, cache = run_with_cache(model, tokens,
                                  names_filter="blocks.2.hook_normalized_resid_post")
    torch.testing.assert_close(cache["blocks.2.hook_normalized_resid_post"], want)


def test_post_ln_resid_hooks_hold_raw_sums_as_transformerlens():
    """Post-LN (BERT): hook_resid_mid = resid_pre + attn_out and hook_resid_post =
    normalized_mid + mlp_out are raw sums; the normalised hooks hold ln1 / ln2 of them, and the
    block's output is hook_normalized_resid_post. Pre-LN has no normalised hooks."""
    from reasonlab.model.transformer import block_output_hook

    model = make()
    _, cache = run_with_cache(model, tokens_())
    for l in range(3):
        b, L = f"blocks.{l}.", model.layers[l]
        mid = cache[b + "hook_resid_pre"] + cache[b + "hook_attn_out"]
        close(cache[b + "hook_resid_mid"], mid, atol=0)
        close(cache[b + "hook_normalized_resid_mid"], L.ln1(mid), atol=1e-12)
        post = cache[b + "hook_normalized_resid_mid"] + cache[b + "hook_mlp_out"]
        close(cache[b + "hook_resid_post"], post, atol=0)
        close(cache[b + "hook_normalized_resid_post"], L.ln2(post), atol=1e-12)
    assert block_output_hook(model.config) == "hook_normalized_resid_post"
    pre = make(norm_position="pre")
    assert block_output_hook(pre.config) == "hook_resid_post"
    assert not any("normalized" in n for n in pre.hook_points())
