"""Llama pieces (RMSNorm, SwiGLU, grouped-query attention) and the SmolLM2-135M converter.

The pieces are checked against naive implementations written here; the converter against
`transformers`' LlamaForCausalLM holding the weights that transformers' own GGUF loader
(`load_gguf_checkpoint`, which undoes llama.cpp's Q/K permutation by its own code) reads from
the same file, and against English ("The capital of France is" -> " Paris").
Skipped (with the reason) only when the weights package, `gguf` or `transformers` is absent.
"""

from __future__ import annotations

import math

import pytest
import torch

from reasonlab.model import ModelConfig, Transformer, run_with_cache
from reasonlab.model.gguf import SMOLLM2_ARCH, unpermute
from reasonlab.model.llama import RMSNorm, SwiGLU
from reasonlab.model.pretrained import SMOLLM2, load_pretrained

needs_weights = pytest.mark.skipif(
    not SMOLLM2.available(), reason=f"weights absent; install: {SMOLLM2.install_hint}")
pytest.importorskip("gguf", reason="gguf not installed (bash scripts/setup.sh)")

TOL = 1e-3  # float32, 30 layers; measured 3.1e-4 with residual entries up to 1.2e4 (rel. 3e-8)


def llama_config(**kw) -> ModelConfig:
    return ModelConfig.build({**SMOLLM2_ARCH, "vocab_size": 49152, "n_classes": 49152,
                              "max_seq_len": 64, "tie_head": True, **kw})


def ours(n_layers: int = 30) -> Transformer:
    model = Transformer(llama_config(n_layers=n_layers), torch.Generator().manual_seed(0))
    load_pretrained(model, "smollm2-135m", None)
    return model.eval()


# -------------------------------------------------------------------- pieces vs naive maths


def test_rmsnorm_is_x_over_rms_times_gain():
    norm = RMSNorm(8, llama_config())
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 2.0, 8))
    x = torch.randn(3, 5, 8, dtype=torch.float64).float()
    want = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * norm.weight
    assert torch.allclose(norm(x), want, atol=1e-6)
    assert not any(n == "bias" for n, _ in norm.named_parameters())


def test_swiglu_is_gated_silu():
    cfg = llama_config(d_model=16, d_mlp=24, n_heads=4, n_kv_heads=2)
    mlp = SwiGLU(cfg)
    x = torch.randn(2, 3, 16)
    gate, up = x @ mlp.fc_gate.weight.T, x @ mlp.fc_in.weight.T
    want = (gate * torch.sigmoid(gate) * up) @ mlp.fc_out.weight.T
    assert torch.allclose(mlp(x), want, atol=1e-5)


