"""The registries of model variants, and the base of their configs.

A variant is a registry entry (a class) that declares its options as a `Config`, a
`VariantConfig` subclass, and overrides one method. `ModelConfig` holds one sub-config per
registry, selected by `name` exactly as `TrainConfig.task` selects a TASKS entry:

    attention      ATTENTION   the attention layer (model/attention.py)
    init           INITS       how the weights are initialized (model/init.py)
    arch           MODELS      the network: "transformer", the "mlp_baseline" (model/
                               mlp_baseline.py), "fpt", "lnlstm"
    norm_layer     NORMS       the normalization layer; `ModelConfig.norm_position` says where
                               it sits
    mlp            MLPS        the feed-forward block of a Transformer layer

This module imports no variant: the entries register themselves when their modules are
imported, which `reasonlab.model` (the package) does. So ModelConfig can name the registries
without importing the variants that read it (no import cycle); see docs/model.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError
from reasonlab.registry import Registry

if TYPE_CHECKING:
    from reasonlab.model.config import ModelConfig


class VariantConfig(StrictModel):
    """Base of every variant's options; `name` selects the registry entry. An entry without
    options uses this class itself as its Config."""

    name: str
    """Registry entry (required, so that a dump always says which variant it is)."""

    def check(self, model: ModelConfig) -> None:
        """The rules between this entry's options and the rest of the model config (e.g. "the
        hardcoded maps' token ids exist": `cls_id < model.vocab_size`), run by ModelConfig
        after every field validated; raise ValueError saying the fix. Pydantic checks each
        option on its own; an entry with rules overrides this (litgpt validates its config in
        __post_init__ the same way, in one place per config)."""


ATTENTION: Registry[Any] = Registry("attention variant")
INITS: Registry[Any] = Registry("init scheme")
MODELS: Registry[Any] = Registry("model architecture")
NORMS: Registry[Any] = Registry("normalization layer")
MLPS: Registry[Any] = Registry("feed-forward block")

REGISTRIES: dict[str, Registry[Any]] = {"attention": ATTENTION, "init": INITS, "arch": MODELS,
                                        "norm_layer": NORMS, "mlp": MLPS}
"""ModelConfig field -> the registry its sub-config selects from."""


def resolve(registry: Registry[Any], value: Any, where: str) -> VariantConfig:
    """A variant's validated Config from its name ("identity"), a dict with a "name"
    ({"name": "identity", "terms": "a"}) or a Config instance (checked to be its entry's)."""
    if isinstance(value, str):
        value = {"name": value}
    if isinstance(value, VariantConfig):
        cls = registry[value.name].Config
        if type(value) is not cls:
            raise ConfigError(f"{where}: {type(value).__name__} is not the Config of "
                              f"{registry.kind} {value.name!r} ({cls.__name__})")
        return value
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ConfigError(f"{where} must be a {registry.kind} name or an object with a "
                          f"\"name\" key (one of: {', '.join(registry)})")
    return registry[value["name"]].Config.build(value, where=where)
