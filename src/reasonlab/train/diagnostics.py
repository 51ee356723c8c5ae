"""Diagnostics logged beside each evaluation (TrainConfig.diagnostics): what the attention does
while a run trains, so a plateau can be read after the fact from metrics.jsonl alone.

"attention" (the mechanism Hoffmann et al. 2024 name for the plateau of multi-step tasks:
ill-distributed softmax attention gives W_Q and W_K vanishing gradients; docs/papers.md §7):
on a fixed probe batch (the first PROBE_N training examples, the loss the run minimises), per
applied layer l:

    entropy[l]   mean entropy (nats) of the attention pattern over batch, heads and queries;
                 ln(k_pos) is uniform attention, 0 one-hot
    grad_W_Q[l]  Frobenius norm of d loss / d W_Q of the layer's parameters (the W_Q slice of
                 the fused projection); likewise grad_W_K, grad_W_V
    grad_all     the norm of the gradient over all parameters, for scale

Computed in eval mode (no dropout draw, so the training RNG is untouched) at full depth, with
torch.autograd.grad (no parameter's .grad is written), so a run with diagnostics trains
bitwise as one without (a test). A tied (ALBERT) model has one W_Q per unique layer: the
gradient lists have n_unique_layers entries, the entropies n_layers; a frozen projection's
gradients are null. Transformer models only (TrainConfig checks `arch`).
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch import nn

from reasonlab.model.hooks import hooks
from reasonlab.tasks.base import Batch
from reasonlab.train.metrics import model_inputs, slot_loss

PROBE_N = 256
"""Examples in the probe batch (the first of the training set: fixed for the whole run)."""


def entropy(pattern: torch.Tensor) -> torch.Tensor:
    """Mean entropy in nats of rows of an attention pattern [batch, H, q, k]: a 0-dim tensor.
    0 log 0 is 0 (masked keys)."""
    p = pattern.float()
    return -(p * p.clamp_min(torch.finfo(p.dtype).tiny).log()).sum(dim=-1).mean()


def attention_diagnostics(model: nn.Module, probe: Batch,
                          autocast: contextlib.AbstractContextManager[Any],
                          classes: torch.Tensor | None = None) -> dict[str, Any]:
    """The "attention" diagnostics of `model` (a Transformer) on `probe` (module docstring)."""
    was_training = model.training
    model.eval()
    patterns: list[torch.Tensor] = []  # one per applied layer: the hooks fire in forward order

    def keep(x: torch.Tensor, hook: Any) -> None:
        patterns.append(x)

    try:
        with hooks(model, [(lambda n: n.endswith("attn.hook_pattern"), keep)]), autocast:
            logits = model(probe.tokens, probe.label_pos, probe.pad_mask, **model_inputs(probe))
        loss = slot_loss(logits, probe, classes)
        layers = list(model.layers)  # type: ignore[attr-defined]
        every = [p for p in model.parameters() if p.requires_grad]
        total = torch.autograd.grad(loss, every, allow_unused=True)  # one backward pass
        by_param = {id(p): g for p, g in zip(every, total, strict=True)}
        grads = [by_param.get(id(layer.attn.qkv.weight)) for layer in layers]  # None: frozen
    finally:
        model.train(was_training)
    out: dict[str, Any] = {"probe_loss": loss.item()}
    out["entropy"] = [entropy(p).item() for p in patterns]
    for i, key in enumerate(("grad_W_Q", "grad_W_K", "grad_W_V")):
        out[key] = [None if g is None else g.split(layer.attn.sizes, dim=0)[i].norm().item()
                    for g, layer in zip(grads, layers, strict=True)]
    out["grad_all"] = torch.sqrt(sum(g.float().square().sum() for g in total
                                     if g is not None)).item()
    return out


DIAGNOSTICS = {"attention": attention_diagnostics}
"""TrainConfig.diagnostics name -> the function computing it on (model, probe, autocast,
classes)."""


def run_diagnostics(names: list[str], model: nn.Module, probe: Batch,
                    autocast: contextlib.AbstractContextManager[Any],
                    classes: torch.Tensor | None) -> dict[str, Any]:
    """Each named diagnostic's record, keyed by its name (the `diag` of a metrics line)."""
    return {name: DIAGNOSTICS[name](model, probe, autocast, classes) for name in names}
