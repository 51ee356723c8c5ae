"""init="rate": empirical std of every parameter against (1/d_in)^gamma, and config rules."""

import pytest
import torch

from reasonlab.errors import ConfigError
from reasonlab.model import ModelConfig, Transformer

D, D_HEAD, D_MLP, VOCAB = 96, 48, 288, 120


def expected_d_in(name: str) -> int | None:
    """d_in of each parameter, written out by hand from the architecture (None: LayerNorm)."""
    if ".ln" in name or name.startswith("ln"):
        return None
    if name in ("W_E", "W_pos") or name.startswith("head."):
        return D
    if ".attn.qkv." in name or ".mlp.fc_in." in name:
        return D
    if ".attn.out." in name:
        return D_HEAD  # one head: d_attn = d_head
    if ".mlp.fc_out." in name:
        return D_MLP
    raise AssertionError(f"unexpected parameter {name}")


@pytest.mark.parametrize("gamma", [0.3, 0.5, 0.8])
def test_empirical_std_matches_rate(gamma):
    cfg = ModelConfig.build(vocab_size=VOCAB, n_classes=100, max_seq_len=9, d_model=D,
                            n_layers=2, n_heads=1, d_head=D_HEAD, d_mlp=D_MLP, causal=True,
                            norm_position="post", init="rate", init_gamma=gamma)
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    checked = 0
    for name, p in model.named_parameters():
        d_in = expected_d_in(name)
        if d_in is None:
            assert torch.all(p == (1.0 if name.endswith("weight") else 0.0)), name
            continue
        want = d_in ** -gamma
        got = p.double().std().item()
        # relative standard error of a sample std is about 1/sqrt(2 n); n >= 96 here
        tol = 4 / (2 * p.numel()) ** 0.5
        assert abs(got / want - 1) < tol, (name, got, want)
        assert abs(p.double().mean().item()) < 4 * want / p.numel() ** 0.5, name
        checked += 1
    assert checked == 2 + 2 * 8 + 2  # W_E, W_pos, 8 per layer (4 Linear x w,b), head w,b


def test_rate_scale_orders_layers():
    """Smaller gamma -> larger weights, by exactly d_in^(g1-g2) for the same draws."""
    def model(g):
        cfg = ModelConfig.build(vocab_size=VOCAB, n_classes=10, max_seq_len=9, d_model=D,
                                n_heads=1, d_head=D_HEAD, d_mlp=D_MLP, init="rate", init_gamma=g)
        return Transformer(cfg, generator=torch.Generator().manual_seed(1))

    a, b = dict(model(0.4).named_parameters()), dict(model(0.7).named_parameters())
    ratio = a["layers.0.mlp.fc_out.weight"] / b["layers.0.mlp.fc_out.weight"]
    assert torch.allclose(ratio, torch.full_like(ratio, D_MLP ** 0.3), rtol=1e-5)


@pytest.mark.parametrize("kw, needle", [
    (dict(init="rate"), "missing key 'model.init.gamma'"),
    (dict(init={"name": "rate"}), "missing key 'model.init.gamma'"),
    (dict(init_gamma=0.5), "init_gamma is an option of init='rate'"),
    (dict(init={"name": "default", "gamma": 0.5}), "unknown key 'model.init.gamma'"),
    (dict(init="rate", init_gamma=-1.0), "model.init.gamma: Input should be greater than 0"),
    (dict(init={"name": "rate", "gamma": 0.5}, init_gamma=0.4), "disagrees"),
])
def test_rate_config_errors(kw, needle):
    with pytest.raises(ConfigError, match=needle):
        ModelConfig.build(vocab_size=5, n_classes=3, max_seq_len=4, **kw)


def test_equivalent_gamma_matches_the_relative_scale():
    """The cpu grid keeps the paper's scale relative to 1/sqrt(d_in): d^(0.5 - gamma') at
    d 64 equals 400^(0.5 - gamma) (to the 2-decimal rounding), so gamma 0.3 .. 0.8 at d 400
    becomes 0.21 .. 0.93 at d 64."""
    from reasonlab.studies.anchors.common import equivalent_gamma

    for g in (0.3, 0.5, 0.55, 0.8):
        g64 = equivalent_gamma(g, 64)
        assert abs(64 ** (0.5 - g64) / 400 ** (0.5 - g) - 1) < 0.03
    assert (equivalent_gamma(0.3, 64), equivalent_gamma(0.8, 64)) == (0.21, 0.93)
