"""LEGO §5 attention variants (hardcoded, hybrid, conv_qkv) and the temporal convolution
against naive references written here: loops over examples, positions and heads reading the
raw parameter tensors, and the paper's definitions (docs/papers.md §1.1)."""

from __future__ import annotations

import math

import pytest
import torch

from reasonlab.model import ModelConfig
from reasonlab.model.attention import SoftmaxAttention
from reasonlab.model.conv import TemporalConv
from reasonlab.model.transformer import attention_mask

T, CLS, SEP = 9, 1, 2


def attn_config(name: str, causal: bool = False, **opts):
    """A ModelConfig (d_model 16, 4 heads) whose attention is `name` with options `opts`."""
    if name in ("hardcoded", "hybrid"):
        opts = {"cls_id": CLS, "sep_id": SEP, **opts}
        if name == "hardcoded":
            opts.pop("learned_heads", None)
    return ModelConfig.build({"vocab_size": 11, "n_classes": 3, "max_seq_len": 16,
                              "d_model": 16, "n_heads": 4, "causal": causal,
                              "attention": {"name": name, **opts}})


def fill_random(module, g):
    """Every parameter drawn N(0, 0.5): non-trivial biases and convolutions too."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(0.5 * torch.randn(p.shape, generator=g, dtype=p.dtype))


def naive_patterns(tokens, pad, causal):
    """The paper's definition, entry by entry: (A_asso)_ij = 1[u_i = u_j], (A_cls)_ij =
    1[u_j = [CLS]], (A_sep)_ij = 1[u_j = [SEP]], "normalize them to have row-wise unit l1
    norm" (LEGO §5); keys that are padding (or in the future, causal) are not attended."""
    B, n = tokens.shape
    out = torch.zeros(B, 3, n, n, dtype=torch.float64)
    for b in range(B):
        for i in range(n):
            for j in range(n):
                if not pad[b, j] or (causal and j > i):
                    continue
                u_i, u_j = int(tokens[b, i]), int(tokens[b, j])
                out[b, 0, i, j] = float(u_i == u_j)
                out[b, 1, i, j] = float(u_j == CLS)
                out[b, 2, i, j] = float(u_j == SEP)
            for p in range(3):
                s = float(out[b, p, i].sum())
                if s > 0:
                    out[b, p, i] /= s
    return out


def naive_conv(conv: TemporalConv, x, pad, causal):
    """y[t, c] = sum_s w[c, s] x[t + s - left, c] (depthwise) over real, in-range positions."""
    W, bias = conv.conv.weight, conv.conv.bias  # [d, 1 or d, k], [d]
    d, k = W.shape[0], W.shape[-1]
    left = k - 1 if causal else k // 2
    n = x.shape[0]
    y = torch.zeros_like(x)
    for t in range(n):
        acc = bias.clone() if bias is not None else torch.zeros(d, dtype=x.dtype)
        for s in range(k):
            u = t + s - left
            if 0 <= u < n and pad[u]:
                if W.shape[1] == 1:  # depthwise
                    acc = acc + W[:, 0, s] * x[u]
                else:
                    acc = acc + W[:, :, s] @ x[u]
        y[t] = acc
    return y


def tokens_and_pad(seed=0):
    g = torch.Generator().manual_seed(seed)
    tok = torch.randint(SEP + 1, SEP + 5, (3, T), generator=g)  # few ids: many repeats
    tok[:, 0] = CLS
    tok[0, 4] = SEP
    tok[0, T - 1] = SEP
    tok[2, 3] = SEP  # beyond row 2's padding below: must not be attended
    pad = torch.arange(T)[None] < torch.tensor([T, 6, 3])[:, None]
    return tok, pad


@pytest.mark.parametrize("causal", [False, True])
def test_hardcoded_patterns_match_the_papers_definition(causal):
    from reasonlab.model.hardcoded_attention import hardcoded_patterns

    tok, pad = tokens_and_pad()
    mask = attention_mask(pad, causal, T, tok.device)
    got = hardcoded_patterns(tok, mask, CLS, SEP, torch.float64)
    ref = naive_patterns(tok, pad, causal)
    for b in range(3):  # real queries (padded queries attend to whatever the mask allows)
        n = int(pad[b].sum())
        torch.testing.assert_close(got[b, :, :n], ref[b, :, :n], rtol=0, atol=1e-15)
    assert got[0, 2, T - 1].tolist()[4] == 0.5  # two [SEP]s in row 0: half each
    assert (got[2, 2] == 0).all()  # row 2's only [SEP] is padding: nothing to broadcast


