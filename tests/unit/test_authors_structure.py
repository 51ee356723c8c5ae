"""The authors' model structures, rebuilt from our config options and checked against naive
re-implementations written here from the facts of their public code (the code itself is not
copied; docs/papers.md says what each option reproduces).

A layer that drifts (e.g. a LayerNorm on the embeddings reappearing, a bias coming back, the
wrong activation or epsilon) changes the module list or the outputs, and a test here fails.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.errors import ConfigError
from reasonlab.model import INITS, ModelConfig, Transformer, run_with_cache
from reasonlab.runs import config_id
from reasonlab.train.config import OptimConfig, TrainConfig
from reasonlab.train.optim import make_optimizer

VOCAB, SEQ = 17, 9

# The anchor authors' GPT as our options (studies/anchors/common.py uses the same four).
ANCHOR_AUTHORS = dict(norm_position="post_no_embed_ln", attn_bias=False, mlp_bias=False, act="relu",
                      ln_eps=1e-5)
# The abstract-symbols authors' tied-read-out transformer.
SYMBOL_AUTHORS = dict(norm_position="pre", attn_bias=False, act="gelu", ln_eps=1e-5,
                      ln_final_affine=False, init="torch_default")


def model_(seed: int = 0, **kw) -> Transformer:
    base = dict(vocab_size=VOCAB, n_classes=VOCAB, max_seq_len=SEQ, d_model=16, n_heads=2,
                d_head=8, d_mlp=24, n_layers=2)
    cfg = ModelConfig.build({**base, **kw})
    return Transformer(cfg, generator=torch.Generator().manual_seed(seed)).double().eval()


def tokens_(batch: int = 4, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, VOCAB, (batch, SEQ), generator=torch.Generator().manual_seed(seed))


def split_qkv(layer) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Our fused qkv weight [3 * d_attn, d_model] as the authors' separate W_Q, W_K, W_V."""
    return layer.attn.qkv.weight.chunk(3, dim=0)


def naive_heads(x, Wq, Wk, Wv, n_heads, causal):
    """Multi-head softmax attention, one head at a time, before the output map."""
    T = x.shape[1]
    dh = Wq.shape[0] // n_heads
    outs = []
    for h in range(n_heads):
        rows = slice(h * dh, (h + 1) * dh)
        q, k, v = x @ Wq[rows].T, x @ Wk[rows].T, x @ Wv[rows].T  # [B, T, dh]
        s = q @ k.transpose(1, 2) / math.sqrt(dh)
        if causal:  # the authors fill masked logits with -1e9
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), -1e9)
        outs.append(s.softmax(-1) @ v)
    return torch.cat(outs, dim=-1)  # [B, T, n_heads * dh]


def naive_anchor_gpt(model: Transformer, tokens: torch.Tensor) -> torch.Tensor:
    """The anchor authors' decoder, written from these facts of `anchor_function_pub`
    `model/GPT.py` (commit 8294025):

    - GPT.py:162 `dec_outputs = self.tgt_emb(dec_inputs) + self.pos_emb(pos)`: the summed
      embeddings go straight into layer 1, no LayerNorm, no dropout;
    - GPT.py:78-81 W_Q, W_K, W_V and the output map `fc` are `nn.Linear(..., bias=False)`;
      GPT.py:82 / 114 `nn.LayerNorm(args.d_model)` (PyTorch's eps 1e-5);
    - GPT.py:104 `return self.layernorm(output + residual)`: post-LN after attention;
    - GPT.py:110-112 `nn.Linear(d_model, d_feedforward, bias=False), nn.ReLU(),
      nn.Linear(d_feedforward, d_model, bias=False)`; GPT.py:122 post-LN after the MLP;
    - GPT.py:189 `self.projection = nn.Linear(args.d_model, args.vocab_size)`: the read-out
      keeps its bias, and no LayerNorm precedes it.
    """
    cfg = model.config
    T = tokens.shape[1]
    x = model.W_E[tokens] + model.W_pos[:T]
    for layer in model.layers:
        Wq, Wk, Wv = split_qkv(layer)
        z = naive_heads(x, Wq, Wk, Wv, cfg.n_heads, causal=True)
        x = F.layer_norm(z @ layer.attn.out.weight.T + x, (cfg.d_model,),
                         layer.ln1.weight, layer.ln1.bias, eps=1e-5)
        h = torch.relu(x @ layer.mlp.fc_in.weight.T) @ layer.mlp.fc_out.weight.T
        x = F.layer_norm(h + x, (cfg.d_model,), layer.ln2.weight, layer.ln2.bias, eps=1e-5)
    return x @ model.head.weight.T + model.head.bias


