"""The example family's recipe per scale and its two arms: the same model trained on the
majority and on the parity of the same bits."""

from __future__ import annotations

import copy
from typing import Any

from reasonlab.studies.kit.base import Scale

MAJORITY, PARITY = "majority", "parity"
ARMS = {f: {"task": {"function": f}} for f in (MAJORITY, PARITY)}
RECIPES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(task=dict(name="bit_function", n_bits=7),
                  model=dict(d_model=16, n_layers=1, n_heads=2, d_mlp=32, norm_position="pre"),
                  optim=dict(lr=3e-3, warmup_steps=2), n_train=24, n_test=8, batch_size=8,
                  steps=6, eval_every=3, ckpt_every=3, threads=1),
    "cpu": dict(task=dict(name="bit_function", n_bits=15),
                model=dict(d_model=32, n_layers=2, n_heads=2, d_mlp=64, norm_position="pre"),
                optim=dict(lr=1e-3, warmup_steps=50), n_train=8000, n_test=1000,
                batch_size=64, steps=600, eval_every=100, ckpt_every=300, threads=1),
    "paper": dict(task=dict(name="bit_function", n_bits=41),
                  model=dict(d_model=256, n_layers=4, n_heads=8, d_mlp=1024),
                  optim=dict(lr=3e-4, warmup_steps=500), n_train=100_000, n_test=10_000,
                  batch_size=256, steps=20_000, eval_every=1000, ckpt_every=2000),
}


def recipe(scale: Scale) -> dict[str, Any]:
    return copy.deepcopy(RECIPES[scale])
