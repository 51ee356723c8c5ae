"""Temporal convolution along the sequence: a block component (LEGO §5; docs/papers.md §1.1).

LEGO §5 implements its "manipulation" heads -- heads that attend to a fixed window of nearby
positions, seen in pretrained BERT -- "directly with temporal convolutions (along the time
dimension)", kernel 21. The earlier version of the paper puts convolutional structure inside
the key/query/value maps (`conv_qkv`, model/conv_attention.py). Both use this module.

    y[t, c] = sum_s w[c, s] x[t + s - left, c] + b[c]        (depthwise: channel by channel)
    y[t, c] = sum_s sum_c' w[c, c', s] x[t + s - left, c'] + b[c]   (full)

Positions outside the sequence and padded positions read as 0, so a padded sequence gives its
real tokens exactly what the unpadded one gives. left = kernel // 2 (centred; an even kernel
reaches one more position to the left), or kernel - 1 with `causal` (no future position).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class TemporalConv(nn.Module):
    """1-D convolution of x [batch, seq, d] along seq, 'same' length, zero padding."""

    def __init__(self, d: int, kernel: int, depthwise: bool = True, causal: bool = False,
                 bias: bool = True):
        super().__init__()
        self.kernel = kernel
        self.left = kernel - 1 if causal else kernel // 2
        self.right = kernel - 1 - self.left
        # nn.Conv1d is cross-correlation: output t reads inputs t - left .. t + right.
        self.conv = nn.Conv1d(d, d, kernel, groups=d if depthwise else 1, bias=bias)

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        """x [batch, seq, d], pad_mask [batch, seq] (True = real) -> [batch, seq, d]."""
        if pad_mask is not None:  # padding contributes nothing to its neighbours
            x = x * pad_mask[..., None].to(x.dtype)
        x = F.pad(x.transpose(1, 2), (self.left, self.right))  # [batch, d, left + seq + right]
        return self.conv(x).transpose(1, 2)  # [batch, seq, d]

