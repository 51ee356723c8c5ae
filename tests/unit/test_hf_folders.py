"""Backbones from a local Hugging Face folder (model/hf.py, model/hf_families.py): per family,
a tiny random checkpoint that `transformers` writes here (safetensors), loaded through the
folder source, gives `transformers`' hidden states and logits within fp32 tolerance. Also the
Hub cache lookup, and the one-line errors (no folder, not in the cache, pickles only)."""

from __future__ import annotations

import json

import pytest
import torch

from reasonlab.errors import AssetError, ConfigError
from reasonlab.model import run_with_cache
from reasonlab.model.hf import hub_cache
from reasonlab.model.pretrained import checkpoint, hf_transformer
from reasonlab.train.config import TrainConfig

transformers = pytest.importorskip("transformers", reason="transformers not installed")

TOL = 2e-5
V, T = 50, 7  # vocabulary, sequence length


def ids(seed: int = 0, batch: int = 3) -> torch.Tensor:
    return torch.randint(3, V, (batch, T), generator=torch.Generator().manual_seed(seed))


def save(model, path) -> str:
    torch.manual_seed(0)
    model.save_pretrained(path, safe_serialization=True)
    return f"hf:{path}"


def small(**kw):
    return dict(vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=40, **kw)


def resid(model, x, name="blocks.{l}.hook_resid_pre"):
    _, cache = run_with_cache(model, x)
    return cache


def compare(ours, hf_hidden, cache, post: bool) -> list[float]:
    """Max abs differences per layer: the embedding output, each block's output."""
    L = ours.config.n_layers
    diffs = [(cache["blocks.0.hook_resid_pre"] - hf_hidden[0]).abs().max().item()]
    for l in range(L - 1):
        diffs.append((cache[f"blocks.{l + 1}.hook_resid_pre"] - hf_hidden[l + 1]).abs().max()
                     .item())
    last = (cache[f"blocks.{L - 1}.hook_normalized_resid_post"] if post
            else cache["hook_final"])  # HF applies the final norm to its last hidden state
    diffs.append((last - hf_hidden[L]).abs().max().item())
    return diffs


def check(diffs: list[float], logits_diff: float) -> None:
    print(f"max abs differences per layer {[f'{d:.1e}' for d in diffs]}, logits "
          f"{logits_diff:.1e}")
    assert max(diffs) < TOL and logits_diff < TOL


def test_bert_token_classifier(tmp_path):
    hf = transformers.BertForTokenClassification(transformers.BertConfig(
        **small(), num_labels=3, attn_implementation="eager")).eval()
    spec = save(hf, tmp_path / "bert")
    ours = hf_transformer(spec, max_seq_len=T)
    x = ids()
    with torch.no_grad():
        ref = hf(input_ids=x, output_hidden_states=True)
        logits, cache = run_with_cache(ours, x)
    check(compare(ours, ref.hidden_states, cache, post=True),
          (logits - ref.logits).abs().max().item())


def test_albert_shares_one_layer(tmp_path):
    hf = transformers.AlbertForTokenClassification(transformers.AlbertConfig(
        **small(), embedding_size=16, num_labels=4, attn_implementation="eager")).eval()
    spec = save(hf, tmp_path / "albert")
    ours = hf_transformer(spec, max_seq_len=T)
    assert ours.config.tie_layers and ours.config.d_embed == 16 and len(ours.layers) == 1
    x = ids(1)
    with torch.no_grad():
        ref = hf(input_ids=x, output_hidden_states=True)
        logits, cache = run_with_cache(ours, x)
    # ALBERT's hidden_states[0] is the projected embedding: our layer 0's input
    check(compare(ours, ref.hidden_states, cache, post=True),
          (logits - ref.logits).abs().max().item())


def test_roberta_positions_start_after_padding(tmp_path):
    hf = transformers.RobertaForTokenClassification(transformers.RobertaConfig(
        **small(), num_labels=2, pad_token_id=1, attn_implementation="eager")).eval()
    spec = save(hf, tmp_path / "roberta")
    assert checkpoint(spec).max_positions == 40 - 2
    ours = hf_transformer(spec, max_seq_len=T)
    x = ids(2)
    with torch.no_grad():
        ref = hf(input_ids=x, output_hidden_states=True)
        logits, cache = run_with_cache(ours, x)
    check(compare(ours, ref.hidden_states, cache, post=True),
          (logits - ref.logits).abs().max().item())


