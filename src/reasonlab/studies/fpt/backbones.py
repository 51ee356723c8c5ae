"""The backbone as a factor of the FPT studies (Lu et al. 2021 freeze GPT-2; no GPT-2 weights
reach our machines, so each claim is judged on the two offline backbones of
model/fpt.py FPT_BACKBONES: SmolLM2-135M and MiniLM-L6).

`backbone_grid` builds a study's runs once per backbone, each spec carrying the factor
{"backbone": name} (data on the RunSpec: `results.by("backbone")` splits them, no arm name is
parsed), so one report prints one table per backbone and says which backbone every number is
from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reasonlab.model.fpt import FPT_BACKBONES, Backbone
from reasonlab.studies.kit.base import RunSpec, Scale, grid

NO_GPT2 = ("No GPT-2 weights are available offline: every table is run on two backbones, "
           "SmolLM2-135M (Llama-style decoder, 4-bit GGUF dequantized) and MiniLM-L6 (a BERT "
           "encoder), one table each.")
BACKBONES: tuple[str, ...] = ("smollm2", "minilm")
"""FPT_BACKBONES entries every FPT study runs, in report order."""
CPU_LAYERS = 2
"""Layers kept at cpu scale, either backbone (the first ones): all 30 of SmolLM2 cost seconds
per step on 2 cores; MiniLM keeps the same depth so that the two compare."""


def depth(backbone: Backbone, scale: Scale) -> int:
    """Layers of `backbone` a study runs at `scale`: all of them at paper scale."""
    return {"smoke": 1, "cpu": CPU_LAYERS, "long": CPU_LAYERS,
            "paper": backbone.architecture["n_layers"]}[scale]


def backbone_grid(recipe: Mapping[str, Any],
                  arms: Callable[[Backbone], Mapping[str, Mapping[str, Any]]],
                  sweep: Mapping[Any, Mapping[str, Any]], seeds: int,
                  sweep_factor: str = "task",
                  backbones: tuple[str, ...] = BACKBONES) -> list[RunSpec]:
    """`grid(recipe, arms(backbone), sweep, seeds)` for each backbone, its specs recording the
    factor {"backbone": name} besides the arm and the sweep point."""
    return [spec for name in backbones
            for spec in grid(recipe, arms(FPT_BACKBONES[name]), sweep=sweep, seeds=seeds,
                             factors={"backbone": name}, sweep_factor=sweep_factor)]


def backbone_line(name: str) -> str:
    """One line for a report: which backbone a table is from, and how it differs from GPT-2."""
    b = FPT_BACKBONES[name]
    return f"Backbone: {b.title} ({b.checkpoint}). {b.structure}."
