"""The MODELS registry: `ModelConfig.arch` -> model class (same constructor and call)."""

from __future__ import annotations

from reasonlab.model.mlp import MLPBaseline
from reasonlab.model.transformer import Transformer
from reasonlab.registry import Registry

MODELS: Registry[type] = Registry("model architecture")
MODELS.register("transformer")(Transformer)
MODELS.register("mlp")(MLPBaseline)
