"""Cost per training step of lego-staircase's `long`-scale arms: the fixed-root recipe, each
lever of studies/lego/common.py's LEVERS (fp32 eager), and the recipe compiled
(torch.compile) and in bf16 autocast -- the throughput levers. One process, one thread (as
the studies run); timed blocks alternate between the variants (the machine is shared and
noisy), and each variant's median is reported as a ratio to the recipe's, measured in the
same run. The README's lever table ("Past the second step") quotes these ratios beside the
wall time per 1,000 steps of the runs themselves, which depends on the load.

Run: `python benchmarks/bench_lego_levers.py [--blocks 5] [--steps 5] [--smoke]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_precision import Stepper, small  # noqa: E402

from reasonlab.studies import STUDIES  # noqa: E402
from reasonlab.studies.lego.common import LEVERS  # noqa: E402
from reasonlab.studies.lego.staircase import FIXED  # noqa: E402


def lever_costs(blocks: int, steps: int, smoke: bool = False
                ) -> dict[str, tuple[float, float, float]]:
    """variant -> (median s per step, ratio to the recipe's, seconds of its first 3 steps).
    `smoke`: small data, batches of 4, no torch.compile (seconds)."""
    torch.set_num_threads(1)
    specs = {s.arm: small(s.config) if smoke else s.config
             for s in STUDIES["lego-staircase"]().runs("long", 1)}
    variants = {arm: (specs[arm], "fp32", False) for arm in (FIXED, *LEVERS)}
    if not smoke:
        variants["torch.compile"] = (specs[FIXED], "fp32", True)
    variants["bf16 autocast"] = (specs[FIXED], "bf16", False)
    steppers, warm = {}, {}
    for name, (config, precision, compiled) in variants.items():
        s = Stepper(config, precision, compiled)
        t0 = time.perf_counter()
        for _ in range(3):  # warm-up (compiles)
            s.step()
        warm[name], steppers[name] = time.perf_counter() - t0, s
    times: dict[str, list[float]] = {n: [] for n in steppers}
    for _ in range(blocks):
        for name, s in steppers.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                s.step()
            times[name].append((time.perf_counter() - t0) / steps)
    base = statistics.median(times[FIXED])
    return {n: (statistics.median(t), statistics.median(t) / base, warm[n])
            for n, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    if args.smoke:
        args.blocks, args.steps = 1, 1
    for name, (sec, ratio, warm) in lever_costs(args.blocks, args.steps, args.smoke).items():
        print(f"{name:28s} {sec * 1e3:8.1f} ms/step  x{ratio:.2f} of the recipe  "
              f"(first 3 steps {warm:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
