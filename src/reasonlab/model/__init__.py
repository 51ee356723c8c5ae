"""The Transformer, its config, attention variants, init schemes and hook points."""

from reasonlab.model.attention import ATTENTION, AttentionHooks, SoftmaxAttention
from reasonlab.model.config import ModelConfig
from reasonlab.model.hooks import ActivationCache, HookPoint, hooks, run_with_cache
from reasonlab.model.init import INITS
from reasonlab.model import identity_attention  # noqa: F401  (registers "identity")
from reasonlab.model import conv_attention, hardcoded_attention  # noqa: F401  (LEGO §5)
from reasonlab.model.transformer import Transformer
from reasonlab.model.models import MODELS

__all__ = [
    "ATTENTION",
    "INITS",
    "MODELS",
    "ActivationCache",
    "AttentionHooks",
    "HookPoint",
    "ModelConfig",
    "SoftmaxAttention",
    "Transformer",
    "hooks",
    "run_with_cache",
]