@pytest.mark.parametrize("depthwise", [True, False])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("kernel", [1, 4, 5])
def test_temporal_conv_matches_naive(depthwise, causal, kernel):
    g = torch.Generator().manual_seed(kernel)
    d = 4
    conv = TemporalConv(d, kernel, depthwise, causal).double()
    fill_random(conv, g)
    x = torch.randn(3, T, d, generator=g, dtype=torch.float64)
    _, pad = tokens_and_pad()
    got = conv(x, pad)
    for b in range(3):
        torch.testing.assert_close(got[b], naive_conv(conv, x[b], pad[b], causal))


def naive_hardcoded(attn, x, tok, pad, causal):
    """One example: learned heads (softmax of q k^T / sqrt(d_head)) then the three hardcoded
    maps, each mixing its own value map; W_O over all heads; plus the convolution."""
    n, dh, L = x.shape[0], attn.d_head, attn.n_learned
    allowed = pad[None, :].expand(n, n).clone()
    if causal:
        allowed &= torch.ones(n, n, dtype=torch.bool).tril()
    maps = naive_patterns(tok[None], pad[None], causal)[0]  # [3, n, n]
    Wv, bv = attn.v.weight, attn.v.bias
    out = attn.out.bias.expand(n, -1).clone()
    for h in range(L + 3):
        v = x @ Wv[h * dh:(h + 1) * dh].T + bv[h * dh:(h + 1) * dh]
        if h < L:
            Wqk, bqk = attn.qk.weight, attn.qk.bias
            q = x @ Wqk[h * dh:(h + 1) * dh].T + bqk[h * dh:(h + 1) * dh]
            k = x @ Wqk[(L + h) * dh:(L + h + 1) * dh].T + bqk[(L + h) * dh:(L + h + 1) * dh]
            s = (q @ k.T / math.sqrt(dh)).masked_fill(~allowed, float("-inf"))
            p = torch.exp(s - s.max(-1, keepdim=True).values)
            p = p / p.sum(-1, keepdim=True)
        else:
            p = maps[h - L]
        out = out + (p @ v) @ attn.out.weight[:, h * dh:(h + 1) * dh].T
    return out + naive_conv(attn.conv, x, pad, causal)


@pytest.mark.parametrize("name,learned", [("hardcoded", 0), ("hybrid", 2)])
@pytest.mark.parametrize("causal", [False, True])
def test_hardcoded_and_hybrid_attention_match_naive(name, learned, causal):
    from reasonlab.model.attention import ATTENTION

    cfg = attn_config(name, causal=causal, learned_heads=learned, kernel=3)
    attn = ATTENTION[name](cfg).double()
    fill_random(attn, torch.Generator().manual_seed(3))
    assert attn.n_heads == learned + 3 and (attn.qk is None) == (learned == 0)
    tok, pad = tokens_and_pad(1)
    x = torch.randn(3, T, cfg.d_model, generator=torch.Generator().manual_seed(4),
                    dtype=torch.float64)
    hooks = attn.make_hooks(cfg)
    got = attn(x, attention_mask(pad, causal, T, x.device), hooks, tok, pad)
    for b in range(3):
        n = int(pad[b].sum())  # real query positions
        ref = naive_hardcoded(attn, x[b], tok[b], pad[b], causal)
        torch.testing.assert_close(got[b, :n], ref[:n], rtol=1e-10, atol=1e-10)
    assert hasattr(hooks, "hook_q") == (learned > 0)  # no hook point that cannot fire


def naive_conv_qkv(attn, x, pad, causal):
    """q = W_Q (x + conv_Q x), k = W_K (x + conv_K x), v = W_V (x + conv_V x), head by head."""
    n, d = x.shape
    H, dh = attn.n_heads, attn.d_head
    xs = [x + naive_conv(_slice_conv(attn.conv, i, d), x, pad, causal) for i in range(3)]
    allowed = pad[None, :].expand(n, n).clone()
    if causal:
        allowed &= torch.ones(n, n, dtype=torch.bool).tril()
    W, b = attn.qkv.weight, attn.qkv.bias
    out = attn.out.bias.expand(n, -1).clone()
    for h in range(H):
        q, k, v = (xs[i] @ W[i * H * dh + h * dh: i * H * dh + (h + 1) * dh].T
                   + b[i * H * dh + h * dh: i * H * dh + (h + 1) * dh] for i in range(3))
        s = (q @ k.T / math.sqrt(dh)).masked_fill(~allowed, float("-inf"))
        p = s.softmax(-1)
        out = out + (p @ v) @ attn.out.weight[:, h * dh:(h + 1) * dh].T
    return out


