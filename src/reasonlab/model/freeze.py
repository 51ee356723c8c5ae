"""Freeze policies: which parameter groups of a model train (FPT, docs/papers.md §4).

A model that supports policies names the group of each parameter (`param_group(name)`, e.g.
model/fpt.py). The groups:

    input        the trained input layer (linear patch map or token embedding)
    output       the read-out
    positions    position embeddings
    norms        every normalisation layer's gain (and bias)
    attention    Q, K, V, O projections
    mlp          the feed-forward blocks
    embeddings   the backbone's token table (and ALBERT's projection)

A frozen parameter gets requires_grad False, so it has no gradient, costs no weight-gradient
matmul in backward, and never reaches the optimizer (no Adam state).

Presets: the FPT recipe and the paper's ablations ("Which parameters of the model are
important to finetune?" and "Freezing fewer parameters"; docs/papers.md §4).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator
from torch import nn

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError

Group = Literal["input", "output", "positions", "norms", "attention", "mlp", "embeddings"]
GROUPS: tuple[Group, ...] = ("input", "output", "positions", "norms", "attention", "mlp",
                             "embeddings")

FPT: tuple[Group, ...] = ("input", "output", "positions", "norms")
PRESETS: dict[str, tuple[Group, ...]] = {
    "output_only": ("output",),
    "input_output": ("input", "output"),
    "output_positions": ("output", "positions"),
    "output_norms": ("output", "norms"),
    "input_output_positions": ("input", "output", "positions"),
    "fpt": FPT,
    "fpt_mlp": (*FPT, "mlp"),  # the paper's "+ Feedforward"
    "fpt_attention": (*FPT, "attention"),  # "+ Attention"
    "full": GROUPS,  # "+ Both" (the token table does not enter FPT's forward pass)
}
"""Named policies -> the groups that train."""


def resolve_groups(value: str | list[str]) -> list[Group]:
    """A preset name, or a list of group names -> the sorted list of groups that train."""
    if isinstance(value, str):
        if value not in PRESETS:
            raise ConfigError(f"unknown freeze preset {value!r}; choose one of: "
                              f"{', '.join(PRESETS)}, or a list of groups from {list(GROUPS)}")
        value = list(PRESETS[value])
    if not isinstance(value, list):
        raise ConfigError(f"trainable={value!r} must be a preset name ({', '.join(PRESETS)}) or a "
                          f"list of groups from {list(GROUPS)}")
    bad = [g for g in value if not isinstance(g, str) or g not in GROUPS]
    if bad or not value:
        raise ConfigError(f"trainable groups {value} must be a non-empty list drawn from "
                          f"{list(GROUPS)} (or a preset: {', '.join(PRESETS)})")
    return sorted(set(value), key=GROUPS.index)  # type: ignore[arg-type]


class TrainGroups(StrictModel):
    """Training policy (TrainConfig.trainable): the parameter groups that train."""

    groups: list[Group]
    """Sorted, without repeats; a preset name is accepted and stored as its groups."""

    @field_validator("groups", mode="before")
    @classmethod
    def _resolve(cls, value: str | list[str]) -> list[Group]:
        return resolve_groups(value)

    def apply(self, model: nn.Module) -> None:
        apply_groups(model, self.groups)


class TrainPrefixes(StrictModel):
    """Training policy (TrainConfig.trainable): the parameters whose names start with one of
    `prefixes` train (e.g. ["head."]: the read-out of a randomly initialised network)."""

    prefixes: list[str] = Field(min_length=1)

    def apply(self, model: nn.Module) -> None:
        prefixes = tuple(self.prefixes)
        for name, p in model.named_parameters():
            p.requires_grad_(name.startswith(prefixes))
        if not any(p.requires_grad for p in model.parameters()):
            tops = sorted({n.split(".")[0] for n, _ in model.named_parameters()})
            raise ConfigError(f"trainable prefixes {self.prefixes} match no parameter; "
                              f"parameter names start with one of {tops}")


def apply_groups(model: nn.Module, groups: list[Group]) -> dict[str, int]:
    """requires_grad = (group of the parameter in `groups`); returns parameter counts per
    group and the trained / total numbers."""
    group_of = getattr(model, "param_group", None)
    if group_of is None:
        raise ConfigError(f"{type(model).__name__} has no parameter groups; trainable groups "
                          "need arch='fpt' (or give trainable={\"prefixes\": [...]})")
    counts: dict[str, int] = dict.fromkeys(GROUPS, 0)
    trained = 0
    for name, p in model.named_parameters():
        g = group_of(name)
        p.requires_grad_(g in groups)
        counts[g] += p.numel()
        trained += p.numel() if g in groups else 0
    return {**counts, "trained": trained, "total": sum(counts[g] for g in GROUPS)}