def test_gpt2_conv1d_weights_learned_positions_tied_read_in(tmp_path):
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=V, n_embd=32, n_layer=2, n_head=4, n_positions=40,
        attn_implementation="eager")).eval()
    spec = save(hf, tmp_path / "gpt2")
    ours = hf_transformer(spec, max_seq_len=T)
    assert ours.config.tie_head and ours.config.causal and ours.config.act == "gelu_tanh"
    x = ids(3)
    with torch.no_grad():
        ref = hf(input_ids=x, output_hidden_states=True)
        logits, cache = run_with_cache(ours, x)
    check(compare(ours, ref.hidden_states, cache, post=False),
          (logits - ref.logits).abs().max().item())


@pytest.mark.parametrize("tied", [True, False])
def test_llama_rotary_gqa_swiglu(tmp_path, tied):
    hf = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        **small(), num_key_value_heads=2, tie_word_embeddings=tied, rope_theta=500.0,
        rms_norm_eps=1e-5, attn_implementation="eager")).eval()
    spec = save(hf, tmp_path / "llama")
    ours = hf_transformer(spec, max_seq_len=T)
    assert ours.config.n_kv_heads == 2 and ours.config.tie_head == tied
    x = ids(4)
    with torch.no_grad():
        ref = hf(input_ids=x, output_hidden_states=True)
        logits, cache = run_with_cache(ours, x)
    check(compare(ours, ref.hidden_states, cache, post=False),
          (logits - ref.logits).abs().max().item())


def test_longformer_within_its_window_is_roberta(tmp_path):
    hf = transformers.LongformerModel(transformers.LongformerConfig(
        **small(), attention_window=16, pad_token_id=1), add_pooling_layer=False).eval()
    spec = save(hf, tmp_path / "longformer")
    assert checkpoint(spec).max_positions == 16 // 2 + 1  # every key within the window
    ours = hf_transformer(spec, max_seq_len=T)
    x = ids(5)
    with torch.no_grad():
        ref = hf(input_ids=x, output_hidden_states=True)
        _, cache = run_with_cache(ours, x)
    # Longformer pads to a multiple of its window and returns the hidden states unpadded
    check(compare(ours, [h[:, :T] for h in ref.hidden_states], cache, post=True), 0.0)
    with pytest.raises(ConfigError, match="positions"):
        hf_transformer(spec, max_seq_len=10)


OLD_VIT = (("layers.", "encoder.layer."), ("attention.q_proj", "attention.attention.query"),
           ("attention.k_proj", "attention.attention.key"),
           ("attention.v_proj", "attention.attention.value"),
           ("attention.o_proj", "attention.output.dense"), ("mlp.fc1", "intermediate.dense"),
           ("mlp.fc2", "output.dense"))


