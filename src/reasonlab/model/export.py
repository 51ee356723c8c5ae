"""Our Transformer's config and tensors in the formats other tools load (`reasonlab export RUN`
writes them as a folder: reasonlab/export.py).

`hf`: a folder `transformers` loads with `from_pretrained` (config.json, model.safetensors, the
task's tokens in tokens.json, a model card README.md). The class follows the architecture:

    encoder, post-LN, learned positions                BertForTokenClassification
      ... with tied layers (and a factorised embedding) AlbertForTokenClassification
    decoder, pre-LN, learned positions, LayerNorm       GPT2ForTokenClassification
                                                        (GPT2LMHeadModel for a tied head)
    decoder, pre-LN, rotary, RMSNorm, SwiGLU            LlamaForTokenClassification
                                                        (LlamaForCausalLM for a tied head)

Our token-type-free BERT writes one token type of zeros; bias-free linears write zero biases
(BERT and GPT-2 always have them). A pre-LN encoder (the LEGO cpu recipes') has no counterpart
in transformers, whose BERT and ALBERT are post-LN: it goes to TransformerLens. Anything else
is refused in one line (a hardcoded or identity attention, the MLP baseline, FPT, the LSTM).

`transformer-lens`: what TransformerLens 4 loads. A decoder, or a pre-LN encoder (bidirectional
attention; tied layers written into every block): its native format, config.json with
TransformerBridgeConfig's fields and model.safetensors under TransformerLens's parameter names
(embed.W_E, pos_embed.W_pos, blocks.l.attn.W_Q [n_heads, d_model, d_head], ...), which the
native source's `boot(config)` builds and `convert_tl_checkpoint` loads. A post-LN encoder is
refused: TransformerLens 4 reads BERT through transformers as a masked LM only, which would
replace the run's trained head, and has no ALBERT.
"""

from __future__ import annotations

from typing import Any

import torch

from reasonlab.errors import ConfigError
from reasonlab.model.hf_families import ACT_NAMES


def _no_counterpart(why: str) -> ConfigError:
    return ConfigError(f"this run has no counterpart in transformers: {why}")


def kind(model: Any) -> str:
    """Which family the model maps onto: bert, albert, gpt2 or llama (transformers), encoder
    (a pre-LN encoder: TransformerLens only); a ConfigError naming what has no counterpart
    otherwise."""
    c = model.config
    if c.arch.name != "transformer":
        raise _no_counterpart(f"arch={c.arch.name!r} is not a Transformer")
    if c.attention.name != "softmax":
        raise _no_counterpart(f"attention={c.attention.name!r} (only softmax attention exists "
                              "there)")
    if c.d_head is not None and c.d_head * c.n_heads != c.d_model:
        raise _no_counterpart(f"d_head={c.d_head} with d_model={c.d_model}, "
                              f"n_heads={c.n_heads}")
    if not c.causal and c.norm_position == "pre":
        return _pre_ln_encoder(c)
    if not c.causal:
        if (c.norm_position, c.positions, c.norm_layer.name, c.mlp.name) != (
                "post", "learned", "layernorm", "standard"):
            raise _no_counterpart("an encoder must be BERT-like (post-LN with an embedding "
                                  "LayerNorm, learned positions, LayerNorm, a standard MLP)")
        if c.tie_head:
            raise _no_counterpart("a tied read-out on an encoder")
        if c.tie_layers:
            return "albert"
        if c.d_embed is not None:
            raise _no_counterpart("a factorised embedding without tied layers")
        return "bert"
    if c.norm_position != "pre" or c.tie_layers or c.d_embed is not None:
        raise _no_counterpart("a decoder must be pre-LN with untied layers (GPT-2, Llama)")
    shape = (c.positions, c.norm_layer.name, c.mlp.name)
    if shape == ("learned", "layernorm", "standard") and c.n_kv_heads_ == c.n_heads:
        return "gpt2"
    if shape == ("rotary", "rmsnorm", "swiglu"):
        return "llama"
    raise _no_counterpart(f"a decoder with positions={c.positions}, norm_layer="
                          f"{c.norm_layer.name}, mlp={c.mlp.name}: GPT-2 is learned/layernorm/"
                          "standard, Llama rotary/rmsnorm/swiglu")


def _pre_ln_encoder(c: Any) -> str:
    """A pre-LN encoder (the LEGO cpu recipes': LayerNorm, a standard MLP, learned or rotary
    positions, tied layers or not) is a TransformerLens model with bidirectional
    attention; transformers has no counterpart (its BERT and ALBERT are post-LN)."""
    if (c.norm_layer.name, c.mlp.name) != ("layernorm", "standard") or c.d_embed is not None \
            or c.tie_head or c.n_kv_heads_ != c.n_heads:
        raise _no_counterpart("a pre-LN encoder maps (onto TransformerLens only) with "
                              "LayerNorm, a standard MLP, no factorised embedding, no tied "
                              "read-out and as many key/value heads as heads")
    return "encoder"


