"""Hugging Face model families <-> our Transformer, both ways (model/hf.py reads folders with
these; model/export.py writes them). One HF_FAMILIES entry per `model_type`:

    fields(config)       the ModelConfig fields its config.json fixes
    to_ours(sd, ...)     its tensors (own names, model prefix removed) -> our state dict
    from_ours(model)     our model -> (config.json, its tensors): the export direction

Names, HF -> ours (the BERT map is model/pretrained.py's docstring):

    GPT-2      wte / wpe -> W_E / W_pos; h.l.ln_1 / ln_2 -> layers.l.ln1 / ln2; attn.c_attn
               (Conv1D, [in, out]: transposed) -> attn.qkv (q|k|v); attn.c_proj -> attn.out;
               mlp.c_fc / c_proj -> mlp.fc_in / fc_out; ln_f -> ln_final; lm_head = wte (tie)
    Llama      embed_tokens -> W_E; input_layernorm / post_attention_layernorm -> ln1 / ln2;
               self_attn.{q,k,v}_proj -> attn.qkv (the Hugging Face layout is rotate-half,
               as our Rotary); o_proj -> attn.out; mlp.{up,gate,down}_proj -> mlp.fc_in /
               fc_gate / fc_out; norm -> ln_final
    ALBERT     BERT's embeddings at embedding_size -> W_E, W_pos (+ token type 0), ln_embed;
               encoder.embedding_hidden_mapping_in -> embed_proj; the one shared layer
               (albert_layer_groups.0.albert_layers.0): attention.{query,key,value} ->
               attn.qkv, attention.dense -> attn.out, attention.LayerNorm -> ln1, ffn /
               ffn_output -> mlp.fc_in / fc_out, full_layer_layer_norm -> ln2
    RoBERTa    BERT's names; position ids start at pad_token_id + 1, so W_pos is the table
               from that row on; one token type
    Longformer RoBERTa's names (its global projections unused: no global tokens, as FPT's
               inputs have none); it maps only while every key lies within the sliding
               window of every query (seq <= attention_window / 2 + 1): then its banded
               attention is full attention
    ViT        layers.l.{layernorm_before, attention.{q,k,v,o}_proj, layernorm_after,
               mlp.fc1, mlp.fc2}, layernorm -> a pre-LN encoder (the Hub's files and
               transformers < 5 write encoder.layer.l.attention.attention.query, ...: renamed
               first, as transformers does); no token table (W_E zeros, never read by FPT)
               and, as the FPT authors do for ViT, a fresh zero position table
               (universal_computation/fpt.py `vit_pos_embed`)

Families that do not map (UNMAPPED) say why in one line.
"""

from __future__ import annotations

from typing import Any

import torch

from reasonlab.errors import ConfigError
from reasonlab.registry import Registry

ACTS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
        "gelu_fast": "gelu_tanh", "relu": "relu"}
"""Hugging Face activation names -> ModelConfig.act (gelu_new and gelu_pytorch_tanh are the
same tanh approximation; gelu_fast a rewriting of it)."""
ACT_NAMES = {"gelu": "gelu", "gelu_tanh": "gelu_new", "relu": "relu"}
"""ModelConfig.act -> the Hugging Face name an export writes."""

UNMAPPED = {
    "t5": "T5's encoder adds learned relative-position buckets to every layer's attention "
          "logits and leaves the dot product unscaled; our attention has absolute (learned) or "
          "rotary positions only",
    "mt5": "as T5 (relative-position buckets)",
    "deberta": "disentangled relative-position attention has no counterpart here",
    "deberta-v2": "disentangled relative-position attention has no counterpart here",
}


def _act(name: str, where: str) -> str:
    if name not in ACTS:
        raise ConfigError(f"{where}: activation {name!r} has no counterpart here (known: "
                          f"{', '.join(ACTS)})")
    return ACTS[name]


def _t(x: torch.Tensor) -> torch.Tensor:
    return x.detach().clone().float().contiguous()


