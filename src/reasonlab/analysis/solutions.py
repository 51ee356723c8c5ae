"""Solution types on held-out anchor pairs (Zhang et al. 2024, arXiv 2405.05409, §3-4).

On a held-out pair (a1, a2) the model's prediction for key x is compared with

  - the inferential target: x + s(a1) + s(a2), composing the primitives ((4,3): x-10);
  - the symmetric target: what the mirrored pair (a2, a1) is trained to ((3,4) -> x-6);

and a run gets one verdict per held-out pair:

  unfit        seen-pair test accuracy < FIT_THRESHOLD (the run has not learned the trained
               pairs, so its held-out answers say nothing about the solution type);
  inferential  inferential fraction >= MAJORITY;
  symmetric    symmetric fraction >= MAJORITY;
  neither      otherwise.

Thresholds are fixed here, before any study result was looked at.

Reads a model and a test Batch of the anchor task (analysis never imports train/,
docs/design.md §1 Layout).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch
from torch import nn

from reasonlab.model.hooks import to_device_of
from reasonlab.tasks.anchors import AnchorsTask
from reasonlab.tasks.base import Batch

FIT_THRESHOLD = 0.9
"""Seen-pair test accuracy below which a run is `unfit`."""
MAJORITY = 0.5
"""Fraction of held-out predictions an answer type needs to name the run's solution."""

SolutionType = Literal["inferential", "symmetric", "neither", "unfit"]
SOLUTION_TYPES: tuple[SolutionType, ...] = ("inferential", "symmetric", "neither", "unfit")


@dataclass(frozen=True)
class HeldoutSolution:
    pair: tuple[int, int]
    n: int
    """Held-out test examples of this pair."""
    inferential: float
    """Fraction of predictions equal to the inferential target."""
    symmetric: float
    """Fraction equal to the symmetric target (0 when the mirrored pair is held out too)."""
    neither: float
    seen_acc: float
    """Test accuracy on the trained pairs (the `unfit` criterion)."""
    verdict: SolutionType

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def classify(seen_acc: float, inferential: float, symmetric: float) -> SolutionType:
    """The verdict rule above."""
    if seen_acc < FIT_THRESHOLD:
        return "unfit"
    if inferential >= MAJORITY:
        return "inferential"
    if symmetric >= MAJORITY:
        return "symmetric"
    return "neither"


@torch.no_grad()
def predict_values(model: nn.Module, task: AnchorsTask, data: Batch,
                   batch_size: int = 1000) -> torch.Tensor:
    """Predicted target value (not class index) of every example: [N] on the CPU, computed on
    the model's device."""
    was = model.training
    model.eval()
    out = []
    for i in range(0, len(data), batch_size):
        b = to_device_of(model, data[i : i + batch_size])
        out.append(model(b.tokens, b.label_pos, b.pad_mask)[:, 0].argmax(-1))  # [b]
    model.train(was)
    return torch.cat(out).cpu() + task.target_lo


def key_values(task: AnchorsTask, data: Batch) -> torch.Tensor:
    """The key of every example, read from its tokens at meta["key_pos"]: [N]."""
    ids = data.tokens.gather(1, data.meta["key_pos"]).squeeze(1).cpu()
    # host: solutions_from_predictions compares on the CPU (predictions come back .cpu())
    return torch.tensor([int(w) for w in task.vocab.decode(ids)])  # host: see above


def heldout_solutions(model: nn.Module, task: AnchorsTask, data: Batch,
                      batch_size: int = 1000) -> list[HeldoutSolution]:
    """One HeldoutSolution per held-out pair of `task`, from the test Batch `data`."""
    pred = predict_values(model, task, data, batch_size)
    return solutions_from_predictions(task, data, pred)


def solutions_from_predictions(task: AnchorsTask, data: Batch,
                               pred: torch.Tensor) -> list[HeldoutSolution]:
    """As `heldout_solutions`, from predicted values [N] already computed."""
    key = key_values(task, data)
    pair = data.meta["pair"][:, 0].cpu()
    seen = data.loss_mask[:, 0].cpu()
    true_values = data.labels[:, 0].cpu() + task.target_lo
    seen_acc = (pred[seen] == true_values[seen]).double().mean().item() if seen.any() else 0.0
    out = []
    for pid in task.heldout_ids:
        sel = pair == pid
        n = int(sel.sum())
        if n == 0:
            continue
        p, x = pred[sel], key[sel]
        is_inf = p == x + int(task.inferential_shift[pid])
        s_shift = task.symmetric_shift(pid)
        is_sym = torch.zeros_like(is_inf) if s_shift is None else p == x + s_shift
        # (when the two targets coincide, e.g. a commutative pair, both fractions count it)
        inf, sym = is_inf.double().mean().item(), is_sym.double().mean().item()
        neither = (~is_inf & ~is_sym).double().mean().item()
        out.append(HeldoutSolution(task.pairs[pid], n, inf, sym, neither, seen_acc,
                                   classify(seen_acc, inf, sym)))
    return out
