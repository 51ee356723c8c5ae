"""The Transformer, in forward order: embed -> blocks -> (final LN) -> classification head.

One class covers BERT (post-LN encoder, Devlin et al. 2019), pre-LN encoders/decoders
(Xiong et al. 2020), ALBERT-like weight tying (Lan et al. 2020) and stochastic depth, the two
variants the LEGO paper uses to study length generalisation (Zhang et al. 2022, "Unveiling
Transformers with LEGO", §3 and §4).

Parameters and hook points are kept apart so that weight tying needs no shared tensors:

    self.layers   ModuleList of config.n_unique_layers `Layer`s: all the block parameters
    self.blocks   ModuleList of config.n_layers `BlockHooks`: hook points only, one per
                  application; application l runs self.layers[l % n_unique_layers]

so `blocks.3.hook_resid_post` exists in a tied model, and `state_dict()` holds each tensor once
(safetensors can save it).

Hook points, in forward order (shapes for tokens [batch, seq]):

    hook_embed                      [batch, seq, d_embed]   W_E[tokens]
    hook_pos_embed                  [batch, seq, d_embed]   W_pos[:seq]  (learned positions only)
    (d_embed = d_model unless the embedding is factorised, config.d_embed: then the LayerNormed
    embeddings are projected to d_model by `embed_proj` before blocks.0.hook_resid_pre)
    blocks.{l}.hook_resid_pre       [batch, seq, d_model]
    blocks.{l}.attn.hook_q/k/v      [batch, seq, n_heads, d_head]
    blocks.{l}.attn.hook_attn_scores [batch, n_heads, q_pos, k_pos]  (masked entries -inf)
    blocks.{l}.attn.hook_pattern    [batch, n_heads, q_pos, k_pos]
    blocks.{l}.attn.hook_pattern_dropped [batch, n_heads, q_pos, k_pos]  after attention dropout
    blocks.{l}.attn.hook_z          [batch, seq, n_heads, d_head]
    blocks.{l}.hook_attn_out        [batch, seq, d_model]
    blocks.{l}.hook_resid_mid       [batch, seq, d_model]   resid_pre + attn_out (a raw sum)
    blocks.{l}.hook_normalized_resid_mid   [batch, seq, d_model]   ln1 of it (post-LN only)
    blocks.{l}.mlp.hook_pre         [batch, seq, d_mlp]     W_in x + b_in, before the activation
                                                            (gated blocks: the gate's, W_gate x)
    blocks.{l}.mlp.hook_pre_linear  [batch, seq, d_mlp]     W_in x (gated blocks only)
    blocks.{l}.mlp.hook_post        [batch, seq, d_mlp]     what W_out reads: act(pre), gated
                                                            act(pre) * pre_linear
    blocks.{l}.hook_mlp_out         [batch, seq, d_model]
    blocks.{l}.hook_resid_post      [batch, seq, d_model]   + mlp_out (a raw sum)
    blocks.{l}.hook_normalized_resid_post  [batch, seq, d_model]   ln2 of it (post-LN only)
    hook_final                      [batch, seq, d_model]   after the final LN (pre-LN only)

As TransformerLens: resid hooks hold raw sums in every placement; a post-LN block (BERT) adds
the normalised hooks, and its output -- what blocks.{l+1}.hook_resid_pre sees -- is
hook_normalized_resid_post (pre-LN: hook_resid_post). `block_output_hook(config)` names it.

LayerNorms: norm_position="post" (BERT) has ln_embed + ln1/ln2 per layer;
norm_position="post_no_embed_ln" only ln1/ln2 (the anchor authors' GPT); norm_position="pre"
ln1/ln2 + ln_final.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.errors import ConfigError
from reasonlab.model.config import ModelConfig
from reasonlab.model.hooks import HookedModule, HookPoint, name_hook_points
from reasonlab.model.variants import ATTENTION, INITS, MLPS, MODELS, NORMS, VariantConfig


def attention_mask(
    pad_mask: torch.Tensor | None, causal: bool, seq: int, device: torch.device
) -> torch.Tensor | None:
    """One boolean mask [batch or 1, 1, q_pos, k_pos], True = may attend; None = attend to all.

    pad_mask [batch, seq] (True = real token) masks keys; `causal` masks future keys.
    A query whose every key is masked (an all-padding row, or left padding under a causal
    mask) is allowed to attend to itself, so softmax never sees an empty row and never
    produces NaN; no row that had an allowed key is changed.
    """
    if pad_mask is None and not causal:
        return None
    mask = torch.ones(1, 1, seq, seq, dtype=torch.bool, device=device)
    if causal:
        mask = mask.tril()
    if pad_mask is not None:
        mask = mask & pad_mask.bool()[:, None, None, :]  # [batch, 1, q_pos, k_pos]
        empty = ~mask.any(dim=-1, keepdim=True)  # [batch, 1, q_pos, 1]
        eye = torch.eye(seq, dtype=torch.bool, device=device)
        mask = mask | (empty & eye)
    return mask


@NORMS.register("layernorm")
class LayerNorm(nn.LayerNorm):
    """LayerNorm (Ba et al. 2016) with the config's epsilon; `affine=False`: a plain
    standardization (the abstract-symbols authors' final norm, `ln_final_affine`)."""

    Config = VariantConfig  # no options (eps is ModelConfig.ln_eps)

    def __init__(self, d: int, config: ModelConfig, affine: bool = True):
        super().__init__(d, eps=config.ln_eps, elementwise_affine=affine)


ACTIVATIONS: dict[str, type[nn.Module] | Callable[[], nn.Module]] = {
    "gelu": nn.GELU, "relu": nn.ReLU, "gelu_tanh": lambda: nn.GELU(approximate="tanh")}
"""ModelConfig.act -> the feed-forward nonlinearity (no parameters: checkpoints unchanged)."""


class MLPHooks(nn.Module):
    """The hook points of one application of a feed-forward block (TransformerLens's names)."""

    def __init__(self) -> None:
        super().__init__()
        self.hook_pre = HookPoint()  # [batch, seq, d_mlp], before the activation
        self.hook_post = HookPoint()  # [batch, seq, d_mlp], after it: what W_out reads


@MLPS.register("standard")
class MLP(nn.Module):
    """Feed-forward block: W_out act(W_in x), then dropout (BERT's intermediate + output)."""

    Config = VariantConfig  # no options (act, mlp_bias and d_mlp are ModelConfig fields)

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.fc_in = nn.Linear(config.d_model, config.d_mlp, bias=config.mlp_bias)
        self.act = ACTIVATIONS[config.act]()  # BERT: exact (erf) GELU; GPT-2: tanh
        self.fc_out = nn.Linear(config.d_mlp, config.d_model, bias=config.mlp_bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, hooks: MLPHooks) -> torch.Tensor:
        """x [batch, seq, d_model] -> [batch, seq, d_model]."""
        pre = hooks.hook_pre(self.fc_in(x))  # [batch, seq, d_mlp]
        return self.dropout(self.fc_out(hooks.hook_post(self.act(pre))))

    @staticmethod
    def make_hooks(config: ModelConfig) -> MLPHooks:
        """The hook points of one application of this block (a variant may have others)."""
        return MLPHooks()

    # Weights in the maths' convention (x @ W), as views.
    @property
    def W_in(self) -> torch.Tensor:  # [d_model, d_mlp]
        return self.fc_in.weight.T

    @property
    def b_in(self) -> torch.Tensor:  # [d_mlp]; zeros when bias-free (mlp_bias=False)
        b = self.fc_in.bias
        return b if b is not None else self.fc_in.weight.new_zeros(self.fc_in.out_features)

    @property
    def W_out(self) -> torch.Tensor:  # [d_mlp, d_model]
        return self.fc_out.weight.T

    @property
    def b_out(self) -> torch.Tensor:  # [d_model]; zeros when bias-free (mlp_bias=False)
        b = self.fc_out.bias
        return b if b is not None else self.fc_out.weight.new_zeros(self.fc_out.out_features)


class BlockHooks(nn.Module):
    """The hook points of one application of a block (no parameters)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.hook_resid_pre = HookPoint()
        self.attn = ATTENTION[config.attention.name].make_hooks(config)  # the variant's hook points
        self.hook_attn_out = HookPoint()
        self.hook_resid_mid = HookPoint()
        if config.norm_position != "pre":  # post-LN: the normalised states (TransformerLens's BERT)
            self.hook_normalized_resid_mid = HookPoint()
        self.mlp = MLPS[config.mlp.name].make_hooks(config)  # the block's hook points
        self.hook_mlp_out = HookPoint()
        self.hook_resid_post = HookPoint()
        if config.norm_position != "pre":
            self.hook_normalized_resid_post = HookPoint()


def block_output_hook(config: ModelConfig) -> str:
    """The hook point (after `blocks.{l}.`) holding a block's output, the residual stream the
    next block reads: the normalised sum under post-LN, the raw sum under pre-LN."""
    return "hook_resid_post" if config.norm_position == "pre" else "hook_normalized_resid_post"


class Layer(nn.Module):
    """The parameters of one block, and its maths; hook points come from the caller."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        norm = NORMS[config.norm_layer.name]
        self.pre_ln = config.norm_position == "pre"
        self.ln1 = norm(config.d_model, config)
        self.attn = ATTENTION[config.attention.name](config)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.ln2 = norm(config.d_model, config)
        self.mlp = MLPS[config.mlp.name](config)

    def forward(
        self, resid_pre: torch.Tensor, mask: torch.Tensor | None, hooks: BlockHooks,
        tokens: torch.Tensor | None = None, pad_mask: torch.Tensor | None = None,
        rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """tokens and pad_mask [batch, seq] reach the attention variants that read them (the
        hardcoded patterns of LEGO §5 are built from token ids). rows [batch, P]: the block's
        output at these positions only, [batch, P, d_model] (`Transformer.run_layers`)."""
        resid_pre = hooks.hook_resid_pre(resid_pre)  # [batch, seq, d_model]
        extra = {} if rows is None else {"rows": rows}  # variants' forward need not take rows
        if self.pre_ln:  # x = x + attn(LN(x)); x = x + mlp(LN(x))
            attn_out = self.attn_dropout(self.attn(self.ln1(resid_pre), mask, hooks.attn,
                                                   tokens, pad_mask, **extra))
            attn_out = hooks.hook_attn_out(attn_out)
            resid_mid = hooks.hook_resid_mid(_rows(resid_pre, rows) + attn_out)
            mlp_out = hooks.hook_mlp_out(self.mlp(self.ln2(resid_mid), hooks.mlp))
            return hooks.hook_resid_post(resid_mid + mlp_out)
        # post-LN (BERT): x = LN(x + attn(x)); x = LN(x + mlp(x))
        attn_out = hooks.hook_attn_out(self.attn_dropout(self.attn(resid_pre, mask, hooks.attn,
                                                                   tokens, pad_mask, **extra)))
        resid_mid = hooks.hook_resid_mid(_rows(resid_pre, rows) + attn_out)
        normalized_mid = hooks.hook_normalized_resid_mid(self.ln1(resid_mid))
        mlp_out = hooks.hook_mlp_out(self.mlp(normalized_mid, hooks.mlp))
        resid_post = hooks.hook_resid_post(normalized_mid + mlp_out)
        return hooks.hook_normalized_resid_post(self.ln2(resid_post))


def _rows(x: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
    """x [batch, seq, d] at rows [batch, P] -> [batch, P, d]; None keeps x."""
    return x if rows is None else x.gather(1, rows[..., None].expand(-1, -1, x.shape[-1]))


def gather_positions(x: torch.Tensor, label_pos: torch.Tensor | None) -> torch.Tensor:
    """x [batch, seq, d] at label_pos [batch, P] -> [batch, P, d]; None keeps every position.
    Padded slots (label_pos -1, mixed lengths) read position 0; loss and metrics mask them."""
    if label_pos is None:
        return x
    index = label_pos.clamp(min=0).unsqueeze(-1).expand(-1, -1, x.shape[-1])
    return x.gather(1, index)  # [batch, P, d]


class TiedHead(nn.Module):
    """Read-out tied to the embedding, logits = x W_E^T (GPT-2's, no bias): a symbol's logit is
    its embedding's inner product with the read-out state, so an unseen symbol can be named
    (abstract symbols, Boix-Adsera et al. 2024 §5). W_E is passed in, not held, so the
    state dict holds it once. No parameters."""

    def forward(self, x: torch.Tensor, W_E: torch.Tensor) -> torch.Tensor:
        return F.linear(x, W_E)  # [..., d_model] -> [..., vocab]


@MODELS.register("transformer")
class Transformer(HookedModule):
    """Token classifier: logits [batch, P, n_classes] at `label_pos`, or at every position."""

    Config = VariantConfig  # no options: the architecture fields are ModelConfig's own

    def __init__(self, config: ModelConfig, generator: torch.Generator | None = None):
        super().__init__()
        self.config = config
        norm = NORMS[config.norm_layer.name]
        d = config.d_model
        e = config.d_embed or d  # embedding width: d_model, or ALBERT's factorised width
        self.W_E = nn.Parameter(torch.empty(config.vocab_size, e))  # [vocab, d_embed]
        # Learned absolute positions (BERT); with rotary positions, attention rotates q and k.
        self.W_pos = (nn.Parameter(torch.empty(config.max_seq_len, e))  # [max_seq_len, d_embed]
                      if config.positions == "learned" else None)
        self.hook_embed = HookPoint()
        # Only where W_pos is added: a hook point that could never fire is not created.
        self.hook_pos_embed = HookPoint() if self.W_pos is not None else None
        # BERT normalizes the embeddings; pre-LN instead normalizes at the end (Xiong et al.);
        # "post_no_embed_ln" does neither, so the embeddings' initial scale reaches layer 1.
        self.ln_embed = norm(e, config) if config.norm_position == "post" else None
        self.embed_dropout = nn.Dropout(config.dropout)
        # ALBERT (Lan et al. 2020 §3.1): embeddings of width d_embed, after LayerNorm and
        # dropout, mapped to d_model (HF's `embedding_hidden_mapping_in`).
        self.embed_proj = nn.Linear(e, d) if config.d_embed is not None else None
        # ALBERT / LEGO §3: with tie_layers one Layer is applied n_layers times.
        self.layers = nn.ModuleList(Layer(config) for _ in range(config.n_unique_layers))
        self.blocks = nn.ModuleList(BlockHooks(config) for _ in range(config.n_layers))
        pre = config.norm_position == "pre"
        self.ln_final = norm(d, config, config.ln_final_affine) if pre else None
        self.hook_final = HookPoint()
        # Head: one linear map from the residual stream to class logits. BERT's MLM head adds
        # a dense + act + LayerNorm transform first; the LEGO classifier does not need it.
        self.head = nn.Linear(d, config.n_classes) if not config.tie_head else TiedHead()
        name_hook_points(self)
        INITS[config.init.name].apply(self, config, generator)

    def forward(
        self,
        tokens: torch.Tensor,
        label_pos: torch.Tensor | None = None,
        pad_mask: torch.Tensor | None = None,
        depth: int | None = None,
    ) -> torch.Tensor:
        """tokens [batch, seq] -> logits [batch, P, n_classes] (or [batch, seq, n_classes]).

        label_pos [batch, P] positions whose hidden state is classified; None = all positions.
        pad_mask  [batch, seq] bool, True = real token; padded keys are never attended to.
        depth     apply only the first `depth` blocks (stochastic depth, LEGO §4). None = all.
                  The caller draws it (from config.depth_range) so the model holds no RNG.
        """
        cfg = self.config
        B, T = tokens.shape
        if T > cfg.max_seq_len:
            raise ConfigError(f"sequence length {T} exceeds max_seq_len={cfg.max_seq_len}")
        depth = cfg.n_layers if depth is None else depth
        if not 1 <= depth <= cfg.n_layers:
            raise ValueError(f"depth={depth} must be in [1, n_layers={cfg.n_layers}]")

        x = self.hook_embed(F.embedding(tokens, self.W_E))  # [batch, seq, d_embed]
        if self.W_pos is not None:  # learned positions (BERT); rotary ones act in attention
            x = x + self.hook_pos_embed(self.W_pos[:T].expand(B, T, -1))  # [batch, seq, d_embed]
        x = self.embed_out(x)  # [batch, seq, d_model]
        x = self.run_layers(x, pad_mask, depth, tokens)  # [batch, seq, d_model]
        x = gather_positions(x, label_pos)  # [batch, P, d_model]
        if self.config.tie_head:
            return self.head(x, self.W_E)  # [batch, P or seq, vocab]
        return self.head(x)  # [batch, P or seq, n_classes]

    def embed_out(self, x: torch.Tensor) -> torch.Tensor:
        """The summed embeddings [batch, seq, d_embed] -> layer 0's input [batch, seq, d_model]:
        BERT's embedding LayerNorm, dropout, ALBERT's projection (each where configured)."""
        if self.ln_embed is not None:
            x = self.ln_embed(x)
        x = self.embed_dropout(x)
        if self.embed_proj is not None:
            x = self.embed_proj(x)  # [batch, seq, d_model]
        return x

    def run_layers(self, x: torch.Tensor, pad_mask: torch.Tensor | None, depth: int,
                   tokens: torch.Tensor | None = None, rows: torch.Tensor | None = None
                   ) -> torch.Tensor:
        """The first `depth` blocks, then the final norm (pre-LN): [batch, seq, d_model].
        `tokens` [batch, seq] for attention variants that read token ids (LEGO §5's hardcoded
        patterns); None where the input is not tokens (FPT's continuous inputs).

        rows [batch, P]: the last block runs its queries, its MLP and the final norm at these
        positions only and the result is [batch, P, d_model] -- all a read-out of those
        positions needs (FPT reads the last token: most of one block's work is saved)."""
        mask = attention_mask(pad_mask, self.config.causal, x.shape[1], x.device)
        for l in range(depth):  # mask: [B|1, 1, T, T] | None
            last = rows if l == depth - 1 else None
            x = self.layer(l)(x, mask, self.blocks[l], tokens, pad_mask, last)  # [B, T|P, d]
        if self.ln_final is not None:
            x = self.ln_final(x)
        return self.hook_final(x)  # [batch, seq, d_model]

    def layer(self, l: int) -> Layer:
        """The parameters that application l runs (the same Layer for all l when tied)."""
        return self.layers[l % len(self.layers)]

    # -- sizes for benchmarks ---------------------------------------------------------------

    def num_params(self, non_embedding: bool = False) -> int:
        """Distinct trainable parameters (tied weights counted once); optionally without
        W_E and W_pos."""
        n = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n -= self.W_E.numel() + (self.W_pos.numel() if self.W_pos is not None else 0)
        return n

    def flops_per_token(
        self, seq_len: int | None = None, depth: int | None = None, training: bool = True
    ) -> float:
        """Model FLOPs per token: 6 N + 12 depth seq d_attn for a training step, a third of
        that for a forward pass (PaLM, Chowdhery et al. 2022, App. B; Kaplan et al. 2020).

        N counts the non-embedding parameters *as applied*: a tied layer applied L times counts
        L times (it costs L times the matmuls), plus the head at every position (an upper bound
        when only label positions are classified). The attention term is what the layer's
        attention variant reports as `mixing_flops` (softmax: q k^T and pattern @ v, 2 matmuls
        x 2 FLOPs x seq x d_attn per layer, forward; the hardcoded maps of LEGO §5 skip q k^T);
        a convolution's weights are parameters applied once per token, so 2 N counts them.
        """
        cfg = self.config
        seq_len = cfg.max_seq_len if seq_len is None else seq_len
        depth = cfg.n_layers if depth is None else depth
        per_layer = sum(p.numel() for p in self.layers[0].parameters())
        n_applied = depth * per_layer + sum(p.numel() for p in self.head.parameters())
        if self.embed_proj is not None:
            n_applied += self.embed_proj.weight.numel()
        forward = 2 * n_applied + depth * self.layers[0].attn.mixing_flops(seq_len)
        return float(3 * forward if training else forward)
