"""Evaluation: loss and accuracy per labelled slot, broken down by the task's metadata."""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import nn

from reasonlab.tasks.base import Batch


def slot_loss(logits: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Mean cross-entropy over the slots in `batch.loss_mask`.  logits: [B, P, C]."""
    mask = batch.loss_mask
    return F.cross_entropy(logits[mask].float(), batch.labels[mask])


@torch.no_grad()
def predict(model: nn.Module, data: Batch, batch_size: int, autocast: contextlib.AbstractContextManager
            | None = None) -> torch.Tensor:
    """Predicted class of every slot of `data`: [N, P]."""
    was_training = model.training
    model.eval()
    preds = []
    for i in range(0, len(data), batch_size):
        b = data[i : i + batch_size]
        with autocast or contextlib.nullcontext():
            logits = model(b.tokens, b.label_pos, b.pad_mask)
        preds.append(logits.argmax(-1))
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
    hits = torch.zeros(n, dtype=torch.float64).index_add_(0, k, correct[valid].double())
    counts = torch.zeros(n, dtype=torch.float64).index_add_(0, k, torch.ones_like(k, dtype=torch.float64))
    return (hits / counts).tolist()


def evaluate(model: nn.Module, data: Batch, batch_size: int,
             autocast: contextlib.AbstractContextManager | None = None) -> dict[str, object]:
    """Accuracy over all slots, over the supervised ones, and `acc_by_<key>` for every integer
    meta key the task provides (LEGO: acc_by_depth; anchors: acc_by_pair, acc_by_key_pos)."""
    pred = predict(model, data, batch_size, autocast).to(data.labels.device)
    correct = pred == data.labels
    valid = data.label_pos >= 0  # padded slots (mixed lengths) carry label_pos -1
    out: dict[str, object] = {
        "acc": correct[valid].float().mean().item(),
        "acc_supervised": correct[valid & data.loss_mask].float().mean().item(),
    }
    for key, values in data.meta.items():
        out[f"acc_by_{key}"] = accuracy_by(correct, values, valid)
    return out
