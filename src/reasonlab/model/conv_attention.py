"""Convolutional key / query / value maps: "conv_qkv" (LEGO, earlier version; docs/papers.md
§1.1).

The earlier version of the LEGO paper ends on learning to execute small C programs, "where a
convolutional modification to transformers, namely adding convolutional structures in the
key/query/value maps, shows an encouraging edge" (abstract). It gives no more detail. Our
reading: each of the query, key and value maps reads a depthwise temporal convolution of the
layer input instead of the input itself,

    q = W_Q (x + conv_Q(x)),   k = W_K (x + conv_K(x)),   v = W_V (x + conv_V(x))

three depthwise convolutions of width `kernel` (model/conv.py), centred (causal under a causal
mask), padding read as zero. The convolutions start at zero, so at initialization the layer is
exactly softmax attention (a convolution whose centre tap is 1 and others 0, written as a
residual so that the init schemes' `zero_init` keeps it there); training then learns the local
structure. Each map gains 3 x d_model x (kernel + 1) parameters; `lego-conv-qkv-programs`
gives its softmax baseline the same number of parameters in its feed-forward block.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field

from reasonlab.model.attention import ATTENTION, SoftmaxAttention
from reasonlab.model.config import ModelConfig
from reasonlab.model.conv import TemporalConv
from reasonlab.model.variants import VariantConfig


class ConvQKVConfig(VariantConfig):
    """Options of the convolutional key / query / value maps."""

    name: Literal["conv_qkv"]
    kernel: int = Field(3, gt=0)
    """Width of the depthwise convolutions (the paper gives none; 3 as Primer's
    depthwise-convolution heads, So et al. 2021)."""


@ATTENTION.register("conv_qkv")
class ConvQKVAttention(SoftmaxAttention):
    """Softmax attention whose Q, K and V maps read depthwise convolutions of the input."""

    Config = ConvQKVConfig

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        opts = config.attention
        assert isinstance(opts, ConvQKVConfig)  # ModelConfig resolved it
        d = config.d_model
        # The three convolutions as one depthwise convolution over 3 d_model channels.
        self.conv = TemporalConv(3 * d, opts.kernel, depthwise=True, causal=config.causal)
        self.conv.conv.zero_init = ("weight", "bias")  # read by the init schemes (model/init.py)

    def project(self, x: torch.Tensor, pad_mask: torch.Tensor | None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, T, d = x.shape
        H, dh = self.n_heads, self.d_head
        x3 = x.repeat(1, 1, 3)  # [batch, seq, 3 d_model]: the inputs of W_Q, W_K, W_V
        x3 = (x3 + self.conv(x3, pad_mask)).view(B, T, 3, d)  # [batch, seq, 3, d_model]
        w = self.qkv.weight.view(3, H * dh, d)  # [3, d_attn, d_model]
        qkv = torch.einsum("btsd,sed->btse", x3, w)  # [batch, seq, 3, d_attn]
        if self.qkv.bias is not None:
            qkv = qkv + self.qkv.bias.view(3, H * dh)
        return qkv.view(B, T, 3, H, dh).unbind(dim=2)  # each [batch, seq, H, d_head]