def _bias(layer: torch.nn.Linear) -> torch.Tensor:
    return layer.bias if layer.bias is not None else layer.weight.new_zeros(layer.out_features)


def _norm(ln: Any, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A norm's gain and bias (ones / zeros where it has none), on the device of `like`."""
    d = like.shape[-1]
    w = ln.weight if ln is not None and ln.weight is not None else like.new_ones(d)
    b = getattr(ln, "bias", None) if ln is not None else None
    return w, b if b is not None else like.new_zeros(d)


def _bert_like(model: Any, albert: bool) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    c = model.config
    e = c.d_embed or c.d_model
    common = dict(vocab_size=c.vocab_size, hidden_size=c.d_model,
                  num_hidden_layers=c.n_layers, num_attention_heads=c.n_heads,
                  intermediate_size=c.d_mlp, hidden_act=ACT_NAMES[c.act],
                  max_position_embeddings=c.max_seq_len, type_vocab_size=1,
                  layer_norm_eps=c.ln_eps, hidden_dropout_prob=c.dropout,
                  attention_probs_dropout_prob=c.dropout, num_labels=c.n_classes,
                  classifier_dropout_prob=c.dropout, classifier_dropout=c.dropout,
                  pad_token_id=0)
    p = "albert." if albert else "bert."
    sd = {p + "embeddings.word_embeddings.weight": model.W_E,
          p + "embeddings.position_embeddings.weight": model.W_pos,
          p + "embeddings.token_type_embeddings.weight": model.W_E.new_zeros(1, e),
          p + "embeddings.LayerNorm.weight": model.ln_embed.weight,
          p + "embeddings.LayerNorm.bias": model.ln_embed.bias,
          "classifier.weight": model.head.weight, "classifier.bias": model.head.bias}
    if albert:
        proj = model.embed_proj
        sd[p + "encoder.embedding_hidden_mapping_in.weight"] = (
            proj.weight if proj is not None else torch.eye(c.d_model, device=model.W_E.device))
        sd[p + "encoder.embedding_hidden_mapping_in.bias"] = (
            proj.bias if proj is not None else model.W_E.new_zeros(c.d_model))
        names = {"q": "attention.query", "k": "attention.key", "v": "attention.value",
                 "o": "attention.dense", "ln1": "attention.LayerNorm", "in": "ffn",
                 "out": "ffn_output", "ln2": "full_layer_layer_norm"}
        layers = [(model.layers[0], p + "encoder.albert_layer_groups.0.albert_layers.0.")]
        config = dict(model_type="albert", architectures=["AlbertForTokenClassification"],
                      embedding_size=e, num_hidden_groups=1, inner_group_num=1, **common)
    else:
        names = {"q": "attention.self.query", "k": "attention.self.key",
                 "v": "attention.self.value", "o": "attention.output.dense",
                 "ln1": "attention.output.LayerNorm", "in": "intermediate.dense",
                 "out": "output.dense", "ln2": "output.LayerNorm"}
        layers = [(layer, f"{p}encoder.layer.{l}.") for l, layer in enumerate(model.layers)]
        config = dict(model_type="bert", architectures=["BertForTokenClassification"],
                      position_embedding_type="absolute", **common)
    for layer, b in layers:
        q, k, v = layer.attn.qkv.weight.split(layer.attn.sizes)
        qb, kb, vb = _bias(layer.attn.qkv).split(layer.attn.sizes)
        for key, w, bias in (("q", q, qb), ("k", k, kb), ("v", v, vb),
                             ("o", layer.attn.out.weight, _bias(layer.attn.out)),
                             ("in", layer.mlp.fc_in.weight, _bias(layer.mlp.fc_in)),
                             ("out", layer.mlp.fc_out.weight, _bias(layer.mlp.fc_out))):
            sd[b + names[key] + ".weight"], sd[b + names[key] + ".bias"] = w, bias
        for key, ln in (("ln1", layer.ln1), ("ln2", layer.ln2)):
            sd[b + names[key] + ".weight"], sd[b + names[key] + ".bias"] = ln.weight, ln.bias
    return config, sd


def _gpt2(model: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    c = model.config
    config = dict(model_type="gpt2", vocab_size=c.vocab_size, n_embd=c.d_model,
                  n_layer=c.n_layers, n_head=c.n_heads, n_inner=c.d_mlp,
                  n_positions=c.max_seq_len, activation_function=ACT_NAMES[c.act],
                  layer_norm_epsilon=c.ln_eps, resid_pdrop=c.dropout, embd_pdrop=c.dropout,
                  attn_pdrop=c.dropout, tie_word_embeddings=c.tie_head,
                  architectures=["GPT2LMHeadModel" if c.tie_head
                                 else "GPT2ForTokenClassification"],
                  **({} if c.tie_head else {"num_labels": c.n_classes,
                                            "classifier_dropout": c.dropout}))
    w, b = _norm(model.ln_final, model.W_E)
    sd = {"transformer.wte.weight": model.W_E, "transformer.wpe.weight": model.W_pos,
          "transformer.ln_f.weight": w, "transformer.ln_f.bias": b}
    for l, layer in enumerate(model.layers):
        h = f"transformer.h.{l}."
        for ours, theirs in (("ln1", "ln_1"), ("ln2", "ln_2")):
            sd[h + theirs + ".weight"] = getattr(layer, ours).weight
            sd[h + theirs + ".bias"] = getattr(layer, ours).bias
        for lin, theirs in ((layer.attn.qkv, "attn.c_attn"), (layer.attn.out, "attn.c_proj"),
                            (layer.mlp.fc_in, "mlp.c_fc"), (layer.mlp.fc_out, "mlp.c_proj")):
            sd[h + theirs + ".weight"] = lin.weight.T  # Conv1D: [in, out]
            sd[h + theirs + ".bias"] = _bias(lin)
    if c.tie_head:
        sd["lm_head.weight"] = model.W_E
    else:
        sd["classifier.weight"], sd["classifier.bias"] = model.head.weight, model.head.bias
    return config, sd


def _llama(model: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    c = model.config
    config = dict(model_type="llama", vocab_size=c.vocab_size, hidden_size=c.d_model,
                  intermediate_size=c.d_mlp, num_hidden_layers=c.n_layers,
                  num_attention_heads=c.n_heads, num_key_value_heads=c.n_kv_heads_,
                  head_dim=c.d_head_, hidden_act="silu", max_position_embeddings=c.max_seq_len,
                  rms_norm_eps=c.ln_eps, rope_theta=c.rotary_base, attention_bias=c.attn_bias,
                  mlp_bias=c.mlp_bias, tie_word_embeddings=c.tie_head,
                  architectures=["LlamaForCausalLM" if c.tie_head
                                 else "LlamaForTokenClassification"],
                  **({} if c.tie_head else {"num_labels": c.n_classes}))
    w, _ = _norm(model.ln_final, model.W_E)
    sd = {"model.embed_tokens.weight": model.W_E, "model.norm.weight": w}
    for l, layer in enumerate(model.layers):
        h = f"model.layers.{l}."
        sd[h + "input_layernorm.weight"] = layer.ln1.weight
        sd[h + "post_attention_layernorm.weight"] = layer.ln2.weight
        parts = {"q": 0, "k": 1, "v": 2}
        chunks = layer.attn.qkv.weight.split(layer.attn.sizes)
        for m, i in parts.items():
            sd[h + f"self_attn.{m}_proj.weight"] = chunks[i]
            if c.attn_bias:
                sd[h + f"self_attn.{m}_proj.bias"] = layer.attn.qkv.bias.split(
                    layer.attn.sizes)[i]
        sd[h + "self_attn.o_proj.weight"] = layer.attn.out.weight
        if c.attn_bias:
            sd[h + "self_attn.o_proj.bias"] = layer.attn.out.bias
        for ours, theirs in (("fc_in", "up"), ("fc_gate", "gate"), ("fc_out", "down")):
            lin = getattr(layer.mlp, ours)
            sd[h + f"mlp.{theirs}_proj.weight"] = lin.weight
            if c.mlp_bias:
                sd[h + f"mlp.{theirs}_proj.bias"] = lin.bias
    if not c.tie_head:
        sd["score.weight"], sd["score.bias"] = model.head.weight, model.head.bias
    return config, sd


def hf_state(model: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """(config.json, tensors under transformers' names) of the model's counterpart."""
    k = kind(model)
    if k == "encoder":
        raise ConfigError("this run, a pre-LN encoder, has no counterpart in transformers (its "
                          "BERT and ALBERT are post-LN): export it with --format "
                          "transformer-lens")
    config, sd = {"bert": lambda m: _bert_like(m, False), "albert": lambda m: _bert_like(m, True),
                  "gpt2": _gpt2, "llama": _llama}[k](model)
    return config, {n: t.detach().float().cpu().contiguous().clone() for n, t in sd.items()}


def _adjacent(t: torch.Tensor) -> torch.Tensor:
    """[..., d_head] from rotate-half order (i, i + d_head/2 paired) to adjacent pairs (2i,
    2i+1), as llama.cpp's converter permutes (model/gguf.py `unpermute` undoes it)."""
    half = t.shape[-1] // 2
    return t.reshape(*t.shape[:-1], 2, half).transpose(-1, -2).reshape(t.shape)


def tl_state(model: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """(TransformerBridgeConfig fields, tensors under TransformerLens's names) of a decoder
    run or a pre-LN encoder (bidirectional attention); a post-LN encoder is refused (module
    docstring)."""
    k = kind(model)
    if k in ("bert", "albert"):
        # TL 4 reads BERT through transformers as a masked LM only (its adapter wires
        # `cls.predictions`, so a BertForTokenClassification does not boot and a folder boots
        # as BertForMaskedLM with a fresh vocabulary head) and has no ALBERT: the trained
        # head would be lost, so nothing is written (tests/unit/test_export.py shows it)
        raise ConfigError(f"TransformerLens 4 has no post-LN {k.upper()} with this run's "
                          "trained head (it boots BERT as a masked LM with a new vocabulary "
                          "head, and has no ALBERT): export with --format hf for transformers, "
                          "hook the run itself with PyTorch hooks or nnsight, or train a "
                          "pre-LN encoder (model.norm_position=pre) for TransformerLens")
    c = model.config
    H, d_head = c.n_heads, c.d_head_
    rotary = c.positions == "rotary"
    layer_norm = k in ("gpt2", "encoder")  # LayerNorm with biases; Llama: RMSNorm
    config = dict(d_model=c.d_model, n_layers=c.n_layers, n_heads=H, d_head=d_head,
                  d_mlp=c.d_mlp, n_ctx=c.max_seq_len, d_vocab=c.vocab_size,
                  d_vocab_out=c.vocab_size if c.tie_head else c.n_classes,
                  act_fn="silu" if k == "llama" else ACT_NAMES[c.act],
                  normalization_type="LN" if layer_norm else "RMS", eps=c.ln_eps,
                  positional_embedding_type="rotary" if rotary else "standard",
                  attention_dir="bidirectional" if k == "encoder" else "causal",
                  gated_mlp=k == "llama", original_architecture="reasonlab")
    if rotary:
        config |= dict(rotary_dim=d_head, rotary_base=c.rotary_base)
    if k == "llama":
        config |= dict(n_key_value_heads=c.n_kv_heads_ if c.n_kv_heads_ != H else None)
    sd: dict[str, torch.Tensor] = {"embed.W_E": model.W_E}
    if not rotary:
        sd["pos_embed.W_pos"] = model.W_pos
    for l in range(c.n_layers):  # tied layers (ALBERT-like): the one layer in every block
        layer = model.layer(l)
        b, a = f"blocks.{l}.", layer.attn
        sd[b + "ln1.w"], sd[b + "ln2.w"] = layer.ln1.weight, layer.ln2.weight
        if layer_norm:
            sd[b + "ln1.b"], sd[b + "ln2.b"] = layer.ln1.bias, layer.ln2.bias
        # TransformerLens's native rotary turns adjacent pairs (2i, 2i+1); ours (and Hugging
        # Face's Llama) pairs i with i + d_head/2: reorder each head's query and key
        # dimensions so that the same pairs turn (q . k is unchanged by a shared reordering)
        pairs = _adjacent if rotary else (lambda t: t)
        for name, W, bias in (("Q", pairs(a.W_Q), pairs(a.b_Q)), ("K", pairs(a.W_K),
                                                                   pairs(a.b_K)),
                              ("V", a.W_V, a.b_V)):
            sd[b + f"attn.{'_' if name != 'Q' and k == 'llama' and c.n_kv_heads_ != H else ''}"
               f"W_{name}"] = W
            sd[b + f"attn.{'_' if name != 'Q' and k == 'llama' and c.n_kv_heads_ != H else ''}"
               f"b_{name}"] = bias
        sd[b + "attn.W_O"], sd[b + "attn.b_O"] = a.W_O, a.b_O
        sd[b + "mlp.W_in"], sd[b + "mlp.W_out"] = layer.mlp.W_in, layer.mlp.W_out
        if layer_norm or c.mlp_bias:  # TransformerLens's gated MLP is bias-free
            sd[b + "mlp.b_in"], sd[b + "mlp.b_out"] = layer.mlp.b_in, layer.mlp.b_out
        if k == "llama":
            sd[b + "mlp.W_gate"] = layer.mlp.W_gate
    w, bias = _norm(model.ln_final, model.W_E)
    sd["ln_final.w"] = w
    if layer_norm:
        sd["ln_final.b"] = bias
    if c.tie_head:
        sd["unembed.W_U"], sd["unembed.b_U"] = model.W_E.T, model.W_E.new_zeros(c.vocab_size)
    else:
        sd["unembed.W_U"], sd["unembed.b_U"] = model.head.weight.T, model.head.bias
    return config, {n: t.detach().float().cpu().contiguous().clone() for n, t in sd.items()}