def naive_symbols_transformer(model: Transformer, tokens: torch.Tensor) -> torch.Tensor:
    """The abstract-symbols authors' tied-read-out transformer, written from these facts of
    `eboix/relational-reasoning` `experiments/models.py`:

    - models.py:415, 418 `nn.Embedding(num_token_types, dim)` and `torch.randn` positions,
      added (models.py:446) with no LayerNorm;
    - models.py:190-196 PreNorm with `nn.LayerNorm(dim)` (eps 1e-5), models.py:330-333
      `x = attn(x) + x; x = ff(x) + x`, and no LayerNorm after the last block;
    - models.py:235-239 `to_qk`, `to_v`, `to_out` are `nn.Linear(..., bias = False)`;
    - models.py:201-205 the MLP `nn.Linear(dim, hidden_dim), nn.GELU(), ...,
      nn.Linear(hidden_dim, dim)` keeps its biases;
    - models.py:432, 457 `nn.LayerNorm(dim, elementwise_affine = False)` on the read-out
      token, then models.py:459 `x @ self.to_embedding.weight.T` over ALL tokens.
    """
    cfg = model.config
    T = tokens.shape[1]
    x = model.W_E[tokens] + model.W_pos[:T]
    for layer in model.layers:
        Wq, Wk, Wv = split_qkv(layer)
        a = F.layer_norm(x, (cfg.d_model,), layer.ln1.weight, layer.ln1.bias, eps=1e-5)
        x = naive_heads(a, Wq, Wk, Wv, cfg.n_heads, causal=False) @ layer.attn.out.weight.T + x
        m = F.layer_norm(x, (cfg.d_model,), layer.ln2.weight, layer.ln2.bias, eps=1e-5)
        mlp = layer.mlp
        x = F.gelu(m @ mlp.fc_in.weight.T + mlp.fc_in.bias) @ mlp.fc_out.weight.T \
            + mlp.fc_out.bias + x
    x = F.layer_norm(x, (cfg.d_model,), eps=1e-5)  # no gain, no bias
    return x @ model.W_E.T


def layer_norms(model: nn.Module) -> dict[str, nn.LayerNorm]:
    return {n: m for n, m in model.named_modules() if isinstance(m, nn.LayerNorm)}


# -- anchor functions (Zhang et al. 2024; predecessor code anchor_function_pub) -------------


@pytest.mark.parametrize("gamma", [0.3, 0.8])
def test_anchor_authors_gpt_matches_naive_reimplementation(gamma):
    """norm_position="post_no_embed_ln" + attn_bias/mlp_bias False + ReLU + eps 1e-5 is the authors'
    GPT (see `naive_anchor_gpt` for the file and lines), same weights -> same logits."""
    model = model_(causal=True, n_heads=1, d_head=8, init="rate", init_gamma=gamma,
                   n_classes=VOCAB, **ANCHOR_AUTHORS)
    t = tokens_()
    torch.testing.assert_close(model(t), naive_anchor_gpt(model, t), rtol=1e-9, atol=1e-9)


def test_anchor_authors_gpt_module_list():
    """Exactly the authors' layers: LayerNorms only inside the blocks (GPT.py:82, 114), all
    with eps 1e-5; the only bias is the read-out's (GPT.py:189); ReLU (GPT.py:111)."""
    model = model_(causal=True, init="rate", init_gamma=0.5, **ANCHOR_AUTHORS)
    lns = layer_norms(model)
    assert sorted(lns) == ["layers.0.ln1", "layers.0.ln2", "layers.1.ln1", "layers.1.ln2"]
    assert model.ln_embed is None and model.ln_final is None
    assert all(ln.eps == 1e-5 and ln.elementwise_affine for ln in lns.values())
    biases = [n for n, _ in model.named_parameters() if n.endswith("bias")
              and not any(n.startswith(k) for k in lns)]
    assert biases == ["head.bias"]
    assert all(isinstance(l.mlp.act, nn.ReLU) for l in model.layers)
    assert torch.equal(model.layers[0].mlp.b_in, torch.zeros(24, dtype=torch.float64))


def test_bert_post_ln_is_not_the_anchor_authors_structure():
    """The comparison is sensitive to the embedding LayerNorm: our BERT-style "post" puts one
    on the embeddings (transformer.py `ln_embed`), and then the naive GPT disagrees."""
    model = model_(causal=True, init="rate", init_gamma=0.8,
                   **{**ANCHOR_AUTHORS, "norm_position": "post"})
    assert "ln_embed" in layer_norms(model)
    t = tokens_()
    assert not torch.allclose(model(t), naive_anchor_gpt(model, t), atol=1e-3)