def _slice_conv(conv, i, d):
    """Channels i*d .. (i+1)*d of a depthwise TemporalConv, as its own TemporalConv."""
    k = conv.kernel
    part = TemporalConv(d, k, True, conv.left == k - 1).double()
    with torch.no_grad():
        part.conv.weight.copy_(conv.conv.weight[i * d:(i + 1) * d])
        part.conv.bias.copy_(conv.conv.bias[i * d:(i + 1) * d])
    return part


@pytest.mark.parametrize("causal", [False, True])
def test_conv_qkv_matches_naive(causal):
    from reasonlab.model.attention import ATTENTION

    cfg = attn_config("conv_qkv", causal=causal, kernel=3)
    attn = ATTENTION["conv_qkv"](cfg).double()
    fill_random(attn, torch.Generator().manual_seed(5))
    tok, pad = tokens_and_pad(2)
    x = torch.randn(3, T, cfg.d_model, generator=torch.Generator().manual_seed(6),
                    dtype=torch.float64)
    got = attn(x, attention_mask(pad, causal, T, x.device), attn.make_hooks(cfg), tok, pad)
    for b in range(3):
        n = int(pad[b].sum())
        torch.testing.assert_close(got[b, :n], naive_conv_qkv(attn, x[b], pad[b], causal)[:n],
                                   rtol=1e-10, atol=1e-10)


def test_conv_qkv_with_zero_convolutions_is_softmax_attention():
    """Zero convolutions (how the init schemes leave them) give plain softmax attention."""
    from reasonlab.model.attention import ATTENTION

    cfg = attn_config("conv_qkv", kernel=5)
    attn = ATTENTION["conv_qkv"](cfg).double()
    fill_random(attn, torch.Generator().manual_seed(7))
    plain = SoftmaxAttention(attn_config("softmax")).double()
    plain.load_state_dict({k: v for k, v in attn.state_dict().items()
                           if not k.startswith("conv.")})
    with torch.no_grad():
        attn.conv.conv.weight.zero_()
        attn.conv.conv.bias.zero_()
    assert attn.conv.conv.zero_init == ("weight", "bias")
    tok, pad = tokens_and_pad(3)
    x = torch.randn(3, T, cfg.d_model, dtype=torch.float64)
    mask = attention_mask(pad, False, T, x.device)
    torch.testing.assert_close(attn(x, mask, attn.make_hooks(cfg), tok, pad),
                               plain(x, mask, plain.make_hooks(cfg), tok, pad))


def test_mixing_flops_count_the_mixing_matmuls():
    """softmax: q k^T and pattern @ v over all heads; hardcoded: pattern @ v over 3 maps;
    hybrid: both, q k^T for the learned heads only (2 FLOPs per multiply-add)."""
    from reasonlab.model.attention import ATTENTION

    n, dh = 128, 4  # attn_config: d_model 16, 4 heads of 4
    assert SoftmaxAttention(attn_config("softmax")).mixing_flops(n) == 2 * 2 * n * 4 * dh
    hard = ATTENTION["hardcoded"](attn_config("hardcoded"))
    assert hard.mixing_flops(n) == 2 * n * 3 * dh
    hyb = ATTENTION["hybrid"](attn_config("hybrid", learned_heads=2))
    assert hyb.mixing_flops(n) == 2 * n * 2 * dh + 2 * n * 5 * dh


# -- whole models -----------------------------------------------------------------------------


def model_(attention, seed=0, **kw):
    from reasonlab.model import Transformer

    cfg = ModelConfig.build({"vocab_size": 11, "n_classes": 3, "max_seq_len": 16, "d_model": 16,
                             "n_heads": 4, "d_mlp": 24, "n_layers": 2, "init_std": 0.3,
                             "attention": attention, **kw})
    return Transformer(cfg, generator=torch.Generator().manual_seed(seed)).double().eval()


