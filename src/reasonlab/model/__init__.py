"""The Transformer, its config, variants (attention, init, architecture, normalization,
feed-forward) and hook points. Importing this package registers every variant."""

from reasonlab.model.attention import AttentionHooks, SoftmaxAttention
from reasonlab.model.config import ModelConfig
from reasonlab.model.hooks import ActivationCache, HookPoint, hooks, run_with_cache
from reasonlab.model import (  # noqa: F401  (register entries)
    fpt, identity_attention, init, llama, lstm, mlp_baseline)
from reasonlab.model import conv_attention, hardcoded_attention  # noqa: F401  (LEGO §5)
from reasonlab.model import temperature_attention  # noqa: F401  (Hoffmann et al. 2024)
from reasonlab.model.transformer import Transformer
from reasonlab.model.variants import ATTENTION, INITS, MLPS, MODELS, NORMS, VariantConfig

__all__ = [
    "ATTENTION",
    "INITS",
    "MLPS",
    "MODELS",
    "NORMS",
    "ActivationCache",
    "AttentionHooks",
    "HookPoint",
    "ModelConfig",
    "SoftmaxAttention",
    "Transformer",
    "VariantConfig",
    "hooks",
    "run_with_cache",
]