def test_small_initialization_reaches_layer_one_only_without_embedding_ln():
    """The knob the anchor paper studies: at gamma 0.8 the embeddings are small, and layer 1
    sees them small without an embedding LayerNorm (GPT.py:162) but at unit RMS with one."""
    rms = {}
    for norm in ("post", "post_no_embed_ln"):
        model = model_(causal=True, init="rate", init_gamma=0.8,
                       **{**ANCHOR_AUTHORS, "norm_position": norm})
        _, cache = run_with_cache(model, tokens_())
        rms[norm] = cache["blocks.0.hook_resid_pre"].pow(2).mean().sqrt().item()
    assert rms["post"] == pytest.approx(1.0, rel=1e-3)
    assert rms["post_no_embed_ln"] < 0.5  # about sqrt(2) * 16^-0.8 = 0.15


# -- abstract symbols (Boix-Adsera et al. 2024; eboix/relational-reasoning) -----------------


def test_symbols_authors_transformer_matches_naive_reimplementation():
    """Pre-LN, bias-free attention, MLP with biases and GELU, eps 1e-5, final LayerNorm
    without affine, read-out tied to W_E over all tokens: the authors' model (see
    `naive_symbols_transformer` for the file and lines), same weights -> same logits."""
    model = model_(tie_head=True, **SYMBOL_AUTHORS)
    t = tokens_()
    last = torch.full((t.shape[0], 1), SEQ - 1)
    torch.testing.assert_close(model(t, label_pos=last)[:, 0],
                               naive_symbols_transformer(model, t)[:, -1], rtol=1e-9,
                               atol=1e-9)


def test_symbols_authors_module_list():
    """models.py:193 PreNorm LayerNorms (eps 1e-5) and models.py:432 one final LayerNorm with
    no parameters; no attention biases (models.py:235-239), MLP biases kept (201-205)."""
    model = model_(tie_head=True, **SYMBOL_AUTHORS)
    lns = layer_norms(model)
    assert sorted(lns) == ["layers.0.ln1", "layers.0.ln2", "layers.1.ln1", "layers.1.ln2",
                           "ln_final"]
    assert all(ln.eps == 1e-5 for ln in lns.values())
    assert not lns["ln_final"].elementwise_affine
    assert not any(n.startswith("ln_final") for n, _ in model.named_parameters())
    assert model.layers[0].attn.qkv.bias is None and model.layers[0].attn.out.bias is None
    assert model.layers[0].mlp.fc_in.bias is not None


def test_ln_final_affine_needs_pre_ln():
    with pytest.raises(ConfigError, match="ln_final_affine=False needs norm_position=.pre."):
        model_(norm_position="post", ln_final_affine=False)


# -- torch_default initialization ---------------------------------------------------------


def test_torch_default_init_draws_pytorchs_defaults():
    """PyTorch's own defaults, which the abstract-symbols authors keep (models.py:415, 418:
    `nn.Embedding` and `torch.randn`, never re-initialized): W_E and W_pos ~ N(0, 1); every
    Linear weight and bias ~ U(+-1/sqrt(fan_in)) (`nn.Linear.reset_parameters`);
    LayerNorms 1 / 0; the identity-attention scalars 0 (models.py:223, 228)."""
    model = model_(d_model=64, d_head=16, n_heads=4, d_mlp=256, n_classes=5, init="torch_default",
                   attention="identity", norm_position="pre")
    assert model.W_E.std().item() == pytest.approx(1.0, abs=0.1)
    assert model.W_pos.std().item() == pytest.approx(1.0, abs=0.15)
    for name, mod in model.named_modules():
        if isinstance(mod, nn.Linear):
            bound = 1 / math.sqrt(mod.in_features)
            for p in (mod.weight, mod.bias):
                if p is None:
                    continue
                assert p.abs().max().item() <= bound, name
                if p.numel() > 500:  # U(-b, b) has std b / sqrt(3)
                    assert p.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.1), name
        if isinstance(mod, nn.LayerNorm):
            assert torch.all(mod.weight == 1) and torch.all(mod.bias == 0)
    for layer in model.layers:
        assert torch.all(layer.attn.a == 0) and torch.all(layer.attn.b == 0)


