"""Mimicking throughput (LEGO §4.2.2): steps/s of the mimicking phase of the LEGO cpu recipe
before and after it stopped computing its loss floor every step, measured side by side in
one run (same model, same sentences), printed as a ratio.

The floor (`train.mimic.loss_floor`, a 60-step bisection over [batch, heads, T, T]) is a
diagnostic; training never reads it. Before: every step computed it; after: `mimic()` asks
`batch_loss(..., with_floor=False)`.

Run: `python benchmarks/bench_mimic.py [--steps 20] [--threads 1] [--smoke]`.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from reasonlab.train.mimic import MimicConfig, batch_loss, special_ids
from reasonlab.studies.lego.common import lego_task, recipe
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import build_model
from reasonlab.tasks.base import build_task


def steps_per_s(with_floor: bool, steps: int, cfg: TrainConfig, mc: MimicConfig) -> float:
    task = build_task(cfg.task)
    model = build_model(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=mc.lr, foreach=False)
    special = special_ids(task.vocab.tokens)
    batches = [task.sample(np.random.default_rng(i), mc.batch_size) for i in range(steps + 2)]
    for i, b in enumerate(batches):
        if i == 2:  # two warm-up steps
            t0 = time.perf_counter()
        loss, _ = batch_loss(model, b, mc, special, with_floor=with_floor)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    if args.smoke:
        args.steps = 1
    torch.set_num_threads(args.threads)
    base = recipe("cpu")
    cfg = TrainConfig.build({**base, "task": lego_task()})
    mc = MimicConfig(steps=150, batch_size=32, lr=3e-3)  # lego-shortcut's cpu mimicking phase
    before = steps_per_s(True, args.steps, cfg, mc)
    after = steps_per_s(False, args.steps, cfg, mc)
    print(f"mimicking, lego cpu model, batch {mc.batch_size}, {args.threads} thread(s): "
          f"with floor {before:.2f} steps/s, without {after:.2f} steps/s, "
          f"after/before {after / before:.2f}")


if __name__ == "__main__":
    main()
