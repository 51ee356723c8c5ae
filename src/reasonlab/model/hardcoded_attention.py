"""Attention with hardcoded patterns: "hardcoded" and "hybrid" (LEGO §5, Zhang et al. 2022;
docs/papers.md §1.1).

LEGO §5 reads three kinds of heads off pretrained BERT -- association (attend to the other
occurrences of the same token), manipulation (attend to nearby positions) and broadcast (attend
to [CLS] or [SEP]) -- and hardcodes them. From the token ids u_1 .. u_T alone:

    (A_asso)_ij = 1[u_i = u_j],   (A_cls)_ij = 1[u_j = [CLS]],   (A_sep)_ij = 1[u_j = [SEP]]

"In the end, we normalize them to have row-wise unit l1 norm. Notably, the latter three
hardcoded attention patterns require no training (other than a value map for each layer) and
are shared across all layers." Manipulation is "implemented directly with temporal
convolutions (along the time dimension)", kernel 21 (`TemporalConv`, model/conv.py).

One layer here computes, with x [batch, seq, d_model] the layer input:

    pattern = [softmax(q_h k_h^T / sqrt(d_head))  for the `learned_heads` heads h,
               A_asso, A_cls, A_sep]                          [batch, H_l + 3, q_pos, k_pos]
    z       = pattern @ v,  v = x W_V (one value map per head and pattern, per layer)
    out     = W_O z + conv(x)

"hardcoded" (the paper's Hardcode model) has no learned heads: no W_Q, W_K, no softmax.
"hybrid" (the paper's Hybrid model) adds `learned_heads` ordinary softmax heads, fewer than
BERT's. How many the paper's Hybrid keeps is in its Appendix C, which we do not have; the
reading we take is in docs/papers.md §1.1. The maps depend on the tokens only, so every
layer computes the same maps (they are cheap: comparisons of ids); padded keys (and future
keys under a causal mask) are left out before the rows are normalised, and a row with no
[CLS] (or [SEP]) key stays zero: there is nothing to broadcast.

Hook points (blocks.{l}.attn.*): hook_q, hook_k, hook_attn_scores (learned heads only, and
only in "hybrid"), hook_v, hook_pattern, hook_pattern_dropped, hook_z (all heads, learned
first, then asso, cls, sep), hook_conv_out [batch, seq, d_model].
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from pydantic import Field
from torch import nn

from reasonlab.model.attention import ATTENTION
from reasonlab.model.config import ModelConfig
from reasonlab.model.conv import TemporalConv
from reasonlab.model.hooks import HookPoint
from reasonlab.model.variants import VariantConfig

PATTERNS = ("asso", "cls", "sep")
"""The hardcoded heads, in the order they follow the learned heads."""


def hardcoded_patterns(tokens: torch.Tensor, mask: torch.Tensor | None, cls_id: int,
                       sep_id: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """tokens [batch, seq] -> [batch, 3, q_pos, k_pos]: A_asso, A_cls, A_sep, rows of unit l1
    norm (LEGO §5). mask [batch or 1, 1, q_pos, k_pos] bool (True = may attend) or None."""
    same = tokens[:, :, None] == tokens[:, None, :]  # [batch, q_pos, k_pos]  1[u_i = u_j]
    cls = (tokens == cls_id)[:, None, :].expand_as(same)  # 1[u_j = [CLS]]
    sep = (tokens == sep_id)[:, None, :].expand_as(same)  # 1[u_j = [SEP]]
    a = torch.stack([same, cls, sep], dim=1)  # [batch, 3, q_pos, k_pos]
    if mask is not None:
        a = a & mask
    a = a.to(dtype)
    return a / a.sum(-1, keepdim=True).clamp(min=1.0)  # an empty row stays 0


class HardcodedHooks(nn.Module):
    """The hook points of one application of a hardcoded / hybrid attention layer."""

    def __init__(self, learned: bool) -> None:
        super().__init__()
        if learned:  # no query, key or logits without learned heads: no hook that cannot fire
            self.hook_q = HookPoint()  # [batch, seq, learned_heads, d_head]
            self.hook_k = HookPoint()  # [batch, seq, learned_heads, d_head]
            self.hook_attn_scores = HookPoint()  # [batch, learned_heads, q_pos, k_pos]
        self.hook_v = HookPoint()  # [batch, seq, heads, d_head]
        self.hook_pattern = HookPoint()  # [batch, heads, q_pos, k_pos]
        self.hook_pattern_dropped = HookPoint()  # [batch, heads, q_pos, k_pos]
        self.hook_z = HookPoint()  # [batch, seq, heads, d_head]
        self.hook_conv_out = HookPoint()  # [batch, seq, d_model]


class HardcodedConfig(VariantConfig):
    """Options of the hardcoded patterns and the convolution (LEGO §5)."""

    name: Literal["hardcoded"]
    cls_id: int = Field(ge=0)
    """Token id of [CLS] (the task's vocabulary; the broadcast map A_cls attends to it)."""
    sep_id: int = Field(ge=0)
    """Token id of [SEP] (A_sep attends to it)."""
    kernel: int = Field(21, gt=0)
    """Width of the manipulation convolution ("We use convolutional kernel size 21", §5)."""
    depthwise: bool = True
    """Depthwise convolution (one filter per channel, d_model x kernel weights) or a full one
    (d_model^2 x kernel). The paper says "temporal convolutions" only; depthwise is the
    reading under which Hybrid is smaller than BERT, as its Fig. 8 reports."""

    def check(self, model: ModelConfig) -> None:
        """The broadcast maps read token ids: [CLS] and [SEP] must be ones."""
        for key in ("cls_id", "sep_id"):
            if getattr(self, key) >= model.vocab_size:
                raise ValueError(f"attention.{key}={getattr(self, key)} is not a token id "
                                 f"(vocab_size={model.vocab_size})")


class HybridConfig(HardcodedConfig):
    """Hardcoded patterns and convolution plus ordinary softmax heads (LEGO §5, Hybrid)."""

    name: Literal["hybrid"]  # type: ignore[assignment]
    learned_heads: int = Field(gt=0)
    """Ordinary softmax heads kept, each of width d_head (d_model // n_heads unless set):
    fewer than n_heads, the rest of BERT's heads being replaced by the hardcoded maps and the
    convolution (our reading of §5; docs/papers.md §1.1)."""

    def check(self, model: ModelConfig) -> None:
        super().check(model)
        if self.learned_heads >= model.n_heads:
            raise ValueError(f"attention.learned_heads={self.learned_heads} must be fewer than "
                             f"n_heads={model.n_heads}: Hybrid replaces some of BERT's heads "
                             "by the hardcoded maps and the convolution")


@ATTENTION.register("hardcoded")
class HardcodedAttention(nn.Module):
    """Hardcoded association / broadcast maps, one value map each, plus a temporal convolution
    (the paper's Hardcode model); `HybridAttention` adds learned softmax heads."""

    Config: type[HardcodedConfig] = HardcodedConfig

    def __init__(self, config: ModelConfig):
        super().__init__()
        opts = config.attention
        assert isinstance(opts, HardcodedConfig)  # ModelConfig resolved it
        self.cls_id, self.sep_id = opts.cls_id, opts.sep_id
        self.n_learned = opts.learned_heads if isinstance(opts, HybridConfig) else 0
        self.n_heads = self.n_learned + len(PATTERNS)
        self.d_head = config.d_head_
        d = config.d_model
        # W_Q, W_K of the learned heads only; a value map for every head.
        self.qk = (nn.Linear(d, 2 * self.n_learned * self.d_head, bias=config.attn_bias)
                   if self.n_learned else None)
        self.v = nn.Linear(d, self.n_heads * self.d_head, bias=config.attn_bias)
        self.out = nn.Linear(self.n_heads * self.d_head, d, bias=config.attn_bias)
        self.pattern_dropout = nn.Dropout(config.dropout)
        self.conv = TemporalConv(d, opts.kernel, opts.depthwise, config.causal)

    @staticmethod
    def make_hooks(config: ModelConfig) -> HardcodedHooks:
        return HardcodedHooks(learned=isinstance(config.attention, HybridConfig))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, hooks: HardcodedHooks,
                tokens: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x [batch, seq, d_model], tokens [batch, seq] -> [batch, seq, d_model]."""
        B, T, _ = x.shape
        dh = self.d_head
        v = hooks.hook_v(self.v(x).view(B, T, self.n_heads, dh))  # [batch, seq, heads, d_head]
        maps = hardcoded_patterns(tokens, mask, self.cls_id, self.sep_id, x.dtype)  # [B,3,T,T]
        if self.qk is not None:
            q, k = self.qk(x).view(B, T, 2, self.n_learned, dh).unbind(dim=2)
            q, k = hooks.hook_q(q), hooks.hook_k(k)  # [batch, seq, learned_heads, d_head]
            scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(dh)
            scores = hooks.hook_attn_scores(scores)  # [batch, learned_heads, q_pos, k_pos]
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            maps = torch.cat([scores.softmax(dim=-1), maps], dim=1)  # learned heads first
        pattern = hooks.hook_pattern(maps)  # [batch, heads, q_pos, k_pos]
        dropped = hooks.hook_pattern_dropped(self.pattern_dropout(pattern))
        z = hooks.hook_z((dropped @ v.transpose(1, 2)).transpose(1, 2))  # [B, T, heads, dh]
        conv = hooks.hook_conv_out(self.conv(x, pad_mask))  # [batch, seq, d_model]
        return self.out(z.flatten(2)) + conv  # [batch, seq, d_model]

    def mixing_flops(self, seq_len: int) -> int:
        """Forward FLOPs per token beyond the parameter matmuls: q k^T for the learned heads
        and pattern @ v for every head, as dense matmuls (what runs here; a sparse product of
        the hardcoded maps would cost less). Building the maps is comparisons, not counted."""
        return 2 * seq_len * self.d_head * (2 * self.n_learned + len(PATTERNS))


@ATTENTION.register("hybrid")
class HybridAttention(HardcodedAttention):
    """The paper's Hybrid model: `learned_heads` softmax heads beside the hardcoded maps."""

    Config = HybridConfig

