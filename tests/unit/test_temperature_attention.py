"""Softmax temperature, NormSoftmax and heat treatment (Hoffmann et al. 2024; model/
temperature_attention.py) against naive references written here: a head-by-head loop with
explicit formulas, and NormSoftmax row by row in numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.model import ModelConfig, Transformer
from reasonlab.model.transformer import attention_mask

VOCAB, SEQ = 13, 7


def cfg(**kw) -> ModelConfig:
    base = dict(vocab_size=VOCAB, n_classes=4, max_seq_len=SEQ, d_model=12, n_heads=3,
                d_mlp=20, n_layers=2, norm_position="pre", init_std=0.3)
    return ModelConfig.build({**base, **kw})


def model_(attention, seed=0):
    return Transformer(cfg(attention=attention),
                       generator=torch.Generator().manual_seed(seed)).double().eval()


def tokens_(batch=3, seed=1):
    return torch.randint(0, VOCAB, (batch, SEQ), generator=torch.Generator().manual_seed(seed))


def pad_(batch=3):
    pad = torch.ones(batch, SEQ, dtype=torch.bool)
    pad[0, 5:] = False  # sentence 0 has 5 real tokens
    return pad


def naive_norm_softmax(x: np.ndarray, allowed: np.ndarray, gamma: float, statistic: str
                       ) -> np.ndarray:
    """One row of logits x [k] over its allowed keys: x / min(spread, gamma), softmax."""
    a = x[allowed]
    spread = a.var() + 1e-6 if statistic == "var" else math.sqrt(a.var() + 1e-6)
    z = a / min(spread, gamma)
    p = np.exp(z - z.max())
    out = np.zeros_like(x)
    out[allowed] = p / p.sum()
    return out


def naive_attention(attn, x, allowed, row_softmax):
    """x [T, D], allowed [T, T]; head by head: q k^T / sqrt(d_head), then `row_softmax` of each
    row (logits, allowed) -> probabilities, then values through W_O."""
    H, dh = attn.n_heads, attn.d_head
    W, bias = attn.qkv.weight, attn.qkv.bias
    out = torch.zeros_like(x) + attn.out.bias
    for h in range(H):
        rows = [slice(i * H * dh + h * dh, i * H * dh + (h + 1) * dh) for i in range(3)]
        q, k, v = (x @ W[r].T + bias[r] for r in rows)
        s = (q @ k.T / math.sqrt(dh)).detach().numpy()
        p = torch.tensor(np.stack([row_softmax(s[i], allowed[i].numpy())
                                   for i in range(len(s))]))
        out = out + (p @ v) @ attn.out.weight[:, h * dh:(h + 1) * dh].T
    return out


def softmax_at(tau_ratio):
    """Softmax of logits multiplied by tau_ratio (= sqrt(d_head) / tau) over the allowed keys."""
    def row(x, allowed):
        z = x[allowed] * tau_ratio
        p = np.exp(z - z.max())
        out = np.zeros_like(x)
        out[allowed] = p / p.sum()
        return out
    return row


def layer_outputs(model, tokens, pad):
    """Each layer's attention input and output (ln1(x), attn(ln1(x))) of one forward pass."""
    seen = []
    hooks = [layer.attn.register_forward_hook(
        lambda m, args, out: seen.append((args[0].detach(), out.detach())))
        for layer in model.layers]
    try:
        model(tokens, pad_mask=pad)
    finally:
        for h in hooks:
            h.remove()
    return seen


