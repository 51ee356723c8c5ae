"""Shared pieces of the anchor studies (Zhang et al. 2024, arXiv 2405.05409): the paper's
model and recipe per scale, and the per-run solution analysis.

The model (paper §3, PAPERS.md §3): a causal decoder with one head, d_head set apart from
d_model, post-LayerNorm, learned positions, read out at the last token, every parameter
initialized with std (1/d_in)^gamma (INITS "rate").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reasonlab.analysis.solutions import HeldoutSolution, heldout_solutions
from reasonlab.runs import load_run_model
from reasonlab.studies.base import RunSpec, Scale
from reasonlab.tasks.anchors import AnchorsTask
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import make_data

TASK: dict[str, Any] = {"name": "anchors"}  # the paper's preset: shifts +5 +1 -2 -8,
# (3,4) trained to x-6, (4,3) held out, length 9, items 20..99

SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(model=dict(d_model=16, n_heads=1, d_head=8, d_mlp=32),
                  optim=dict(lr=3e-3, warmup_steps=2), n_train=512, n_test=160,
                  batch_size=64, steps=6, eval_every=3, ckpt_every=3, threads=1),
    # cpu: chosen by measurement (README, "Choosing the CPU scale of the anchor studies").
    "cpu": dict(model=dict(d_model=64, n_heads=1, d_head=32, d_mlp=192),
                optim=dict(lr=1e-3, warmup_steps=100, weight_decay=0.01), n_train=50_000,
                n_test=1_600, batch_size=256, steps=1200, eval_every=300, ckpt_every=300,
                threads=1),
    # The authors' sizes (§3 / appendix): d_model 400, d_ff 1200, d_k = d_v = 200, one head,
    # AdamW wd 0.01, warmup then cosine, batch 2048. The learning rate (peak 2.5e-4, floor
    # 1e-5) and 200 epochs of 300k sequences are our reading of the appendix; for a GPU.
    "paper": dict(model=dict(d_model=400, n_heads=1, d_head=200, d_mlp=1200),
                  optim=dict(lr=2.5e-4, warmup_steps=1500, weight_decay=0.01,
                             min_lr_ratio=0.04),
                  n_train=300_000, n_test=16_000, batch_size=2048, steps=30_000,
                  eval_every=1500, ckpt_every=1500),
}


def anchor_config(scale: Scale, seed: int, gamma: float, n_layers: int,
                  lr: float | None = None, weight_decay: float | None = None,
                  steps: int | None = None) -> TrainConfig:
    base = dict(SCALES[scale])
    if steps is not None:
        base["steps"] = steps
    optim = dict(base["optim"])
    if lr is not None:
        optim["lr"] = lr
    if weight_decay is not None:
        optim["weight_decay"] = weight_decay
    model = {**base["model"], "n_layers": n_layers, "causal": True, "norm": "post",
             "init": "rate", "init_gamma": gamma}
    return TrainConfig.build({**base, "task": TASK, "seed": seed, "model": model,
                              "optim": optim})


def run_solution(spec: RunSpec, result: dict[str, Any], out: Path) -> HeldoutSolution:
    """Load the run's model, rebuild its (seeded) test set, classify its held-out answers."""
    _, model = load_run_model(Path(result["dir"]))
    task = build_task(spec.config.task)
    assert isinstance(task, AnchorsTask)
    _, test = make_data(spec.config)
    (sol,) = heldout_solutions(model, task, test)  # the preset holds out one pair, (4,3)
    return sol
