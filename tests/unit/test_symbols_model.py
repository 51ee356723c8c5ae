"""Abstract-symbols model variants against naive references written here.

Identity-augmented attention (logits += a_h X X^T, output += b_h Attn_h X), bias-free
projections, the read-out tied to the embedding, and the MLP baseline (docs/papers.md §2
Abstract symbols).
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from reasonlab.errors import ConfigError
from reasonlab.model import MODELS, ModelConfig, Transformer, hooks, run_with_cache
from reasonlab.model.attention import AttentionHooks
from reasonlab.model.transformer import attention_mask

VOCAB, SEQ = 13, 7


def cfg(**kw) -> ModelConfig:
    base = dict(vocab_size=VOCAB, n_classes=4, max_seq_len=SEQ, d_model=12, n_heads=3,
                d_mlp=20, n_layers=2, norm_position="pre", init_std=0.3)
    return ModelConfig.build({**base, **kw})


def model_(seed=0, **kw):
    return Transformer(cfg(**kw), generator=torch.Generator().manual_seed(seed)).double().eval()


def tokens_(batch=3, seed=1):
    return torch.randint(0, VOCAB, (batch, SEQ), generator=torch.Generator().manual_seed(seed))


def naive_identity_attention(attn, x, allowed, a, b, zero_diag):
    """x [T, D], allowed [T, T]; head by head with explicit formulas."""
    H, dh = attn.n_heads, attn.d_head
    W, bias = attn.qkv.weight, attn.qkv.bias
    out = torch.zeros_like(x) + (attn.out.bias if attn.out.bias is not None else 0)
    gram = x @ x.T
    if zero_diag:
        gram = gram - torch.diag(torch.diag(gram))
    for h in range(H):
        rows = [slice(i * H * dh + h * dh, i * H * dh + (h + 1) * dh) for i in range(3)]
        q, k, v = (x @ W[r].T + (bias[r] if bias is not None else 0) for r in rows)
        s = q @ k.T / math.sqrt(dh) + (a[h] * gram if a is not None else 0)
        s = s.masked_fill(~allowed, float("-inf"))
        p = torch.softmax(s, dim=-1)
        out = out + (p @ v) @ attn.out.weight[:, h * dh:(h + 1) * dh].T
        if b is not None:
            out = out + b[h] * (p @ x)
    return out


@pytest.mark.parametrize("terms", ["ab", "a", "b"])
@pytest.mark.parametrize("zero_diag", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_identity_attention_matches_naive_reference(terms, zero_diag, bias):
    extra = {"identity_zero_diag": True} if zero_diag else {}
    m = model_(attention="identity", identity_terms=terms, attn_bias=bias, **extra)
    attn = m.layers[0].attn
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():  # non-zero a and b so that the terms are exercised
        for p in (attn.a, attn.b):
            if p is not None:
                p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype))
    assert (attn.a is None) == ("a" not in terms) and (attn.b is None) == ("b" not in terms)
    x = torch.randn(3, SEQ, 12, generator=g, dtype=torch.float64)
    pad = torch.arange(SEQ)[None] < torch.tensor([SEQ, 4, 2])[:, None]
    for causal in (False, True):
        mask = attention_mask(pad, causal, SEQ, x.device)
        got = attn(x, mask, AttentionHooks())
        for i in range(3):
            ref = naive_identity_attention(attn, x[i], mask[i, 0], attn.a, attn.b, zero_diag)
            torch.testing.assert_close(got[i], ref, rtol=1e-10, atol=1e-10)


def test_identity_at_init_equals_softmax_model_exactly():
    plain, mod = model_(seed=3), model_(seed=3, attention="identity")
    for l in range(2):
        assert (mod.layers[l].attn.a == 0).all() and (mod.layers[l].attn.b == 0).all()
    sd = mod.state_dict()
    for k, v in plain.state_dict().items():  # same weights: a, b draw nothing from the RNG
        assert torch.equal(sd[k], v), k
    t = tokens_()
    pos = torch.tensor([[SEQ - 1]] * 3)
    # plain attention on its explicit path (a pattern hook forces it) is bit-for-bit equal
    with hooks(plain, [(f"blocks.{l}.attn.hook_pattern", lambda t, hp: t) for l in range(2)]):
        explicit = plain(t, pos)
    assert torch.equal(mod(t, pos), explicit)
    torch.testing.assert_close(mod(t, pos), plain(t, pos))  # and equal to the fused kernel


def test_identity_scalars_receive_gradient_and_change_the_output():
    m = model_(attention="identity")
    t = tokens_()
    m(t, torch.tensor([[SEQ - 1]] * 3)).sum().backward()
    for l in range(2):
        assert m.layers[l].attn.a.grad.abs().sum() > 0
        assert m.layers[l].attn.b.grad.abs().sum() > 0
    before = m(t).detach()
    with torch.no_grad():
        m.layers[0].attn.b.fill_(0.5)
    assert not torch.allclose(m(t), before)


def test_a_term_reads_the_gram_matrix_of_the_normalised_input():
    # the a term of layer 0 sees X = ln1(resid_pre): check the hooked scores against it
    m = model_(attention="identity", identity_terms="a")
    with torch.no_grad():
        m.layers[0].attn.a.copy_(torch.tensor([0.7, -0.2, 0.0], dtype=torch.float64))
    t = tokens_(1)
    _, cache = run_with_cache(m, t)
    x = m.layers[0].ln1(cache["blocks.0.hook_resid_pre"])[0]  # [T, D]
    q, k = cache["blocks.0.attn.hook_q"][0], cache["blocks.0.attn.hook_k"][0]  # [T, H, dh]
    for h, a in enumerate([0.7, -0.2, 0.0]):
        ref = q[:, h] @ k[:, h].T / math.sqrt(4) + a * x @ x.T
        torch.testing.assert_close(cache["blocks.0.attn.hook_attn_scores"][0, h], ref)


def test_bias_free_projections_have_no_bias():
    m = model_(attn_bias=False)
    for layer in m.layers:
        assert layer.attn.qkv.bias is None and layer.attn.out.bias is None
    n_bias = sum(p.numel() for n, p in model_().named_parameters()
                 if ".attn." in n and "bias" in n)
    assert m.num_params() == model_().num_params() - n_bias
    attn = m.layers[0].attn
    for b in (attn.b_Q, attn.b_K, attn.b_V, attn.b_O):  # the maths' views read zero biases
        assert not b.any()
    assert attn.b_Q.shape == (3, 4) and attn.b_O.shape == (12,)


def test_tied_head_reads_out_through_the_embedding():
    m = model_(tie_head=True, n_classes=VOCAB)
    t = tokens_()
    logits, cache = run_with_cache(m, t)
    ref = cache["hook_final"] @ m.W_E.T
    torch.testing.assert_close(logits, ref)
    sd = m.state_dict()
    assert not [k for k in sd if "head" in k]  # W_E stored once, as W_E
    save_file({k: v.contiguous() for k, v in sd.items()}, "/dev/null")  # safetensors accepts it
    m.zero_grad()
    logits[:, -1].logsumexp(-1).sum().backward()
    assert m.W_E.grad.abs().sum() > 0


@pytest.mark.parametrize("equality", [False, True])
def test_mlp_baseline_matches_naive_reference(equality):
    c = cfg(arch={"name": "mlp_baseline", "input": "shared_embedding", "equality": equality},
            n_layers=2, d_mlp=16)
    m = MODELS["mlp_baseline"](c, generator=torch.Generator().manual_seed(0)).double()
    t = tokens_(4)[:, :SEQ - 2]  # shorter than max_seq_len: padded with PAD = 0
    got = m(t, torch.zeros(4, 1, dtype=torch.long))
    lins = [m.input.linear] + [mod for mod in m.net if isinstance(mod, torch.nn.Linear)]
    for i in range(4):
        toks = t[i].tolist() + [0, 0]
        feats = [m.input.W_E[j] for j in toks]
        h = torch.cat(feats)
        if equality:
            ln = m.input.ln
            xn = [(e - e.mean()) / torch.sqrt(e.var(unbiased=False) + c.ln_eps) * ln.weight
                  + ln.bias for e in feats]
            gram = torch.stack([torch.stack([u @ v / 12 for v in xn]) for u in xn])  # [T, T]
            h = torch.cat([h, gram.flatten()])
        for j, lin in enumerate(lins):
            h = lin.weight @ h + lin.bias
            if j < len(lins) - 1:
                h = F.gelu(h)
        torch.testing.assert_close(got[i, 0], h)


def test_mlp_equality_features_are_symbol_invariant():
    # renaming the symbols (distinct -> distinct) leaves X X^T unchanged up to O(1/sqrt d)
    c = cfg(arch={"name": "mlp_baseline", "input": "shared_embedding", "equality": True},
            d_model=4096, n_heads=4, vocab_size=40, max_seq_len=4)
    m = MODELS["mlp_baseline"](c, generator=torch.Generator().manual_seed(0)).double()
    x = m.input.ln(m.input.W_E[torch.tensor([[5, 7, 5, 9], [20, 31, 20, 33]])])
    gram = x @ x.transpose(1, 2) / 4096
    torch.testing.assert_close(gram[0], gram[1], atol=0.1, rtol=0)
    assert gram[0, 0, 2] > 0.99 and abs(gram[0, 0, 1]) < 0.1


def test_config_rejects_inconsistent_variant_options():
    with pytest.raises(ConfigError, match="identity_terms is an option of attention='identity'"):
        cfg(identity_terms="a")
    with pytest.raises(ConfigError, match="identity_zero_diag is an option of attention="):
        cfg(identity_zero_diag=True)
    with pytest.raises(ConfigError, match="mlp_equality is an option of arch='mlp_baseline'"):
        cfg(mlp_equality=True)
    with pytest.raises(ConfigError, match="unknown key 'model.attention.terms'"):
        cfg(attention={"name": "softmax", "terms": "a"})
    with pytest.raises(ConfigError, match="model.attention.terms: Input should be"):
        cfg(attention={"name": "identity", "terms": "c"})
    with pytest.raises(ConfigError, match="tie_head needs n_classes"):
        cfg(tie_head=True)
    with pytest.raises(ConfigError, match="arch='mlp_baseline' has no attention"):
        cfg(arch="mlp_baseline", attention="identity")
    with pytest.raises(ConfigError, match="arch='mlp_baseline' has no attention and no tied head"):
        cfg(arch={"name": "mlp_baseline", "equality": True}, tie_head=True, n_classes=VOCAB)
    cfg(arch={"name": "mlp_baseline", "equality": True}, attention="softmax")  # default: allowed
    with pytest.raises(ConfigError, match="unknown model architecture 'cnn'"):
        cfg(arch="cnn")


def test_trainable_prefixes_freeze_everything_else(tmp_path):
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.loop import build_model, train

    base = dict(task={"name": "templates", "preset": "same_different", "n_train_symbols": 20,
                      "n_val_symbols": 4, "n_test_symbols": 4},
                model=dict(d_model=8, n_layers=1, n_heads=2, d_mlp=8, norm_position="pre"),
                n_train=32, n_test=8, batch_size=8, steps=3, eval_every=3, ckpt_every=3,
                optim=dict(lr=1e-2))
    c = TrainConfig.build({**base, "trainable": {"prefixes": ["head."]}})
    assert c == TrainConfig.build({**base, "train_only": ["head."]})  # the old name
    before = {k: v.clone() for k, v in build_model(c).state_dict().items()}
    train(c, tmp_path / "run", quiet=True)
    from safetensors.torch import load_file

    after = load_file(tmp_path / "run" / "ckpt" / "state.safetensors")
    # the checkpoint keeps the trained parameters alone (the frozen ones are the seeded init,
    # rebuilt from the config when the run is loaded: train/checkpoint.py, Frozen)
    stored = {k.removeprefix("model.") for k in after if k.startswith("model.")}
    assert stored == {"head.weight", "head.bias"}
    assert all(not torch.equal(after[f"model.{k}"], before[k]) for k in stored)
    import json

    meta = json.loads((tmp_path / "run" / "ckpt" / "state.json").read_text())
    assert set(meta["frozen"]["names"]) == set(before) - stored
    with pytest.raises(ConfigError, match="match no parameter"):
        build_model(TrainConfig.build({**base, "trainable": {"prefixes": ["readout."]}}))
