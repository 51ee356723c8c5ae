"""Initialization schemes (the INITS registry).

An entry is a class with a `Config` (its options, `ModelConfig.init`) and one static method
`apply(model, config, generator=None)` that overwrites the model's parameters in place. Pass an
explicit `torch.Generator` for reproducible weights (docs/design.md §3 Determinism); with None
the global torch RNG is used.
"""

from __future__ import annotations

import math

import torch
from pydantic import Field
from torch import nn

from reasonlab.model.config import ModelConfig
from reasonlab.model.variants import INITS, NORMS, VariantConfig


def is_norm(module: nn.Module) -> bool:
    """A normalization layer (a NORMS entry, or a plain LayerNorm): weight 1 and bias 0 under
    every scheme."""
    return isinstance(module, (nn.LayerNorm, *(cls for _, cls in NORMS.items())))


def _owner(model: nn.Module, name: str) -> nn.Module:
    return model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model


@INITS.register("default")
class DefaultInit:
    """BERT's initialization (Devlin et al. 2019; `BertPreTrainedModel._init_weights`).

    Linear and embedding weights ~ N(0, init_std), biases 0, LayerNorm weight 1 and bias 0.
    Parameters a module lists in its `zero_init` (e.g. the identity-attention scalars) start at 0.
    """

    Config = VariantConfig  # no options (the std is ModelConfig.init_std)

    @staticmethod
    @torch.no_grad()
    def apply(model: nn.Module, config: ModelConfig,
              generator: torch.Generator | None = None) -> None:
        std = config.init_std
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            owner = _owner(model, name)
            if is_norm(owner):
                nn.init.ones_(p) if leaf == "weight" else nn.init.zeros_(p)
            elif leaf == "bias" or leaf.startswith("b_") or leaf in getattr(owner, "zero_init", ()):
                nn.init.zeros_(p)
            else:  # Linear weights, W_E, W_pos
                nn.init.normal_(p, mean=0.0, std=std, generator=generator)


@INITS.register("rate")
class RateInit:
    """Initialization rate gamma (Zhang et al. 2024, arXiv 2405.05409, §2 and abstract):
    every parameter of a layer with d_in inputs ~ N(0, ((1/d_in)^gamma)^2).

    d_in per parameter:
      - a Linear layer (qkv, out, fc_in, fc_out, head): its in_features, for weight and bias
        alike ("every parameter of a layer", docs/papers.md §3 Anchor functions);
      - W_E and W_pos: d_model. Our reading: the paper does not say; an embedding row is what
        the layer emits, and the convention of code that initializes every 2-D weight from its
        last dimension (in_features for nn.Linear, d_model for an embedding table) gives
        d_model. It keeps tokens and positions on the same scale whatever the vocabulary size.
      - LayerNorm: weight 1, bias 0 (an elementwise map, not a layer with d_in inputs).
    gamma = 0.5 is the usual 1/sqrt(d_in); larger gamma = smaller initialization.
    """

    class Config(VariantConfig):
        gamma: float = Field(gt=0.0)
        """Initialization rate: std (1/d_in)^gamma. Required: it is the quantity the anchor
        studies vary (0.5 is the usual 1/sqrt(d_in))."""

    @staticmethod
    @torch.no_grad()
    def apply(model: nn.Module, config: ModelConfig,
              generator: torch.Generator | None = None) -> None:
        opts = config.init
        assert isinstance(opts, RateInit.Config)  # ModelConfig resolved it
        for name, p in model.named_parameters():
            owner = _owner(model, name)
            if is_norm(owner):
                nn.init.ones_(p) if name.endswith("weight") else nn.init.zeros_(p)
                continue
            d_in = owner.in_features if isinstance(owner, nn.Linear) else config.d_model
            nn.init.normal_(p, mean=0.0, std=d_in ** -opts.gamma, generator=generator)


@INITS.register("torch_default")
class TorchDefaultInit:
    """PyTorch's own defaults, as a model built from `nn` modules and never re-initialized
    gets them -- the abstract-symbols authors' models (docs/papers.md §5.2):

      - W_E ~ N(0, 1) (`nn.Embedding.reset_parameters`);
      - W_pos ~ N(0, 1) (their positions are a `torch.randn` parameter);
      - Linear weight ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)): `kaiming_uniform_(a=sqrt(5))`,
        whose gain sqrt(2 / (1 + 5)) times sqrt(3 / fan_in) is exactly 1/sqrt(fan_in);
        Linear bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (`nn.Linear.reset_parameters`);
      - LayerNorm weight 1, bias 0; a module's `zero_init` parameters 0.

    The fused Q/K/V projection has the same fan_in (d_model) as three separate ones, so its
    rows are drawn from the same distribution as the authors' separate `to_qk` / `to_v`.
    Embeddings 50x larger than BERT's N(0, 0.02^2) keep Adam's updates small against them.
    """

    Config = VariantConfig  # no options

    @staticmethod
    @torch.no_grad()
    def apply(model: nn.Module, config: ModelConfig,
              generator: torch.Generator | None = None) -> None:
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            owner = _owner(model, name)
            if is_norm(owner):
                nn.init.ones_(p) if leaf == "weight" else nn.init.zeros_(p)
            elif leaf in getattr(owner, "zero_init", ()):
                nn.init.zeros_(p)
            elif isinstance(owner, nn.Linear):
                bound = 1.0 / math.sqrt(owner.in_features)
                nn.init.uniform_(p, -bound, bound, generator=generator)
            else:  # W_E, W_pos: nn.Embedding / torch.randn
                nn.init.normal_(p, mean=0.0, std=1.0, generator=generator)
