"""Normalisation layers and feed-forward blocks (the NORMS and FEED_FORWARD registries).

BERT / GPT-2 use LayerNorm and a GELU MLP; Llama-style decoders (SmolLM2, the offline FPT
backbone, docs/papers.md §4) use RMSNorm and a SwiGLU feed-forward block. A model picks one
entry of each by name (`ModelConfig.norm_type`, `ModelConfig.feed_forward`); the Transformer
never branches on the names.

    NORMS[name](d_model, eps, affine)   -> module [..., d_model] -> [..., d_model]
    FEED_FORWARD[name](config)          -> module [batch, seq, d_model] -> same shape

NORM_MODULES lists the normalisation classes, so that init schemes and freeze policies can
recognise a norm layer whatever its kind.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.model.config import ModelConfig
from reasonlab.registry import Registry

NORMS: Registry[Callable[[int, float, bool], nn.Module]] = Registry("norm type")
FEED_FORWARD: Registry[type[nn.Module]] = Registry("feed-forward block")

NORM_MODULES: tuple[type[nn.Module], ...] = (nn.LayerNorm, nn.RMSNorm)
"""Every class a NORMS entry builds (weight 1 / bias 0 at init; the FPT `norms` group)."""


@NORMS.register("layernorm")
def layer_norm(d: int, eps: float, affine: bool = True) -> nn.Module:
    """(x - mean) / sqrt(var + eps) * g + b (Ba et al. 2016; BERT, GPT-2)."""
    return nn.LayerNorm(d, eps=eps, elementwise_affine=affine)


@NORMS.register("rmsnorm")
def rms_norm(d: int, eps: float, affine: bool = True) -> nn.Module:
    """x / sqrt(mean(x^2) + eps) * g (Zhang & Sennrich 2019; Llama's `LlamaRMSNorm`):
    no mean subtraction, no bias. torch's nn.RMSNorm computes exactly this."""
    return nn.RMSNorm(d, eps=eps, elementwise_affine=affine)


@FEED_FORWARD.register("standard")
class MLP(nn.Module):
    """Feed-forward block: W_out act(W_in x), then dropout (BERT's intermediate + output)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.fc_in = nn.Linear(config.d_model, config.d_mlp, bias=config.mlp_bias)
        self.act = nn.GELU() if config.act == "gelu" else nn.ReLU()  # BERT: exact (erf) GELU
        self.fc_out = nn.Linear(config.d_mlp, config.d_model, bias=config.mlp_bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [batch, seq, d_model]
        return self.dropout(self.fc_out(self.act(self.fc_in(x))))

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


@FEED_FORWARD.register("swiglu")
class SwiGLU(MLP):
    """W_out (silu(W_gate x) * W_in x): the gated feed-forward block of Llama (Shazeer 2020,
    "GLU Variants Improve Transformer", eq. 6 with Swish_1 = SiLU). `fc_in` is Llama's
    `up_proj`, `fc_gate` its `gate_proj`, `fc_out` its `down_proj`; `act` is not read."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        self.fc_gate = nn.Linear(config.d_model, config.d_mlp, bias=config.mlp_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [batch, seq, d_model]
        hidden = F.silu(self.fc_gate(x)) * self.fc_in(x)  # [batch, seq, d_mlp]
        return self.dropout(self.fc_out(hidden))

    @property
    def W_gate(self) -> torch.Tensor:  # [d_model, d_mlp]
        return self.fc_gate.weight.T