def test_torch_default_linear_is_kaiming_uniform_a_sqrt5():
    """The same numbers `nn.init.kaiming_uniform_(w, a=sqrt(5))` (what `nn.Linear` calls)
    draws from the same generator state."""
    cfg = ModelConfig.build(dict(vocab_size=5, n_classes=3, max_seq_len=4, d_model=8,
                                 n_heads=2, d_mlp=16, n_layers=1, init="torch_default"))
    model = Transformer(cfg)
    gen = torch.Generator().manual_seed(3)
    INITS["torch_default"].apply(model.layers[0].mlp, cfg, gen)  # fc_in.weight is drawn first
    ref = torch.empty(16, 8)
    nn.init.kaiming_uniform_(ref, a=math.sqrt(5), generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(model.layers[0].mlp.fc_in.weight.detach(), ref)


# -- defaults keep old behaviour and old run ids -------------------------------------------


def test_new_fields_at_defaults_leave_config_ids_alone():
    """A run id hashes only non-default values, so configs that do not set the new options
    keep their ids (runs.py); setting one changes the id."""
    base = {"task": {"name": "anchors"}, "model": {"d_model": 16, "n_heads": 1, "d_mlp": 32}}
    plain = TrainConfig.build(base)
    dump = plain.model_dump(mode="json", exclude_defaults=True)
    for field in ("mlp_bias", "ln_final_affine"):
        assert field not in dump["model"]
    assert "weight_decay_on" not in dump.get("optim", {})
    assert "split_modulus" not in dump["task"] and "noise_split" not in dump["task"]
    other = TrainConfig.build({**base, "model": {**base["model"], "mlp_bias": False}})
    assert config_id(other) != config_id(plain)


def test_weight_decay_on_all_decays_every_parameter():
    """anchor_function_pub train.py:104 `optim.AdamW(model.parameters(), lr=args.lr)`:
    PyTorch's weight decay 0.01 on every parameter, LayerNorms and biases included."""
    model = model_(causal=True, init="rate", init_gamma=0.5, **ANCHOR_AUTHORS)
    n = len(list(model.parameters()))
    groups = make_optimizer(model, OptimConfig(weight_decay_on="all")).param_groups
    assert [len(g["params"]) for g in groups] == [n, 0]
    groups = make_optimizer(model, OptimConfig()).param_groups
    assert 0 < len(groups[1]["params"]) and groups[1]["weight_decay"] == 0.0


def test_all_tokens_readout_ranks_every_token():
    """models.py:459: the authors' symbolic read-out ranks ALL tokens, in training and test;
    `answer_classes="all_tokens"` drops our per-split mask (the default keeps it)."""
    from reasonlab.tasks import build_task

    base = {"name": "templates", "preset": "copy", "length": 2, "n_train_symbols": 8,
            "n_val_symbols": 2, "n_test_symbols": 4}
    masked = build_task(base)
    assert masked.class_mask("train").sum() == 8 and masked.class_mask("test").sum() == 4
    full = build_task({**base, "answer_classes": "all_tokens"})
    assert full.class_mask("train") is None and full.class_mask("test") is None


@pytest.mark.parametrize("scale", ["smoke", "cpu", "paper"])
def test_studies_build_the_authors_structures(scale):
    """Every anchor study's model is the authors' GPT (the embedding-norm study's other arms
    excepted, by name), every abstract-symbols study's transformer the authors' (BERT-init
    arms excepted, by name); the language-model study is not from models.py and is left out."""
    from reasonlab.studies import STUDIES

    def fields(m, want):  # variant fields compared as their resolved sub-configs
        ref = ModelConfig.build({**m.model_dump(), **want})
        return ({k: getattr(m, k) for k in want}, {k: getattr(ref, k) for k in want})

    for name in STUDIES:
        if not name.startswith(("anchors-", "symbols-")) or name == "symbols-language-model":
            continue
        study = STUDIES[name]()
        for spec in study.runs(scale, 1):
            m = spec.config.model
            if name.startswith("anchors-"):
                if spec.arm in ("authors + embedding LayerNorm", "BERT post-LN (our previous)"):
                    continue
                got, want = fields(m, ANCHOR_AUTHORS)
                assert got == want, (name, spec.arm)
                assert spec.config.optim.weight_decay_on == "all"
            elif m.arch.name == "mlp_baseline":  # the authors' MLPs (models.py 17-122): ReLU
                assert m.act == "relu", (name, spec.arm)
                assert m.init.name == "torch_default" or "BERT init" in spec.arm
            elif "BERT init" not in spec.arm:
                got, want = fields(m, SYMBOL_AUTHORS)
                assert got == want, (name, spec.arm)
