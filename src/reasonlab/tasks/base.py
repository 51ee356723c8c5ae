"""Task protocol, Batch, Vocab and the TASKS registry (docs/design.md §2 Core abstractions)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, Literal, Protocol

import numpy as np
import torch

from reasonlab.config import StrictModel
from reasonlab.registry import Registry


@dataclass(frozen=True)
class Vocab:
    """Token strings <-> ids. Id 0 is always the padding token."""

    tokens: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(set(self.tokens)) != len(self.tokens):
            raise ValueError("vocabulary tokens must be distinct")
        object.__setattr__(self, "_index", {t: i for i, t in enumerate(self.tokens)})

    PAD: ClassVar[str] = "[PAD]"

    def __len__(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        return self._index[token]  # type: ignore[attr-defined]

    def ids(self, tokens: list[str]) -> list[int]:
        return [self.id(t) for t in tokens]

    def decode(self, ids: list[int] | np.ndarray | torch.Tensor) -> list[str]:
        return [self.tokens[int(i)] for i in ids]


@dataclass
class Batch:
    """A batch of examples.

    tokens    [B, T] long   token ids (0 = padding)
    label_pos [B, P] long   position in `tokens` of every labelled slot
    labels    [B, P] long   class index of every labelled slot
    loss_mask [B, P] bool   slots that enter the training loss
    pad_mask  [B, T] bool   True for real tokens, or None when nothing is padded
    meta      name -> [B, P] tensors describing each slot (LEGO: "depth", the chain position)
    """

    tokens: torch.Tensor
    label_pos: torch.Tensor
    labels: torch.Tensor
    loss_mask: torch.Tensor
    pad_mask: torch.Tensor | None = None
    meta: dict[str, torch.Tensor] = field(default_factory=dict)
    features: torch.Tensor | None = None
        # [B, T, d_input] float32: continuous inputs (patches of bits or pixels), one row per
        # token; `tokens` then holds 1 at real positions and 0 at padding (so pad masks work).
    label_sub: torch.Tensor | None = None
        # [B, P] long: which of the `outputs_per_token` outputs of token label_pos this slot
        # reads (bit memory: 50 bits per output patch); None = 0 for every slot.

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def _map(self, fn: Any) -> Batch:
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, torch.Tensor):
                out[f.name] = fn(v)
            elif isinstance(v, dict):
                out[f.name] = {k: fn(t) for k, t in v.items()}
            else:
                out[f.name] = v
        return replace(self, **out)

    def to(self, device: torch.device | str) -> Batch:
        return self._map(lambda t: t.to(device, non_blocking=True))

    def __getitem__(self, idx: slice | torch.Tensor) -> Batch:
        return self._map(lambda t: t[idx])

    @staticmethod
    def cat(batches: list[Batch]) -> Batch:
        first = batches[0]
        kw: dict[str, Any] = {}
        for f in fields(first):
            v = getattr(first, f.name)
            if isinstance(v, torch.Tensor):
                kw[f.name] = torch.cat([getattr(b, f.name) for b in batches])
            elif isinstance(v, dict):
                kw[f.name] = {k: torch.cat([b.meta[k] for b in batches]) for k in v}
            else:
                kw[f.name] = v
        return Batch(**kw)


class TaskConfig(StrictModel):
    """Base of every task's config; `name` selects the TASKS entry."""

    name: str


Split = Literal["train", "test"]
"""The two splits of a run (a task may know more, e.g. the templates' "val")."""


class Task(Protocol):
    """What every task provides, and everything the training loop (train/) calls on one.
    Implementations subclass it (so they inherit the defaults: `class_mask`) and register in
    TASKS under their config's name."""

    Config: ClassVar[type[TaskConfig]]
    config: TaskConfig
    vocab: Vocab

    @property
    def n_classes(self) -> int: ...

    @property
    def seq_len(self) -> int: ...

    def sample(self, rng: np.random.Generator, n: int, split: Split = "train") -> Batch:
        """n fresh random examples of `split` (a task whose splits differ only by
        de-duplication, e.g. LEGO, draws both alike). Mimicking reads fresh "train" ones."""
        ...

    def splits(self, rng: np.random.Generator, n_train: int, n_test: int) -> tuple[Batch, Batch]:
        """De-duplicated train set and a test set disjoint from it."""
        ...

    def class_mask(self, split: Split) -> torch.Tensor | None:
        """The classes a prediction may take in `split`, [n_classes] bool (the symbolic
        template tasks: the split's symbols); None, the default, = every class."""
        return None

    held_out_revised: ClassVar[Literal["test", "val"] | None] = None
    """Which held-out split lost rows equal to training rows when draw_splits began to leave
    them out (tasks/disjoint.py): "test" (always) or "val" (only runs with n_val > 0). Such a
    task's runs get new ids (train/config.py `config_id`), so a store never reuses a run whose
    held-out metrics counted repeats of its training rows; None, the default: no task data
    changed, ids as before."""

    def overlap(self) -> str | None:
        """Why this task's test or validation examples may equal training ones (its paper's
        protocol, with the source; an export's card states it), or None, the default: they
        may not, and train/loop.draw_splits leaves such repeats out (tasks/disjoint.py)."""
        return None

    def class_names(self) -> tuple[str, ...]:
        """The name of every class, as `example_json` writes an answer: the label names of an
        exported dataset (data_export.py). The default: the class indices, "0", "1", ..."""
        return tuple(str(c) for c in range(self.n_classes))

    def render(self, batch: Batch, i: int) -> str:
        """Example i of `batch` as human-readable text."""
        ...

    def example_json(self, batch: Batch, i: int) -> dict[str, object]:
        """Example i as a JSON-ready record with at least "text" and "labels"."""
        ...

    def solve(self, text: str) -> dict[str, str]:
        """Reference answer computed from the text alone, independently of the generator."""
        ...


TASKS: Registry[type] = Registry("task")


def build_task(config: dict[str, Any] | TaskConfig) -> Task:
    """Look up the task by name and build it from a dict or a validated config."""
    if isinstance(config, TaskConfig):
        return TASKS[config.name](config)
    name = (config or {}).get("name")
    cls = TASKS[str(name)]
    return cls(cls.Config.build(config, where="task"))
