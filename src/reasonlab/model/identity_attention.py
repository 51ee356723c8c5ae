"""Identity-augmented attention (Boix-Adsera et al., ICLR 2024, §4.3 and §5; docs/papers.md §2
Abstract symbols).

Per head h, with X [batch, seq, d_model] the attention layer's input (after its LayerNorm in a
pre-LN block):

    logits_h = q_h k_h^T / sqrt(d_head) + a_h X X^T      ("W_K W_Q^T + a I", §4.3)
    out      = W_O(z) + sum_h b_h Attn_h X               ("W_V W_O^T + b I", §5)

a_h and b_h are trainable scalars initialised at 0, two parameters per head, so at init the
model computes exactly what plain softmax attention computes. The a term lets a head attend by
token identity (X X^T says which positions hold the same symbol, whatever the symbol: §4.3
shows it improves the conditioning of the kernel's templates x templates matrix); the b term is
an attention-modulated skip connection that can copy a symbol's embedding to the read-out
position (§5: it removes the inverse scaling of copying with the embedding dimension).

Options (`IdentityAttention.Config`, e.g. attention={"name": "identity", "terms": "b"}): which
terms are on, and whether the diagonal of X X^T is zeroed.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from reasonlab.model.attention import SoftmaxAttention
from reasonlab.model.config import ModelConfig
from reasonlab.model.variants import ATTENTION, VariantConfig


@ATTENTION.register("identity")
class IdentityAttention(SoftmaxAttention):
    """Softmax attention with logits += a_h X X^T and output += b_h Attn_h X."""

    class Config(VariantConfig):
        terms: Literal["ab", "a", "b"] = "ab"
        """Which terms are on: a (logits += a_h X X^T), b (output += b_h Attn_h X), or both."""
        zero_diag: bool = False
        """Zero the diagonal of X X^T in the a term (a position's own identity does not attract
        its attention)."""

    zero_init = ("a", "b")  # parameters the init schemes must leave at 0 (see model/init.py)

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        opts = config.attention
        assert isinstance(opts, IdentityAttention.Config)  # ModelConfig resolved it
        terms, self.zero_diag = opts.terms, opts.zero_diag
        # Absent terms have no parameter at all, so they cannot drift under training.
        self.a = nn.Parameter(torch.zeros(self.n_heads)) if "a" in terms else None  # [n_heads]
        self.b = nn.Parameter(torch.zeros(self.n_heads)) if "b" in terms else None  # [n_heads]

    def scores(self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        scores = super().scores(q, k, x)  # [batch, n_heads, q_pos, k_pos]
        if self.a is None:
            return scores
        gram = x @ x.transpose(1, 2)  # [batch, q_pos, k_pos]  X X^T
        if self.zero_diag:
            gram = gram * (1 - torch.eye(gram.shape[-1], dtype=gram.dtype, device=gram.device))
        return scores + self.a[None, :, None, None] * gram[:, None]

    def output(self, z: torch.Tensor, pattern: torch.Tensor | None, x: torch.Tensor
               ) -> torch.Tensor:
        out = super().output(z, pattern, x)  # [batch, seq, d_model]
        if self.b is None:
            return out
        assert pattern is not None  # a variant never takes the fused path
        mixed = torch.einsum("h,bhqk->bqk", self.b, pattern)  # [batch, q_pos, k_pos]
        return out + mixed @ x  # sum_h b_h Attn_h X
