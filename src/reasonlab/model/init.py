"""Initialization schemes (the INITS registry).

An entry is a function `(model, config, generator=None) -> None` that overwrites the model's
parameters in place. Pass an explicit `torch.Generator` for reproducible weights (DESIGN §3);
with None the global torch RNG is used.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from reasonlab.model.config import ModelConfig
from reasonlab.registry import Registry

InitFn = Callable[[nn.Module, ModelConfig, "torch.Generator | None"], None]
INITS: Registry[InitFn] = Registry("init scheme")


@INITS.register("default")
@torch.no_grad()
def default_init(
    model: nn.Module, config: ModelConfig, generator: torch.Generator | None = None
) -> None:
    """BERT's initialization (Devlin et al. 2019; `BertPreTrainedModel._init_weights`).

    Linear and embedding weights ~ N(0, init_std), biases 0, LayerNorm weight 1 and bias 0.
    Parameters a module lists in its `zero_init` (e.g. the identity-attention scalars) start at 0.
    """
    std = config.init_std
    for name, p in model.named_parameters():
        leaf = name.rsplit(".", 1)[-1]
        owner = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
        if isinstance(owner, nn.LayerNorm):
            nn.init.ones_(p) if leaf == "weight" else nn.init.zeros_(p)
        elif leaf == "bias" or leaf.startswith("b_") or leaf in getattr(owner, "zero_init", ()):
            nn.init.zeros_(p)
        else:  # Linear weights, W_E, W_pos
            nn.init.normal_(p, mean=0.0, std=std, generator=generator)
