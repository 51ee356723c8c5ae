"""Several seeds of a small model trained in one process with `torch.func` stacking, against
the same seeds trained one after another: would stacking make the anchor studies' seeds
cheaper?

The anchor studies need many runs per cell (their share rules count runs of each solution
type), and each run is a small model (anchors cpu recipe: 2 layers, d_model 64). A training
step of K stacked models -- parameters stacked with `stack_module_state`, the forward and
gradient of one model vmapped over them (`vmap(grad_and_value(functional_call))`), one AdamW
over the stacked tensors, each model's gradient clipped by its own norm -- costs one Python
and dispatch overhead for K models; it pays where that overhead, not the arithmetic,
dominates a step. Timed at the cpu recipe's batch (256) and at batch 16, in alternating blocks
(the machine is shared), with the same attention path for both (`--unfused`: the explicit
matmul + softmax, which vmap batches; the fused SDPA kernel has no CPU batching rule and
vmap loops over the models).

Run: `python benchmarks/bench_stacked_seeds.py [--seeds 8] [--unfused] [--smoke]`.
Measured (2026-11-27, 1 thread, the 2-core machine shared with a training job; 8 seeds):
at the recipe's batch 256 stacking is 0.86x (fused attention) / 0.94x (unfused) -- a solo
step is 16 ms of arithmetic, with no overhead to remove; at batch 16 it is 1.52x / 1.61x
(2.6 ms solo, 1.7 per stacked seed). The anchor studies train at batch 256, so they keep one
process per run (anchors README, "How the verdicts are decided").
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import torch
from torch.func import functional_call, grad_and_value, stack_module_state, vmap

import reasonlab.model.attention as attention
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import build_model, class_masks, make_data
from reasonlab.train.metrics import IGNORE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_precision import Stepper, recipe as study_recipe  # noqa: E402

STUDY = "anchors-init-phase"


def recipe(batch_size: int, smoke: bool = False) -> TrainConfig:
    """The study's cpu recipe at `batch_size`; `smoke`: with little data (seconds)."""
    config = study_recipe(STUDY, None)
    small = {"n_train": 512, "n_val": 0, "n_test": 32} if smoke else {}
    return config.model_copy(update={"batch_size": batch_size, **small})


class Stacked:
    """`seeds` models of `config` stepped together: vmapped gradients, one AdamW."""

    def __init__(self, config: TrainConfig, seeds: int) -> None:
        task = build_task(config.task)
        self.config, self.data = config, make_data(config, task)[0]
        self.classes = class_masks(task, torch.device("cpu"))["train"]
        models = []
        for s in range(seeds):
            torch.manual_seed(s)
            models.append(build_model(config, task))
        params, self.buffers = stack_module_state(models)  # type: ignore[arg-type]
        self.params = {k: v.detach() for k, v in params.items()}
        self.base = copy.deepcopy(models[0]).to("meta")
        self.opt = torch.optim.AdamW(list(self.params.values()), lr=config.optim.lr,
                                     weight_decay=config.optim.weight_decay)
        self.seeds = seeds

    def _loss(self, params, buffers, tokens, label_pos, pad_mask, labels, mask):
        logits = functional_call(self.base, (params, buffers), (tokens, label_pos, pad_mask))
        logits = logits.float()
        if self.classes is not None:
            logits = logits.masked_fill(~self.classes, float("-inf"))
        return torch.nn.functional.cross_entropy(
            logits.flatten(0, -2), labels.masked_fill(~mask, IGNORE).flatten(),
            ignore_index=IGNORE)

    def step(self) -> None:
        batches = [self.data[torch.randint(0, len(self.data), (self.config.batch_size,))]
                   for _ in range(self.seeds)]
        stack = [torch.stack([getattr(b, f) for b in batches])
                 for f in ("tokens", "label_pos", "labels", "loss_mask")]
        pad = batches[0].pad_mask
        pad_mask = None if pad is None else torch.stack([b.pad_mask for b in batches])
        dims = (0, 0, 0, 0, None if pad_mask is None else 0, 0, 0)
        grads, _ = vmap(grad_and_value(self._loss), in_dims=dims, randomness="different")(
            self.params, self.buffers, stack[0], stack[1], pad_mask, stack[2], stack[3])
        norm = sum(g.pow(2).flatten(1).sum(1) for g in grads.values()).sqrt()
        scale = (self.config.optim.grad_clip / (norm + 1e-6)).clamp(max=1.0)
        for k, p in self.params.items():
            p.grad = grads[k] * scale.view(-1, *[1] * (p.dim() - 1))
        self.opt.step()


def compare(batch_size: int, seeds: int, steps: int, blocks: int, smoke: bool = False
            ) -> tuple[float, float]:
    """Median seconds per step of one solo model and of `seeds` stacked ones."""
    config = recipe(batch_size, smoke)
    solo, stacked = Stepper(config, "fp32", False), Stacked(config, seeds)
    for _ in range(2):  # warm-up
        solo.step()
        stacked.step()
    t_solo, t_stacked = [], []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(steps):
            solo.step()
        t_solo.append((time.perf_counter() - t0) / steps)
        t0 = time.perf_counter()
        for _ in range(steps):
            stacked.step()
        t_stacked.append((time.perf_counter() - t0) / steps)
    return statistics.median(t_solo), statistics.median(t_stacked)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--unfused", action="store_true",
                    help="explicit attention (matmul + softmax) in both, which vmap batches")
    ap.add_argument("--smoke", action="store_true",
                    help="2 seeds, little data, one block of one step (seconds)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.unfused:  # the explicit path the model takes for bf16 on the CPU (attention.py)
        attention._cpu_bf16 = lambda x: True  # type: ignore[assignment]
    seeds = 2 if args.smoke else args.seeds
    steps, blocks = (1, 1) if args.smoke else (20, 3)
    for batch in (256, 16):
        solo, stacked = compare(batch, seeds, steps, blocks, args.smoke)
        print(f"{STUDY} cpu recipe, batch {batch}, {seeds} seeds: solo "
              f"{solo * 1e3:.1f} ms/step, stacked {stacked * 1e3:.1f} ms/step "
              f"({stacked / seeds * 1e3:.1f} per seed): stacking "
              f"{solo * seeds / stacked:.2f}x", flush=True)


if __name__ == "__main__":
    main()
