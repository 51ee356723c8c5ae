"""Softmax temperature, NormSoftmax and heat treatment: the remedies Hoffmann et al. (ICML 2024,
"Eureka-Moments in Transformers: Multi-Step Tasks Reveal Softmax Induced Optimization
Problems", arXiv 2310.12956) give for the plateau of multi-step tasks (docs/papers.md §7).

Their diagnosis (abstract): on tasks whose intermediate step gets no direct supervision,
"transformers struggle to learn the intermediate task and both training and validation loss
saturate for hundreds of epochs", and "we trace the problem back to the Softmax function in the
self-attention block": ill-distributed attention gives W_Q and W_K vanishing gradients. Their
attention is `Attention(Q, K, V) = Softmax(Q K^T / tau) V`, tau the temperature (sqrt(d_head)
in the standard transformer). Three remedies, each an ATTENTION entry here:

    temperature      logits = q k^T / tau, a fixed tau (below sqrt(d_head): sharper attention)
    norm_softmax     NormSoftmax (Jiang et al. 2023, "NormSoftmax: Normalizing the Input of
                     Softmax to Accelerate and Stabilize Training"): each row of logits x is
                     divided by tau(x) = min(sigma(x), gamma), sigma the spread of the row, so a
                     row of small logits is brought to unit spread and a wide one is divided by
                     gamma alone; `statistic="var"` divides by min(sigma^2, gamma), the
                     variance form Hoffmann et al. also report
    heat_treatment   the temperature as a schedule over training steps: tau for the first
                     `steps` optimiser steps, then the standard sqrt(d_head)

The full text of Hoffmann et al. was not available offline here: the quotes above are from
their abstract; the forms of NormSoftmax ("takes the minimum of the standard deviation and
gamma", and its variance form) are as a later paper states them (a ViT replication that calls
them Softmax_sigma and Softmax_sigma^2); the heat-treatment schedule (a low temperature kept to
the start of training, then the standard one) is our reading of the name, and its two numbers
are options. docs/papers.md §7 says which numbers the lab uses and why.

`hook_attn_scores` holds the logits the softmax reads in `temperature` and `heat_treatment`
(q k^T / tau), and q k^T / sqrt(d_head) before the row normalisation in `norm_softmax`;
`hook_pattern` is in every entry the pattern that mixes the values.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from pydantic import Field

from reasonlab.model.attention import SoftmaxAttention
from reasonlab.model.config import ModelConfig
from reasonlab.model.variants import ATTENTION, VariantConfig

SPREAD_EPS = 1e-6
"""Added to the variance before its square root: a row whose logits are all equal (one allowed
key) has zero spread, and the square root's gradient there is infinite."""


@ATTENTION.register("temperature")
class TemperatureAttention(SoftmaxAttention):
    """Softmax(q k^T / tau): a fixed temperature in place of sqrt(d_head) (Hoffmann et al.
    2024: a lower temperature makes attention less uniform and the W_Q / W_K gradients larger)."""

    class Config(VariantConfig):
        tau: float = Field(gt=0.0)
        """The temperature dividing q k^T. sqrt(d_head) is softmax attention's own (4 for
        LEGO's d_head 16); below it the pattern is sharper."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        opts = config.attention
        assert isinstance(opts, TemperatureAttention.Config)  # ModelConfig resolved it
        self.tau = opts.tau

    def current_tau(self) -> float:
        """The temperature of this forward pass."""
        return self.tau

    def scores(self, q: torch.Tensor, k: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        # q k^T / sqrt(d) * sqrt(d) / tau = q k^T / tau; hook_attn_scores sees the result
        return super().scores(q, k, x) * (math.sqrt(self.d_head) / self.current_tau())


@ATTENTION.register("heat_treatment")
class HeatTreatmentAttention(TemperatureAttention):
    """Temperature `tau` for the first `steps` optimiser steps, then sqrt(d_head) (Hoffmann et
    al. 2024's "heat treatment"; the schedule is our reading, module docstring).

    The training loop tells the layer the step it is about to take (`set_step`, called for
    every module that has one: train/loop.py); evaluations during training use the step just
    taken, and a model loaded after training (step None) computes as after the treatment."""

    class Config(TemperatureAttention.Config):
        # tau (inherited): the temperature during the treatment
        steps: int = Field(gt=0)
        """Optimiser steps (0-based steps 0 .. steps-1) taken at `tau`; later steps and the
        trained model use sqrt(d_head)."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        opts = config.attention
        assert isinstance(opts, HeatTreatmentAttention.Config)
        self.until = opts.steps
        self.step: int | None = None

    def set_step(self, step: int | None) -> None:
        """The optimiser step about to run (None: training is over)."""
        self.step = step

    def current_tau(self) -> float:
        treated = self.step is not None and self.step < self.until
        return self.tau if treated else math.sqrt(self.d_head)


@ATTENTION.register("norm_softmax")
class NormSoftmaxAttention(SoftmaxAttention):
    """Softmax(x / min(sigma(x), gamma)) per row x of logits (NormSoftmax, Jiang et al. 2023;
    Hoffmann et al. 2024). sigma is the population standard deviation of the row's allowed
    keys (masked keys take no part), and the gradient flows through it, as through a
    LayerNorm's."""

    class Config(VariantConfig):
        gamma: float = Field(1.0, gt=0.0)
        """The bound on the divisor: rows whose spread is above gamma are divided by gamma."""
        statistic: Literal["std", "var"] = "std"
        """The spread: "std" (NormSoftmax, Softmax_sigma) or "var" (its variance form,
        Softmax_sigma^2)."""

    def __init__(self, config: ModelConfig):
        super().__init__(config)
        opts = config.attention
        assert isinstance(opts, NormSoftmaxAttention.Config)
        self.gamma, self.statistic = opts.gamma, opts.statistic

    def pattern(self, scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        # scores [batch, H, q_pos, k_pos]; mask [batch|1, 1, q_pos, k_pos] True = may attend
        if mask is None:
            mean = scores.mean(dim=-1, keepdim=True)
            var = (scores - mean).square().mean(dim=-1, keepdim=True)
        else:
            w = mask.to(scores.dtype)  # [batch|1, 1, q, k]; each row has >= 1 allowed key
            n = w.sum(dim=-1, keepdim=True)
            filled = scores.masked_fill(~mask, 0.0)
            mean = filled.sum(dim=-1, keepdim=True) / n
            var = ((filled - mean).square() * w).sum(dim=-1, keepdim=True) / n
        spread = var + SPREAD_EPS if self.statistic == "var" else (var + SPREAD_EPS).sqrt()
        tau = spread.clamp(max=self.gamma)  # min(sigma(x), gamma), [batch, H, q_pos, 1]
        return super().pattern(scores / tau, mask)
