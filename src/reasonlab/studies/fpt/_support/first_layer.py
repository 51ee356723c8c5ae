"""The first attention layer of an FPT run, read as the slides draw it (Lu et al. 2021, slides
"GPT-2 - first layer attention for bit XOR / bit memory"; the authors' demo notebook: layer 0,
mean over heads), and its mass on the keys a task says a query needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import attention_patterns, head_scores, model_inputs
from reasonlab.report import plt, save
from reasonlab.runs import load_run_model
from reasonlab.studies.kit.base import RunSpec
from reasonlab.tasks.base import build_task
from reasonlab.train.init_stages import build_model


def first_layer(model: torch.nn.Module, batch: Any) -> torch.Tensor:
    """Layer 0's attention, mean over heads: [batch, q_pos, k_pos]."""
    return attention_patterns(model, batch.tokens, batch.pad_mask,
                              **model_inputs(batch))[0].mean(1)


def mass(pattern: torch.Tensor, targets: torch.Tensor, batch: Any) -> float:
    """Mass on the needed keys, over the queries that need some (analysis.attention)."""
    return float(head_scores(pattern[None, :, None], batch.tokens, batch.pad_mask,
                             names=["task_targets"], targets=targets)["task_targets"])


def uniform(T: int, causal: bool, B: int) -> torch.Tensor:
    """Uniform attention over the keys a query may see: [B, T, T]."""
    allowed = torch.tril(torch.ones(T, T)) if causal else torch.ones(T, T)
    return (allowed / allowed.sum(-1, keepdim=True)).expand(B, T, T)


def run_masses(spec: RunSpec, result: dict[str, Any], n: int
               ) -> tuple[tuple[float, float, float], torch.Tensor]:
    """A run's first-layer mass on the keys its task needs (`Task.attention_targets`), on n test
    inputs drawn with seed 0: (after training, the same model before training, uniform
    attention); and the trained first layer's pattern, [n, q_pos, k_pos]."""
    task = build_task(spec.config.task)
    batch = task.sample(np.random.default_rng(0), n)
    targets = task.attention_targets(batch)  # type: ignore[attr-defined]
    trained = first_layer(load_run_model(Path(result["dir"]), device="run")[1], batch)
    before = first_layer(build_model(spec.config).eval(), batch)
    flat = uniform(batch.tokens.shape[1], spec.config.model.causal, n)
    after, initial, chance = (mass(p, targets, batch) for p in (trained, before, flat))
    return (after, initial, chance), trained


def plot_maps(maps: dict[tuple[str, str], torch.Tensor], path: Path) -> None:
    """One heatmap per (backbone, task): rows backbones, columns tasks."""
    backbones = list(dict.fromkeys(b for b, _ in maps))
    tasks_ = list(dict.fromkeys(t for _, t in maps))
    fig, axes = plt.subplots(len(backbones), len(tasks_), squeeze=False,
                             figsize=(3.6 * len(tasks_) + 0.6, 3.4 * len(backbones)))
    for (b, t), grid_ in maps.items():
        ax = axes[backbones.index(b)][tasks_.index(t)]
        im = ax.imshow(grid_.numpy(), vmin=0)
        ax.set(title=f"{b}: {t}", xlabel="key position", ylabel="query position")
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    save(fig, path)