@pytest.mark.parametrize("pattern_path", [False, True])
def test_grouped_query_attention_matches_naive_heads(pattern_path):
    """6 query heads, 2 key/value heads: query head h reads key/value head h // 3; causal
    mask; rotary on q and k."""
    cfg = llama_config(d_model=24, n_heads=6, n_kv_heads=2, d_mlp=32, n_layers=1)
    model = Transformer(cfg, torch.Generator().manual_seed(1))
    attn = model.layers[0].attn
    x = torch.randn(2, 7, 24)
    from reasonlab.model.attention import AttentionHooks

    hooks = AttentionHooks()
    if pattern_path:  # a hook on the pattern takes the explicit (non-fused) path
        hooks.hook_pattern.add_hook(lambda t, h: None)
    got = attn(x, torch.ones(1, 1, 7, 7, dtype=torch.bool).tril(), hooks)
    # naive: per head, separate projections from the W_Q / W_K / W_V views
    Wq, Wk, Wv, Wo = attn.W_Q, attn.W_K, attn.W_V, attn.W_O  # [H|Hkv, d_model, d_head]
    assert Wk.shape[0] == 2 and Wq.shape[0] == 6
    outs = []
    for h in range(6):
        q = attn.rotary((x @ Wq[h])[:, :, None])[:, :, 0]  # [batch, seq, d_head]
        k = attn.rotary((x @ Wk[h // 3])[:, :, None])[:, :, 0]
        v = x @ Wv[h // 3]
        s = q @ k.transpose(1, 2) / math.sqrt(4)
        s = s.masked_fill(~torch.ones(7, 7, dtype=torch.bool).tril(), float("-inf"))
        outs.append(s.softmax(-1) @ v @ Wo[h])
    assert torch.allclose(got, sum(outs), atol=1e-5)


def test_unpermute_inverts_llama_cpp_permute():
    """llama.cpp convert_hf_to_gguf.py `LlamaModel.permute`, written out here as they do."""
    def permute(w, n_head):
        return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
                .swapaxes(1, 2).reshape(w.shape))

    w = torch.randn(3 * 8, 5)
    assert torch.equal(unpermute(permute(w, 3), 3), w)
    assert not torch.equal(permute(w, 3), w)


def test_random_init_llama_builds_without_weights():
    """The frozen-random baseline: the same architecture, randomly initialised."""
    model = Transformer(llama_config(n_layers=2, vocab_size=10, n_classes=10),
                        torch.Generator().manual_seed(0))
    out = model(torch.randint(0, 10, (2, 9)))
    assert out.shape == (2, 9, 10) and torch.isfinite(out).all()
    norms = [m for n, m in model.named_modules() if n.endswith(("ln1", "ln2", "ln_final"))]
    assert all(isinstance(m, torch.nn.RMSNorm) and torch.equal(m.weight, torch.ones(576))
               for m in norms)


# -------------------------------------------------------------------- converter vs transformers


def hf_llama():
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    meta = SMOLLM2.metadata()
    config = transformers.LlamaConfig(
        vocab_size=meta["vocab_size"], hidden_size=meta["embedding_length"],
        intermediate_size=meta["feed_forward_length"], num_hidden_layers=meta["block_count"],
        num_attention_heads=meta["attention.head_count"],
        num_key_value_heads=meta["attention.head_count_kv"],
        rms_norm_eps=meta["attention.layer_norm_rms_epsilon"],
        rope_theta=meta["rope.freq_base"], max_position_embeddings=meta["context_length"],
        tie_word_embeddings=True, attention_bias=False, mlp_bias=False, hidden_act="silu")
    model = transformers.LlamaForCausalLM(config)
    sd = load_gguf_checkpoint(str(SMOLLM2.path()), return_tensors=True,
                              model_to_load=model)["tensors"]
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    model.tie_weights()
    return model.eval()


@needs_weights
@pytest.mark.slow
def test_hidden_states_and_logits_match_transformers():
    ref = hf_llama()
    model = ours()
    ids = torch.randint(0, 49152, (2, 40), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out = ref(input_ids=ids, output_hidden_states=True)
        logits, cache = run_with_cache(model, ids, names_filter=lambda n: "resid" in n
                                       or n == "hook_final")
    hs = out.hidden_states  # embeddings, layers 0..28 outputs, final norm(layer 29 output)
    diffs = [(cache["blocks.0.hook_resid_pre"] - hs[0]).abs().max().item()]
    diffs += [(cache[f"blocks.{l}.hook_resid_post"] - hs[l + 1]).abs().max().item()
              for l in range(29)]
    diffs.append((cache["hook_final"] - hs[30]).abs().max().item())
    scale = hs[29].abs().max().item()
    print(f"max abs difference (embed, layers, final): max {max(diffs):.2e}, "
          f"residual scale {scale:.1f}; logits {(logits - out.logits).abs().max():.2e}")
    assert max(diffs) < TOL
    assert (logits - out.logits).abs().max() < TOL * 10  # tied head: 576-long dot products
    assert (hs[29] - hs[0]).abs().max() > 1.0  # the layers do change the residual stream


@needs_weights
def test_knows_the_capital_of_france():
    """The converted model speaks English. (The Q/K un-permutation is checked by the parity
    test: this short prompt survives a wrong one, as measured.)"""
    vocab = {t: i for i, t in enumerate(SMOLLM2.vocab())}
    ids = torch.tensor([[vocab[t] for t in ("The", "Ġcapital", "Ġof", "ĠFrance", "Ġis")]])
    with torch.no_grad():
        logits = ours()(ids)[0, -1]
    assert logits.argmax().item() == vocab["ĠParis"]


@needs_weights
def test_first_k_layers_equal_the_full_models_prefix():
    ids = torch.randint(0, 49152, (2, 12), generator=torch.Generator().manual_seed(1))
    short = ours(n_layers=4)
    _, full = run_with_cache(ours(), ids, names_filter="blocks.3.hook_resid_post")
    _, cut = run_with_cache(short, ids, names_filter="blocks.3.hook_resid_post")
    assert torch.equal(full["blocks.3.hook_resid_post"], cut["blocks.3.hook_resid_post"])
    assert len(short.layers) == 4


def test_train_config_smollm2_keeps_first_layers():
    from reasonlab.errors import ConfigError
    from reasonlab.train.config import TrainConfig

    task = {"name": "lego", "n_clauses": 4, "n_train_vars": 2}
    cfg = TrainConfig.build({"task": task, "model": {"n_layers": 3},
                             "init_from": "smollm2-135m"})
    assert cfg.model.n_layers == 3 and cfg.model.n_kv_heads == 3  # SmolLM2: 9 / 3
    assert cfg.model.norm_layer.name == "rmsnorm" and cfg.model.mlp.name == "swiglu"
    with pytest.raises(ConfigError, match="n_layers=31 disagrees"):
        TrainConfig.build({"task": task, "model": {"n_layers": 31},
                           "init_from": "smollm2-135m"})



def test_n_kv_heads_counts_key_value_heads_and_old_kv_groups_still_load():
    """n_kv_heads is the number of key/value heads (TransformerLens, HF, litgpt); a config
    written with the old kv_groups (query heads per key/value head) converts on load, so old
    run folders' config.json still validate."""
    from reasonlab.errors import ConfigError
    from reasonlab.model.config import ModelConfig

    base = {"vocab_size": 10, "n_classes": 2, "max_seq_len": 8, "d_model": 48}
    gqa = ModelConfig.build({**base, "n_heads": 12, "n_kv_heads": 4})
    assert (gqa.n_kv_heads_, gqa.queries_per_kv_head) == (4, 3)
    assert ModelConfig.build({**base, "n_heads": 12, "kv_groups": 4}).n_kv_heads == 3  # 12/4
    assert ModelConfig.build({**base, "n_heads": 12, "kv_groups": 1}).n_kv_heads is None
    mha = ModelConfig.build({**base, "n_heads": 12})
    assert (mha.n_kv_heads, mha.n_kv_heads_, mha.queries_per_kv_head) == (None, 12, 1)
    assert "n_kv_heads" not in mha.model_dump(exclude_defaults=True)  # run ids of MHA unchanged
    with pytest.raises(ConfigError, match="n_kv_heads=5 .*must divide n_heads=12"):
        ModelConfig.build({**base, "n_heads": 12, "n_kv_heads": 5})
    with pytest.raises(ConfigError, match="disagree"):
        ModelConfig.build({**base, "n_heads": 12, "kv_groups": 4, "n_kv_heads": 4})