@torch.no_grad()
def check_against(model, row_softmax, pad=None):
    tokens = tokens_()
    mask = attention_mask(pad, False, SEQ, tokens.device)
    for layer, (x, out) in zip(model.layers, layer_outputs(model, tokens, pad)):
        for b in range(len(tokens)):
            allowed = (mask[b if mask.shape[0] > 1 else 0, 0] if mask is not None
                       else torch.ones(SEQ, SEQ, dtype=torch.bool))
            want = naive_attention(layer.attn, x[b], allowed, row_softmax)
            torch.testing.assert_close(out[b], want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("tau", [0.5, 1.0, 3.0])
def test_temperature_against_naive(tau):
    model = model_({"name": "temperature", "tau": tau})
    d_head = model.layers[0].attn.d_head
    check_against(model, softmax_at(math.sqrt(d_head) / tau))
    check_against(model, softmax_at(math.sqrt(d_head) / tau), pad_())


def test_temperature_at_sqrt_d_head_is_softmax():
    d_head = 12 // 3
    plain, warm = model_("softmax"), model_({"name": "temperature", "tau": math.sqrt(d_head)})
    warm.load_state_dict(plain.state_dict())
    tokens = tokens_()
    torch.testing.assert_close(warm(tokens), plain(tokens), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.05, 1.0, 100.0])
@pytest.mark.parametrize("statistic", ["std", "var"])
def test_norm_softmax_against_naive(gamma, statistic):
    model = model_({"name": "norm_softmax", "gamma": gamma, "statistic": statistic})
    row = lambda x, allowed: naive_norm_softmax(x, allowed, gamma, statistic)  # noqa: E731
    check_against(model, row)
    check_against(model, row, pad_())  # masked keys take no part in the spread


def test_norm_softmax_gamma_bounds_the_divisor():
    """A small gamma makes every row's divisor gamma (a fixed temperature sqrt(d_head)/...):
    the same as `temperature` with tau = gamma * sqrt(d_head), since x = q k^T / sqrt(d_head)."""
    d_head = 12 // 3
    norm = model_({"name": "norm_softmax", "gamma": 1e-4})
    fixed = model_({"name": "temperature", "tau": 1e-4 * math.sqrt(d_head)})
    fixed.load_state_dict(norm.state_dict())
    tokens = tokens_()
    torch.testing.assert_close(norm(tokens), fixed(tokens), rtol=1e-9, atol=1e-9)


def test_norm_softmax_gradient_flows_through_the_spread():
    """The spread is part of the function: autograd's d/dW_Q equals a finite difference on
    one weight, which a version that detached the spread (or its clamp) would not match
    (gamma 100: every row is divided by its own spread)."""
    model = model_({"name": "norm_softmax", "gamma": 100.0})
    tokens = tokens_()
    w = model.layers[0].attn.qkv.weight
    loss = model(tokens).square().sum()
    (g,) = torch.autograd.grad(loss, [w])
    eps = 1e-6
    with torch.no_grad():
        w[0, 0] += eps
        up = model(tokens).square().sum()
        w[0, 0] -= 2 * eps
        down = model(tokens).square().sum()
        w[0, 0] += eps
    torch.testing.assert_close(g[0, 0], (up - down) / (2 * eps), rtol=1e-5, atol=1e-8)


def test_heat_treatment_follows_the_step():
    d_head = 12 // 3
    heat = model_({"name": "heat_treatment", "tau": 1.0, "steps": 10})
    cold = model_({"name": "temperature", "tau": 1.0})
    plain = model_("softmax")
    for m in (cold, plain):
        m.load_state_dict(heat.state_dict())
    tokens = tokens_()
    attn = [layer.attn for layer in heat.layers]
    for step, like in ((0, cold), (9, cold), (10, plain), (500, plain), (None, plain)):
        for a in attn:
            a.set_step(step)
        torch.testing.assert_close(heat(tokens), like(tokens), rtol=1e-12, atol=1e-12,
                                   msg=f"step {step}")
    assert math.sqrt(d_head) == attn[0].current_tau()


@pytest.mark.parametrize("attention,message", [
    ({"name": "temperature"}, "tau"),
    ({"name": "temperature", "tau": 0.0}, "tau"),
    ({"name": "norm_softmax", "gamma": -1.0}, "gamma"),
    ({"name": "norm_softmax", "statistic": "mad"}, "statistic"),
    ({"name": "heat_treatment", "tau": 1.0}, "steps"),
])
def test_bad_options_are_one_config_error(attention, message):
    with pytest.raises(ConfigError, match=message):
        cfg(attention=attention)
