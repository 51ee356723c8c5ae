"""LEGO generation throughput: sentences/s for Task 1 (Z2, n = 12), one thread.

docs/design.md §8 Performance: data generation must never be the bottleneck of a training
step, so the generator is vectorised over the batch.
Run: `python benchmarks/bench_lego_gen.py [--smoke]`.
"""

import argparse
import time

import numpy as np
import torch

from reasonlab.tasks import build_task


def lego_generation_rate(n_sentences: int = 200_000, repeats: int = 3) -> float:
    """Best-of-`repeats` sentences/s of `LegoTask.sample` for Task 1 with n = 12."""
    torch.set_num_threads(1)
    task = build_task({"name": "lego", "group": "z2", "n_clauses": 12})
    rng = np.random.default_rng(0)
    task.sample(rng, 1_000)  # warm-up: first-touch allocations
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        task.sample(rng, n_sentences)
        best = min(best, time.perf_counter() - t0)
    return n_sentences / best


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    rate = lego_generation_rate(2_000, 1) if args.smoke else lego_generation_rate()
    print(f"LEGO Task 1 (n=12) generation: {rate:,.0f} sentences/s on 1 thread "
          f"(target >= 200,000: {rate / 200_000:.1f}x)")