@pytest.mark.parametrize("attention", [
    {"name": "hardcoded", "cls_id": CLS, "sep_id": SEP, "kernel": 5},
    {"name": "hybrid", "cls_id": CLS, "sep_id": SEP, "kernel": 5, "learned_heads": 2},
    {"name": "conv_qkv", "kernel": 3}])
def test_padding_does_not_change_real_positions(attention):
    """Right padding (token 0, masked) leaves every real position's output unchanged: the
    hardcoded maps skip padded keys and the convolutions read padding as zero."""
    m = model_(attention)
    with torch.no_grad():  # non-zero convolutions, so that they are exercised
        for name, p in m.named_parameters():
            if "conv" in name:
                p.copy_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(1)))
    tok, _ = tokens_and_pad(4)
    short = tok[:1, :6]
    padded = torch.cat([short, torch.zeros(1, 5, dtype=torch.long)], dim=1)
    pad = padded != 0
    a = m(short)
    b = m(padded, pad_mask=pad)
    torch.testing.assert_close(a, b[:, :6], rtol=1e-10, atol=1e-10)
    with torch.no_grad():
        b_leak = m(padded)  # without the pad mask the padding leaks in (the test can fail)
    assert not torch.allclose(a, b_leak[:, :6])


def test_hook_points_fire_with_the_documented_shapes():
    from reasonlab.model import run_with_cache

    m = model_({"name": "hybrid", "cls_id": CLS, "sep_id": SEP, "learned_heads": 1})
    tok, _ = tokens_and_pad(5)
    _, cache = run_with_cache(m, tok)
    B = tok.shape[0]
    assert cache["blocks.1.attn.hook_pattern"].shape == (B, 4, T, T)  # 1 learned + 3 fixed
    assert cache["blocks.0.attn.hook_q"].shape == (B, T, 1, 4)
    assert cache["blocks.0.attn.hook_z"].shape == (B, T, 4, 4)
    assert cache["blocks.0.attn.hook_conv_out"].shape == (B, T, 16)
    # the hardcoded maps are the same in every layer (they depend on the tokens only)
    torch.testing.assert_close(cache["blocks.0.attn.hook_pattern"][:, 1:],
                               cache["blocks.1.attn.hook_pattern"][:, 1:])
    names = {n for n, _ in m.named_modules()}
    assert "blocks.0.attn.hook_q" not in {n for n, _ in model_(
        {"name": "hardcoded", "cls_id": CLS, "sep_id": SEP}).named_modules()}
    assert "blocks.0.attn.hook_conv_out" in names


def test_conv_qkv_model_at_init_is_the_softmax_model():
    """Default init leaves the convolutions at zero: the same weights as a softmax model give
    the same outputs (the convolutions draw nothing from the generator)."""
    plain, conv = model_("softmax", seed=3), model_({"name": "conv_qkv"}, seed=3)
    sd = conv.state_dict()
    assert all((sd[k] == 0).all() for k in sd if ".conv." in k)
    assert all(torch.equal(sd[k], v) for k, v in plain.state_dict().items())
    tok, _ = tokens_and_pad(6)
    torch.testing.assert_close(plain(tok), conv(tok), rtol=1e-12, atol=1e-12)


def test_flops_per_token_bert_base_shapes():
    """BERT-base shapes (12 layers, d_model 768, 12 heads of 64, d_mlp 3072, seq 512): Hybrid
    with 6 learned heads and Hardcode cost fewer FLOPs per token than BERT, counted as
    6 x (2 N_applied + per-layer mixing) per training token."""
    from reasonlab.model import Transformer

    base = {"vocab_size": 30522, "n_classes": 30522, "max_seq_len": 512, "d_model": 768,
            "n_heads": 12, "d_mlp": 3072, "n_layers": 12}
    flops = {}
    for name, att in {"bert": "softmax",
                      "hardcode": {"name": "hardcoded", "cls_id": 101, "sep_id": 102},
                      "hybrid": {"name": "hybrid", "cls_id": 101, "sep_id": 102,
                                 "learned_heads": 6}}.items():
        with torch.device("meta"):
            m = Transformer(ModelConfig.build({**base, "attention": att}))
        flops[name] = m.flops_per_token(512)
        layer = sum(p.numel() for p in m.layers[0].parameters())
        head = sum(p.numel() for p in m.head.parameters())
        mixing = m.layers[0].attn.mixing_flops(512)
        assert flops[name] == 3 * (2 * (12 * layer + head) + 12 * mixing)
    assert flops["hardcode"] < flops["hybrid"] < flops["bert"]