class Family:
    """One model_type's mapping (see the module docstring)."""

    prefix = ""
    """The model prefix its task heads put before the backbone's names (`bert.`)."""
    reads_tokens = True

    def strip(self, sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k.removeprefix(self.prefix): v for k, v in sd.items()}

    def fields(self, c: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def max_positions(self, c: dict[str, Any]) -> int:
        return int(c["max_position_embeddings"])

    def to_ours(self, sd: dict[str, torch.Tensor], c: dict[str, Any], n_layers: int,
                max_seq_len: int) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def head(self, sd: dict[str, torch.Tensor], c: dict[str, Any]) -> dict[str, torch.Tensor]:
        """Our `head.*` from the checkpoint's token-classification head, if it has one."""
        return {}


HF_FAMILIES: Registry[type[Family]] = Registry("Hugging Face model family")


def family_of(config: dict[str, Any], name: str) -> Family:
    kind = config.get("model_type", "")
    if kind in UNMAPPED:
        raise ConfigError(f"pretrained {name!r}: {kind} does not map onto our Transformer: "
                          f"{UNMAPPED[kind]}")
    if kind not in HF_FAMILIES:
        raise ConfigError(f"pretrained {name!r}: model_type {kind!r} has no converter; known: "
                          f"{', '.join(HF_FAMILIES)}")
    return HF_FAMILIES[kind]()


# ---------------------------------------------------------------------- BERT and kin


def convert_bert(bert: dict[str, torch.Tensor], n_layers: int, max_seq_len: int,
                 token_ids: list[int] | None = None) -> dict[str, torch.Tensor]:
    """Our state dict (all but `head.*`) from a BERT state dict under its own names.

    token_ids[i] = the WordPiece row for our token i; None keeps the whole vocabulary.
    """
    wte = bert["embeddings.word_embeddings.weight"]  # [30522, d_model]
    pos = bert["embeddings.position_embeddings.weight"]  # [512, d_model]
    if max_seq_len > pos.shape[0]:
        raise ConfigError(f"max_seq_len={max_seq_len} exceeds the checkpoint's {pos.shape[0]} "
                          "learned positions; use shorter sentences")
    type0 = bert["embeddings.token_type_embeddings.weight"][0]  # [d_model]
    out = {
        "W_E": wte if token_ids is None else wte[torch.as_tensor(token_ids, device=wte.device)],
        "W_pos": pos[:max_seq_len] + type0,  # one segment: fold token type 0 into positions
        "ln_embed.weight": bert["embeddings.LayerNorm.weight"],
        "ln_embed.bias": bert["embeddings.LayerNorm.bias"],
    }
    for l in range(n_layers):
        b, o = f"encoder.layer.{l}.", f"layers.{l}."
        for suffix in ("weight", "bias"):
            out[o + "attn.qkv." + suffix] = torch.cat(
                [bert[f"{b}attention.self.{m}.{suffix}"] for m in ("query", "key", "value")])
            out[o + "attn.out." + suffix] = bert[f"{b}attention.output.dense.{suffix}"]
            out[o + "ln1." + suffix] = bert[f"{b}attention.output.LayerNorm.{suffix}"]
            out[o + "mlp.fc_in." + suffix] = bert[f"{b}intermediate.dense.{suffix}"]
            out[o + "mlp.fc_out." + suffix] = bert[f"{b}output.dense.{suffix}"]
            out[o + "ln2." + suffix] = bert[f"{b}output.LayerNorm.{suffix}"]
    return {k: v.detach().clone().float().contiguous() for k, v in out.items()}



@HF_FAMILIES.register("bert")
class Bert(Family):
    prefix = "bert."
    def fields(self, c: dict[str, Any]) -> dict[str, Any]:
        if c.get("position_embedding_type", "absolute") != "absolute":
            raise ConfigError(f"position_embedding_type={c['position_embedding_type']!r}: "
                              "only absolute positions map onto ours")
        return dict(d_model=c["hidden_size"], d_embed=None, n_layers=c["num_hidden_layers"],
                    n_heads=c["num_attention_heads"], d_head=None,
                    d_mlp=c["intermediate_size"], norm_position="post",
                    act=_act(c.get("hidden_act", "gelu"), "BERT"),
                    ln_eps=c.get("layer_norm_eps", 1e-12), causal=False, tie_layers=False)

    def max_positions(self, c: dict[str, Any]) -> int:
        return int(c.get("max_position_embeddings", 512))

    def to_ours(self, sd, c, n_layers, max_seq_len):
        return convert_bert(sd, n_layers, max_seq_len)

    def head(self, sd, c):
        return ({"head.weight": sd["classifier.weight"], "head.bias": sd["classifier.bias"]}
                if "classifier.weight" in sd else {})


@HF_FAMILIES.register("roberta")
class Roberta(Bert):
    """BERT's names; real tokens are numbered from padding_idx + 1 (pad_token_id 1: from 2)."""

    prefix = "roberta."

    def start(self, c: dict[str, Any]) -> int:
        return int(c.get("pad_token_id", 1)) + 1

    def max_positions(self, c):
        return int(c.get("max_position_embeddings", 514)) - self.start(c)

    def to_ours(self, sd, c, n_layers, max_seq_len):
        pos = sd["embeddings.position_embeddings.weight"][self.start(c):]
        return convert_bert({**sd, "embeddings.position_embeddings.weight": pos}, n_layers,
                            max_seq_len)


@HF_FAMILIES.register("longformer")
class Longformer(Roberta):
    prefix = "longformer."

    def max_positions(self, c):
        window = c.get("attention_window", 512)
        window = min(window) if isinstance(window, list) else window
        return min(super().max_positions(c), window // 2 + 1)


@HF_FAMILIES.register("albert")
class Albert(Family):
    prefix = "albert."

    def fields(self, c):
        if c.get("num_hidden_groups", 1) != 1 or c.get("inner_group_num", 1) != 1:
            raise ConfigError("ALBERT with several layer groups or inner layers does not map "
                              "(ours shares one layer across the depth)")
        if c.get("position_embedding_type", "absolute") != "absolute":
            raise ConfigError("only absolute positions map onto ours")
        return dict(d_model=c["hidden_size"], d_embed=c.get("embedding_size", 128),
                    n_layers=c["num_hidden_layers"], n_heads=c["num_attention_heads"],
                    d_head=None, d_mlp=c["intermediate_size"], norm_position="post",
                    act=_act(c.get("hidden_act", "gelu_new"), "ALBERT"),
                    ln_eps=c.get("layer_norm_eps", 1e-12), causal=False, tie_layers=True)

    def to_ours(self, sd, c, n_layers, max_seq_len):
        pos = sd["embeddings.position_embeddings.weight"]
        if max_seq_len > pos.shape[0]:
            raise ConfigError(f"max_seq_len={max_seq_len} exceeds {pos.shape[0]} positions")
        out = {"W_E": sd["embeddings.word_embeddings.weight"],
               "W_pos": pos[:max_seq_len] + sd["embeddings.token_type_embeddings.weight"][0],
               "ln_embed.weight": sd["embeddings.LayerNorm.weight"],
               "ln_embed.bias": sd["embeddings.LayerNorm.bias"],
               "embed_proj.weight": sd["encoder.embedding_hidden_mapping_in.weight"],
               "embed_proj.bias": sd["encoder.embedding_hidden_mapping_in.bias"]}
        b = "encoder.albert_layer_groups.0.albert_layers.0."
        for s in ("weight", "bias"):
            out[f"layers.0.attn.qkv.{s}"] = torch.cat(
                [sd[f"{b}attention.{m}.{s}"] for m in ("query", "key", "value")])
            out[f"layers.0.attn.out.{s}"] = sd[f"{b}attention.dense.{s}"]
            out[f"layers.0.ln1.{s}"] = sd[f"{b}attention.LayerNorm.{s}"]
            out[f"layers.0.mlp.fc_in.{s}"] = sd[f"{b}ffn.{s}"]
            out[f"layers.0.mlp.fc_out.{s}"] = sd[f"{b}ffn_output.{s}"]
            out[f"layers.0.ln2.{s}"] = sd[f"{b}full_layer_layer_norm.{s}"]
        return {k: _t(v) for k, v in out.items()}

    def head(self, sd, c):
        return Bert.head(self, sd, c)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- decoders


@HF_FAMILIES.register("gpt2")
class GPT2(Family):
    prefix = "transformer."

    def fields(self, c):
        if c.get("scale_attn_by_inverse_layer_idx") or c.get("scale_attn_weights", True) is False:
            raise ConfigError("GPT-2 with scale_attn_by_inverse_layer_idx or unscaled attention "
                              "does not map (ours scales by 1/sqrt(d_head))")
        d = c.get("n_embd", 768)
        return dict(d_model=d, d_embed=None, n_layers=c.get("n_layer", 12),
                    n_heads=c.get("n_head", 12), d_head=None, d_mlp=c.get("n_inner") or 4 * d,
                    norm_position="pre", act=_act(c.get("activation_function", "gelu_new"),
                                                  "GPT-2"),
                    ln_eps=c.get("layer_norm_epsilon", 1e-5), causal=True, tie_layers=False)

    def max_positions(self, c):
        return int(c.get("n_positions", 1024))

    def to_ours(self, sd, c, n_layers, max_seq_len):
        out = {"W_E": sd["wte.weight"], "W_pos": sd["wpe.weight"][:max_seq_len],
               "ln_final.weight": sd["ln_f.weight"], "ln_final.bias": sd["ln_f.bias"]}
        for l in range(n_layers):
            h, o = f"h.{l}.", f"layers.{l}."
            for s in ("weight", "bias"):
                out[o + f"ln1.{s}"] = sd[h + f"ln_1.{s}"]
                out[o + f"ln2.{s}"] = sd[h + f"ln_2.{s}"]
            for ours, theirs in (("attn.qkv", "attn.c_attn"), ("attn.out", "attn.c_proj"),
                                 ("mlp.fc_in", "mlp.c_fc"), ("mlp.fc_out", "mlp.c_proj")):
                out[o + ours + ".weight"] = sd[h + theirs + ".weight"].T  # Conv1D: [in, out]
                out[o + ours + ".bias"] = sd[h + theirs + ".bias"]
        return {k: _t(v) for k, v in out.items()}

    def head(self, sd, c):
        return ({"head.weight": sd["classifier.weight"], "head.bias": sd["classifier.bias"]}
                if "classifier.weight" in sd else {})


@HF_FAMILIES.register("llama")
class Llama(Family):
    prefix = "model."

    def fields(self, c):
        if c.get("rope_scaling") not in (None, {}) and (c["rope_scaling"] or {}).get(
                "rope_type", "default") != "default":
            raise ConfigError(f"rope_scaling={c['rope_scaling']} does not map (ours: plain "
                              "rotary positions)")
        if c.get("hidden_act", "silu") != "silu":
            raise ConfigError("only Llama's SiLU-gated MLP maps onto ours")
        d, heads = c["hidden_size"], c["num_attention_heads"]
        kv = c.get("num_key_value_heads") or heads
        d_head = c.get("head_dim") or d // heads
        theta = c.get("rope_theta") or (c.get("rope_parameters") or {}).get("rope_theta", 1e4)
        return dict(d_model=d, d_embed=None, n_layers=c["num_hidden_layers"], n_heads=heads,
                    n_kv_heads=None if kv == heads else kv,
                    d_head=None if d_head == d // heads else d_head,
                    d_mlp=c["intermediate_size"], norm_position="pre", norm_layer="rmsnorm",
                    mlp="swiglu", positions="rotary", rotary_base=float(theta),
                    ln_eps=c.get("rms_norm_eps", 1e-6), causal=True,
                    attn_bias=bool(c.get("attention_bias", False)),
                    mlp_bias=bool(c.get("mlp_bias", False)), tie_layers=False)

    def max_positions(self, c):
        return int(c.get("max_position_embeddings", 2048))

    def to_ours(self, sd, c, n_layers, max_seq_len):
        out = {"W_E": sd["embed_tokens.weight"], "ln_final.weight": sd["norm.weight"]}
        bias = bool(c.get("attention_bias", False))
        for l in range(n_layers):
            h, o = f"layers.{l}.", f"layers.{l}."
            out[o + "ln1.weight"] = sd[h + "input_layernorm.weight"]
            out[o + "ln2.weight"] = sd[h + "post_attention_layernorm.weight"]
            for s in ("weight", *(("bias",) if bias else ())):
                out[o + f"attn.qkv.{s}"] = torch.cat(
                    [sd[h + f"self_attn.{m}_proj.{s}"] for m in ("q", "k", "v")])
                out[o + f"attn.out.{s}"] = sd[h + f"self_attn.o_proj.{s}"]
            for ours, theirs in (("fc_in", "up"), ("fc_gate", "gate"), ("fc_out", "down")):
                for s in ("weight", *(("bias",) if c.get("mlp_bias") else ())):
                    out[o + f"mlp.{ours}.{s}"] = sd[h + f"mlp.{theirs}_proj.{s}"]
        return {k: _t(v) for k, v in out.items()}

    def head(self, sd, c):
        """LlamaForTokenClassification's `score`, or an untied LM head (bias-free: zeros)."""
        for name in ("score", *(() if c.get("tie_word_embeddings", False) else ("lm_head",))):
            if f"{name}.weight" in sd:
                w = sd[f"{name}.weight"]
                return {"head.weight": w, "head.bias": sd.get(f"{name}.bias", w.new_zeros(len(w)))}
        return {}


# ---------------------------------------------------------------------- vision


@HF_FAMILIES.register("vit")
class ViT(Family):
    prefix = "vit."
    reads_tokens = False
    POSITIONS = 1024
    """The fresh position table's length, as the FPT authors' (zeros(1, 1024, 768))."""

    def fields(self, c):
        return dict(d_model=c["hidden_size"], d_embed=None, n_layers=c["num_hidden_layers"],
                    n_heads=c["num_attention_heads"], d_head=None,
                    d_mlp=c["intermediate_size"], norm_position="pre",
                    act=_act(c.get("hidden_act", "gelu"), "ViT"),
                    ln_eps=c.get("layer_norm_eps", 1e-12), causal=False, tie_layers=False,
                    attn_bias=bool(c.get("qkv_bias", True)))

    def max_positions(self, c):
        return self.POSITIONS

    OLD_NAMES = (("encoder.layer.", "layers."), ("attention.attention.query", "attention.q_proj"),
                 ("attention.attention.key", "attention.k_proj"),
                 ("attention.attention.value", "attention.v_proj"),
                 ("attention.output.dense", "attention.o_proj"),
                 ("intermediate.dense", "mlp.fc1"), ("output.dense", "mlp.fc2"))
    """The layout of transformers < 5 (and of the Hub's ViT files) -> today's, in order."""

    def strip(self, sd):
        out = {}
        for k, v in super().strip(sd).items():
            for old, new in self.OLD_NAMES:
                k = k.replace(old, new)
            out[k] = v
        return out

    def to_ours(self, sd, c, n_layers, max_seq_len):
        d = c["hidden_size"]
        ref = sd["layernorm.weight"]  # no token table; a fresh zero position table
        out = {"W_E": ref.new_zeros(1, d), "W_pos": ref.new_zeros(max_seq_len, d),
               "ln_final.weight": sd["layernorm.weight"], "ln_final.bias": sd["layernorm.bias"]}
        for l in range(n_layers):
            h, o = f"layers.{l}.", f"layers.{l}."
            for s in ("weight", "bias"):
                out[o + f"ln1.{s}"] = sd[h + f"layernorm_before.{s}"]
                out[o + f"ln2.{s}"] = sd[h + f"layernorm_after.{s}"]
                out[o + f"attn.qkv.{s}"] = torch.cat(
                    [sd[h + f"attention.{m}_proj.{s}"] for m in ("q", "k", "v")])
                out[o + f"attn.out.{s}"] = sd[h + f"attention.o_proj.{s}"]
                out[o + f"mlp.fc_in.{s}"] = sd[h + f"mlp.fc1.{s}"]
                out[o + f"mlp.fc_out.{s}"] = sd[h + f"mlp.fc2.{s}"]
        return {k: _t(v) for k, v in out.items()}
