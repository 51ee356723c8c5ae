"""The Llama pieces that SmolLM2 (the FPT decoder backbone, docs/papers.md §4) needs beyond
BERT's: RMSNorm (a NORMS entry) and the SwiGLU feed-forward block (an MLPS entry).

The other Llama pieces are ModelConfig fields: grouped-query attention (`n_kv_heads`, in
SoftmaxAttention), rotary positions (`positions="rotary"`), causal masking (`causal`), pre-norm
with a final norm (`norm_position="pre"`), bias-free linears (`attn_bias`, `mlp_bias`) and the LM
head
tied to the embeddings (`tie_head`). model/gguf.py lists SmolLM2's values.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.model.config import ModelConfig
from reasonlab.model.transformer import MLP
from reasonlab.model.variants import MLPS, NORMS, VariantConfig


@NORMS.register("rmsnorm")
class RMSNorm(nn.RMSNorm):
    """x / sqrt(mean(x^2) + eps) * g (Zhang & Sennrich 2019; Llama's `LlamaRMSNorm`): no mean
    subtraction and no bias. torch's nn.RMSNorm computes exactly this; eps is ModelConfig.ln_eps
    (SmolLM2: 1e-5)."""

    Config = VariantConfig  # no options

    def __init__(self, d: int, config: ModelConfig, affine: bool = True):
        super().__init__(d, eps=config.ln_eps, elementwise_affine=affine)


@MLPS.register("swiglu")
class SwiGLU(MLP):
    """W_out (silu(W_gate x) * W_in x): Llama's gated feed-forward block (Shazeer 2020, "GLU
    Variants Improve Transformer", eq. 6, Swish_1 = SiLU). `fc_in` is Llama's `up_proj`,
    `fc_gate` its `gate_proj`, `fc_out` its `down_proj`; ModelConfig.act is not read."""

    Config = VariantConfig  # no options (d_mlp, mlp_bias, dropout are ModelConfig fields)

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.fc_gate = nn.Linear(config.d_model, config.d_mlp, bias=config.mlp_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [batch, seq, d_model]
        hidden = F.silu(self.fc_gate(x)) * self.fc_in(x)  # [batch, seq, d_mlp]
        return self.dropout(self.fc_out(hidden))

    @property
    def W_gate(self) -> torch.Tensor:  # [d_model, d_mlp]
        return self.fc_gate.weight.T