@pytest.mark.parametrize("layout", ["today", "hub"])
def test_vit_encoder_is_a_pre_ln_stack(tmp_path, layout):
    hf = transformers.ViTModel(transformers.ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        image_size=8, patch_size=4, attn_implementation="eager"), add_pooling_layer=False)
    spec = save(hf.eval(), tmp_path / "vit")
    if layout == "hub":  # the names of the Hub's ViT files (transformers < 5), with a prefix
        from safetensors.torch import load_file, save_file

        sd = load_file(str(tmp_path / "vit" / "model.safetensors"))
        renamed = {}
        for k, v in sd.items():
            for new, old in OLD_VIT:
                k = k.replace(new, old)
            renamed["vit." + k] = v
        save_file(renamed, str(tmp_path / "vit" / "model.safetensors"))
    ckpt = checkpoint(spec)
    assert not ckpt.reads_tokens
    from reasonlab.model.config import ModelConfig
    from reasonlab.model.pretrained import load_pretrained
    from reasonlab.model.transformer import Transformer

    ours = Transformer(ModelConfig.build({**ckpt.architecture, "vocab_size": 3, "n_classes": 2,
                                          "max_seq_len": T}))
    load_pretrained(ours, spec, ["a", "b", "c"])  # no token table: rows of zeros
    assert ours.W_E.abs().sum() == 0 and ours.W_pos.abs().sum() == 0  # the authors' zero table
    h = torch.randn(2, T, 32, generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        ref = h
        for layer in hf.layers:
            ref = layer(ref)
        ref = hf.layernorm(ref)
        got = ours.eval().run_layers(h, None, 2)
    assert (got - ref).abs().max().item() < TOL


def test_t5_says_why_it_does_not_map(tmp_path):
    hf = transformers.T5EncoderModel(transformers.T5Config(
        vocab_size=V, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_heads=4))
    spec = save(hf, tmp_path / "t5")
    with pytest.raises(ConfigError, match="relative-position"):
        checkpoint(spec).architecture


def test_a_train_config_takes_the_folders_architecture(tmp_path):
    hf = transformers.GPT2Model(transformers.GPT2Config(vocab_size=V, n_embd=32, n_layer=3,
                                                        n_head=4, n_positions=64))
    spec = save(hf, tmp_path / "g")
    cfg = TrainConfig.build({"task": {"name": "bit_xor"}, "model": {"arch": "fpt",
                                                                     "n_layers": 2},
                             "init_from": spec, "trainable": "fpt"})
    assert (cfg.model.d_model, cfg.model.n_layers, cfg.model.causal) == (32, 2, True)


def test_a_folder_is_recorded_by_its_absolute_path(tmp_path, monkeypatch):
    """`hf:./g` from one working directory and `hf:/abs/g` name one folder: one run id. (A
    relative path kept as written would give a run trained on one folder the id of another.)"""
    from reasonlab.model.pretrained import as_source
    from reasonlab.runs import config_id

    save(transformers.GPT2Model(transformers.GPT2Config(
        vocab_size=V, n_embd=32, n_layer=1, n_head=4, n_positions=64)), tmp_path / "g")
    monkeypatch.chdir(tmp_path)
    build = lambda src: TrainConfig.build({"task": {"name": "bit_xor"},  # noqa: E731
                                           "model": {"arch": "fpt"}, "init_from": src,
                                           "trainable": "fpt"})
    rel, absolute = build("hf:./g"), build(f"hf:{tmp_path / 'g'}")
    assert rel.init_from == absolute.init_from == f"hf:{tmp_path / 'g'}"
    assert config_id(rel) == config_id(absolute)
    assert as_source("./g") == as_source("hf:g") == f"hf:{tmp_path / 'g'}"
    assert as_source("gpt2") == "gpt2" and as_source("hf:openai-community/gpt2") == \
        "hf:openai-community/gpt2"  # names stay names


def test_a_hub_name_is_found_in_the_local_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert hub_cache() == tmp_path / "hub"
    with pytest.raises(AssetError, match=r"not in the local Hugging Face cache .*"
                                         r"models--tiny--gpt2.*nothing is downloaded"):
        checkpoint("hf:tiny/gpt2").path()
    repo = tmp_path / "hub" / "models--tiny--gpt2"
    snap = repo / "snapshots" / "abc123"
    transformers.GPT2Model(transformers.GPT2Config(vocab_size=V, n_embd=32, n_layer=1,
                                                   n_head=4)).save_pretrained(snap)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    assert checkpoint("hf:tiny/gpt2").path() == snap
    assert checkpoint("hf:tiny/gpt2").architecture["n_layers"] == 1


def test_pickled_weights_are_refused_in_one_line(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (tmp_path / "pytorch_model.bin").write_bytes(b"not loaded")
    with pytest.raises(ConfigError, match="pickled weights.*never loads.*safe_serialization"):
        checkpoint(f"hf:{tmp_path}").state_dict()
    with pytest.raises(AssetError, match="no folder"):
        checkpoint(f"hf:{tmp_path}/absent").path()


def test_a_registry_entry_checks_the_folder_against_its_architecture(tmp_path, monkeypatch):
    """`gpt2` is written down as GPT-2 small; a cache entry with other shapes is refused."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    snap = tmp_path / "models--openai-community--gpt2" / "snapshots" / "x"
    transformers.GPT2Model(transformers.GPT2Config(vocab_size=V, n_embd=32, n_layer=1,
                                                   n_head=4)).save_pretrained(snap)
    ckpt = checkpoint("gpt2")
    assert ckpt.path() == snap
    with pytest.raises(ConfigError, match="disagrees with the registry entry"):
        ckpt.check()
