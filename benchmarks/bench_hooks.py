"""The no-hook path of a HookPoint: what it costs to make PyTorch module hooks (and tools built
on them, nnsight) see our hook points, measured as a ratio within one run.

A HookPoint skips nn.Module's call machinery when nothing looks at it. It used to check our
own hook list alone; it now also checks the module's PyTorch hooks, the global ones and an
instance `forward` (model/hooks.py), so `register_forward_hook` fires. Both `__call__`s are
timed here in alternating blocks on the same model and batches: a forward pass (eval, the
analyses' path) and a training step (forward + backward + AdamW) of the LEGO cpu recipe's
BERT-like model, which passes ~100 hook points a step. The ratio new/old should be 1 within
the noise of the blocks (printed beside it).

Run: `python benchmarks/bench_hooks.py [--rounds 7] [--steps 20] [--threads 1] [--smoke]`.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from reasonlab.model.hooks import HookPoint
from reasonlab.studies.lego.common import lego_task, recipe
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import build_model

NEW_CALL = HookPoint.__call__


def old_call(self: HookPoint, x: torch.Tensor) -> torch.Tensor:
    """The HookPoint.__call__ before PyTorch module hooks were honoured: our list alone."""
    if not self._fns:
        return x
    return self.forward(x)


def block(model: torch.nn.Module, batches: list, train: bool, opt: torch.optim.Optimizer
          ) -> float:
    """Seconds for one pass over `batches` (forward only, or a whole training step)."""
    t0 = time.perf_counter()
    for b in batches:
        if train:
            logits = model(b.tokens, b.label_pos)
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), b.labels.flatten())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        else:
            with torch.no_grad():
                model(b.tokens, b.label_pos)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    if args.smoke:
        args.rounds, args.steps = 1, 2
    torch.set_num_threads(args.threads)
    cfg = TrainConfig.build({**recipe("cpu"), "task": lego_task()})
    task = build_task(cfg.task)
    model = build_model(cfg)
    n_points = len(model.hook_points())
    batches = [task.sample(np.random.default_rng(i), cfg.batch_size) for i in range(args.steps)]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for train in (False, True):
        ratios, times = [], {"old": [], "new": []}
        for r in range(args.rounds + 1):  # round 0 warms up
            got = {}
            for name, call in (("old", old_call), ("new", NEW_CALL))[:: 1 if r % 2 else -1]:
                HookPoint.__call__ = call  # type: ignore[method-assign]
                got[name] = block(model, batches, train, opt)
            HookPoint.__call__ = NEW_CALL  # type: ignore[method-assign]
            if r:
                ratios.append(got["new"] / got["old"])
                for k, v in got.items():
                    times[k].append(v / len(batches))
        spread = (max(ratios) - min(ratios)) / 2 if len(ratios) > 1 else float("nan")
        print(f"{'training step' if train else 'forward pass'}, LEGO cpu model ({n_points} hook "
              f"points, none attached), batch {cfg.batch_size}, {args.threads} thread(s), "
              f"{args.rounds} rounds: old {1e3 * statistics.median(times['old']):.2f} ms, new "
              f"{1e3 * statistics.median(times['new']):.2f} ms; new/old median "
              f"{statistics.median(ratios):.3f} (half-range over rounds {spread:.3f})")


if __name__ == "__main__":
    main()
