"""What `symbols-kernel` computes at a scale (its recipe), and what `reasonlab run symbols-kernel
KEY=VALUE` may change in it: the kernel study trains nothing, so its overrides reach this recipe
instead of run configs (Boix-Adsera et al., ICLR 2024, §4.2-4.3; the study: symbols/kernel.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError
from reasonlab.studies.kit.base import Scale, merge
from reasonlab.studies.symbols.analysis import kernel_model_config
from reasonlab.studies.symbols.common import MODEL, SYMBOLS

SIZES: dict[Scale, tuple[int, int]] = {"smoke": (2, 16), "cpu": (32, 256), "paper": (256, 1024)}
"""(initializations averaged, examples per template)."""


class Alphabets(StrictModel):
    """The templates task's symbol alphabets (the rest of each task is the TASKS row's)."""

    n_train_symbols: int = Field(gt=0)
    n_val_symbols: int = Field(gt=0)
    n_test_symbols: int = Field(gt=0)


class KernelRecipe(StrictModel):
    """What the study computes at a scale. `reasonlab run symbols-kernel KEY=VALUE` changes it
    as `reasonlab run` changes a training study's runs (e.g. `n_inits=2 n_per_template=64` to
    time the paper scale first; `model.d_model=256`; `task.n_train_symbols=1000`; `--device
    cpu`); the attention of each setting stays the study's."""

    n_inits: int = Field(gt=0)
    """Random initializations N is averaged over."""
    n_per_template: int = Field(gt=0)
    """Examples drawn per template and alphabet."""
    model: dict[str, Any]
    """ModelConfig keys: the shape of the randomly initialised models."""
    task: Alphabets
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Where the models compute (`auto`: CUDA when present); the initializations and examples
    are drawn on the CPU, the same on every device."""


def kernel_recipe(scale: Scale, overrides: Mapping[str, Any]) -> KernelRecipe:
    """The scale's recipe with `overrides` merged in, checked: one ConfigError line naming the
    override that does not fit."""
    n_inits, n_per = SIZES[scale]
    base = {"n_inits": n_inits, "n_per_template": n_per, "model": MODEL[scale],
            "task": SYMBOLS[scale]}
    try:
        recipe = KernelRecipe.build(merge(base, overrides))
        kernel_model_config(recipe.model, True, 2, 2, 8)  # its keys and values, sizes aside
    except ConfigError as e:
        raise ConfigError(f"override does not fit study symbols-kernel: {e} (it takes "
                          "n_inits, n_per_template, model.*, task.n_train_symbols, "
                          "task.n_val_symbols, task.n_test_symbols and device)") from None
    from reasonlab.train.device import check_available  # imports torch: only when checking

    check_available(recipe.device)
    return recipe
