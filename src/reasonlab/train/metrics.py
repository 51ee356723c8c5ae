"""Evaluation: loss and accuracy per labelled slot, broken down by the task's metadata."""

from __future__ import annotations

import contextlib
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.model.hooks import to_device_of
from reasonlab.tasks.base import Batch


IGNORE = -100
"""The label F.cross_entropy skips (its ignore_index): a slot outside the loss mask."""


def slot_loss(logits: torch.Tensor, batch: Batch, classes: torch.Tensor | None = None,
              sync_free: bool | None = None) -> torch.Tensor:
    """Mean cross-entropy over the slots in `batch.loss_mask`.  logits: [B, P, C].

    classes [C] bool: if given, the softmax runs over these classes only (a task's
    `class_mask("train")`, e.g. the training symbols of a copying task).

    sync_free (default: on CUDA): the slots outside the mask get the label IGNORE, which
    cross_entropy skips, instead of being cut out by boolean indexing, whose output size the
    host must read back (a sync per indexing). The same mean; on the CPU the boolean indexing
    stays, so CPU runs keep their bits (the order of the reduction differs).
    """
    mask = batch.loss_mask
    if sync_free is None:
        sync_free = logits.device.type == "cuda"
    if sync_free:
        labels = batch.labels.masked_fill(~mask, IGNORE)  # [B, P]
        logits = logits.float()
        if classes is not None:
            logits = logits.masked_fill(~classes, float("-inf"))
        return F.cross_entropy(logits.flatten(0, -2), labels.flatten(), ignore_index=IGNORE)
    logits = logits[mask].float()
    if classes is not None:
        logits = logits.masked_fill(~classes, float("-inf"))
    return F.cross_entropy(logits, batch.labels[mask])


def model_inputs(batch: Batch) -> dict[str, torch.Tensor]:
    """The optional model inputs the batch carries (continuous `features`, `label_sub`), as
    keyword arguments: every call site passes them, models without them never see them."""
    return {k: v for k, v in (("features", batch.features), ("label_sub", batch.label_sub))
            if v is not None}


def param_counts(model: nn.Module) -> dict[str, int]:
    """Trained (requires_grad) and total parameters: what a freeze policy leaves to train."""
    return {"params_trained": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "params_total": sum(p.numel() for p in model.parameters())}


@torch.no_grad()
def predict(model: nn.Module, data: Batch, batch_size: int, autocast: contextlib.AbstractContextManager
            | None = None, classes: torch.Tensor | None = None,
            losses: list[torch.Tensor] | None = None) -> torch.Tensor:
    """Predicted class of every slot of `data`: [N, P], among `classes` [C] bool if given.
    If `losses` is a list, the summed cross-entropy of each batch's supervised slots is
    appended to it. Computed on the model's device (data drawn on the CPU for a model loaded
    on the run's GPU goes there a batch at a time); the predictions are on the data's."""
    was_training = model.training
    model.eval()
    preds = []
    for i in range(0, len(data), batch_size):
        b = to_device_of(model, data[i : i + batch_size])
        with autocast or contextlib.nullcontext():
            logits = model(b.tokens, b.label_pos, b.pad_mask, **model_inputs(b))
        if classes is not None:
            logits = logits.masked_fill(~classes.to(logits.device), float("-inf"))
        if losses is not None:
            slots = (b.label_pos >= 0) & b.loss_mask  # [batch, P]
            losses.append(F.cross_entropy(logits[slots].float(), b.labels[slots],
                                          reduction="sum").to(data.tokens.device))
        preds.append(logits.argmax(-1).to(data.tokens.device))
    model.train(was_training)
    return torch.cat(preds)


def accuracy_by(correct: torch.Tensor, key: torch.Tensor, valid: torch.Tensor | None = None
                ) -> list[float]:
    """Mean of `correct` [N, P] grouped by the integer `key` [N, P] (e.g. chain depth).

    Returns a list indexed by key value 0..max; NaN where a value never occurs.
    """
    valid = torch.ones_like(correct, dtype=torch.bool) if valid is None else valid
    k = key[valid].long()
    n = int(k.max()) + 1 if k.numel() else 0
    # on the inputs' device: a CPU accumulator would meet CUDA indices in index_add_
    hits = torch.zeros(n, dtype=torch.float64, device=k.device).index_add_(
        0, k, correct[valid].double())
    counts = torch.zeros(n, dtype=torch.float64, device=k.device).index_add_(
        0, k, torch.ones_like(k, dtype=torch.float64))
    return (hits / counts).tolist()


def headline(metrics: dict[str, Any]) -> float:
    """The accuracy a study reads as a run's result: on the MASKED query bits where the task
    reports them (bit memory: copying the visible bits already scores 75% on all bits,
    docs/papers.md §4), plain accuracy else."""
    masked = metrics.get("acc_by_masked")
    return float(masked[1]) if masked else float(metrics["acc"])


def evaluate(model: nn.Module, data: Batch, batch_size: int,
             autocast: contextlib.AbstractContextManager | None = None,
             classes: torch.Tensor | None = None) -> dict[str, object]:
    """Accuracy over all slots, over the supervised ones, and `acc_by_<key>` for every integer
    meta key the task provides (LEGO: acc_by_depth; anchors: acc_by_pair, acc_by_key_pos).
    `classes` [C] bool restricts the predictions to those classes."""
    losses: list[torch.Tensor] = []
    pred = predict(model, data, batch_size, autocast, classes, losses).to(data.labels.device)
    correct = pred == data.labels
    valid = data.label_pos >= 0  # padded slots (mixed lengths) carry label_pos -1
    out: dict[str, object] = {
        "acc": correct[valid].float().mean().item(),
        "acc_supervised": correct[valid & data.loss_mask].float().mean().item(),
        # mean cross-entropy of the supervised slots (exp of it: perplexity, for an LM)
        "loss": (torch.stack(losses).sum() / (valid & data.loss_mask).sum()).item(),
    }
    for key, values in data.meta.items():
        out[f"acc_by_{key}"] = accuracy_by(correct, values, valid)
    return out
