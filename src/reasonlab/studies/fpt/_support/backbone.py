"""The backbone as a factor of the FPT studies (Lu et al. 2021 freeze GPT-2).

Which backbones a study runs:
- `paper` scale: the paper's, GPT-2 small (PAPER; fpt-scaling: small, medium and large), read
  from a local Hugging Face folder or cache (model/hf.py): `reasonlab run` says before anything
  trains whether each was found, and where to put it.
- `smoke` / `cpu`: the two offline backbones of model/fpt.py FPT_BACKBONES, SmolLM2-135M and
  MiniLM-L6 (no GPT-2 weights reach our machines), each claim judged on both.
- `backbone=A[,B...]` on the command line (the studies' option) replaces them at any scale: an
  FPT_BACKBONES name (`smollm2`, `gpt2`, ...), a PRETRAINED name, or a folder / Hub name
  (`hf:/path/to/gpt2`, `hf:gpt2`). Where the paper's model cannot be had, the substitute is
  named there, and every table says it stands in for GPT-2: never a silent swap.

`backbone_grid` builds a study's runs once per backbone, each spec carrying the factor
{"backbone": name} (data on the RunSpec: `common.by_backbone` splits them, no arm name is
parsed), so one report prints one table per backbone and says which backbone every number is
from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reasonlab.errors import ConfigError
from reasonlab.model.fpt import FPT_BACKBONES, Backbone, folder_backbone
from reasonlab.model.pretrained import as_source
from reasonlab.studies.kit.base import RunSpec, Scale, grid

NO_GPT2 = ("No GPT-2 weights are available offline: at this scale every table is run on two "
           "backbones, SmolLM2-135M (Llama-style decoder, 4-bit GGUF dequantized) and MiniLM-L6 "
           "(a BERT encoder), one table each; `--scale paper` runs GPT-2.")
BACKBONES: tuple[str, ...] = ("smollm2", "minilm")
"""FPT_BACKBONES entries every FPT study runs at smoke and cpu scale, in report order."""
PAPER: tuple[str, ...] = ("gpt2",)
"""The paper's backbone: GPT-2 small, at paper scale."""
PAPER_MODEL = "gpt2"
CPU_LAYERS = 2
"""Layers kept at cpu scale, either backbone (the first ones): all 30 of SmolLM2 cost seconds
per step on 2 cores; MiniLM keeps the same depth so that the two compare."""
OPTION = {"backbone": "the backbone(s) to freeze instead of the scale's: FPT_BACKBONES names "
                      "(smollm2, minilm, gpt2, ...) or Hugging Face folders (hf:/path), "
                      "comma-separated"}


def resolve(name: str) -> Backbone:
    """The Backbone a run's `backbone` factor names: an FPT_BACKBONES entry, or any pretrained
    source (a folder, a Hub name, a PRETRAINED name) as a backbone of its own."""
    if name in FPT_BACKBONES:
        return FPT_BACKBONES[name]
    return folder_backbone(as_source(name))


def chosen(option: Any, scale: Scale, default: tuple[str, ...] | None = None
           ) -> tuple[str, ...]:
    """The backbones a study runs: the `backbone=` option (comma-separated, or a list), else
    `default`, else the scale's (PAPER at paper scale, BACKBONES otherwise). A bare path is
    read as a folder (hf:PATH), by its absolute path (pretrained.as_source)."""
    if option is None:
        return default or (PAPER if scale == "paper" else BACKBONES)
    names = option if isinstance(option, list) else str(option).split(",")
    names = [n.strip() for n in names if str(n).strip()]
    if not names:
        raise ConfigError("backbone= names no backbone; give e.g. backbone=gpt2 or "
                          "backbone=/path/to/folder")
    return tuple(n if n in FPT_BACKBONES else as_source(n) for n in names)


def depth(backbone: Backbone, scale: Scale) -> int:
    """Layers of `backbone` a study runs at `scale`: all of them at paper scale."""
    return {"smoke": 1, "cpu": CPU_LAYERS, "long": CPU_LAYERS,
            "paper": backbone.architecture["n_layers"]}[scale]


def backbone_grid(recipe: Mapping[str, Any],
                  arms: Callable[[Backbone], Mapping[str, Mapping[str, Any]]],
                  sweep: Mapping[Any, Mapping[str, Any]], seeds: int,
                  sweep_factor: str = "task", backbones: tuple[str, ...] = BACKBONES,
                  factors: Mapping[str, Any] | None = None) -> list[RunSpec]:
    """`grid(recipe, arms(backbone), sweep, seeds)` for each backbone, its specs recording the
    factor {"backbone": name} (and `factors`) besides the arm and the sweep point: every FPT
    study's backbone x arm x task grid is this one."""
    return [spec for name in backbones
            for spec in grid(recipe, arms(resolve(name)), sweep=sweep, seeds=seeds,
                             factors={"backbone": name, **(factors or {})},
                             sweep_factor=sweep_factor)]


def backbone_line(name: str) -> str:
    """One line for a report: which backbone a table is from, how it differs from GPT-2, and
    whether it stands in for the paper's."""
    b = resolve(name)
    stand_in = ("" if b.checkpoint.startswith("gpt2") else
                " It stands in for the paper's GPT-2 (chosen by the scale or by backbone=).")
    return f"Backbone: {b.title} ({b.checkpoint}). {b.structure}.{stand_in}"


def note(names: tuple[str, ...]) -> str:
    """The report's note on the backbones its tables use."""
    if all(resolve(n).checkpoint.startswith("gpt2") for n in names):
        return "Backbone: the paper's GPT-2 (" + ", ".join(resolve(n).title for n in names) + ")."
    if set(names) == set(BACKBONES):
        return NO_GPT2
    return ("Backbones: " + ", ".join(f"{resolve(n).title} ({resolve(n).checkpoint})"
                                      for n in names)
            + "; each stands in for the paper's GPT-2 where it is not GPT-2.")


def results_note(results: Any) -> str:
    """`note` for the backbones a study's results ran on (their `backbone` factor)."""
    names = tuple(results.by("backbone"))
    return note(names) if names else NO_GPT2


def slug(name: str) -> str:
    """A backbone's name fit for a file name (a folder backbone's `hf:/path/x` -> `hf_path_x`)."""
    return "".join(c if c.isalnum() or c in "-." else "_" for c in name).strip("_")
