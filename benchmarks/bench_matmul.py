"""Matmul peak of this machine, measured now: GFLOP/s of a large square torch.matmul.

Run: `python benchmarks/bench_matmul.py [--threads 2] [--quick]`.
"""

from __future__ import annotations

import argparse
import time

import torch


SLOW_GFLOPS = 5.0
"""Below this a dtype has no native GEMM here (bf16 without AVX-512 BF16 / AMX: a 2048^3 call
then takes minutes), and the probe's figure is reported instead of timing the full size."""


def _best_gflops(dtype: torch.dtype, n: int, repeats: int) -> float:
    a = torch.randn(n, n).to(dtype)
    b = torch.randn(n, n).to(dtype)
    a @ b  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e9


def matmul_gflops(dtype: torch.dtype, n: int = 2048, threads: int = 2, repeats: int = 10) -> float:
    """Best-of-`repeats` GFLOP/s of an n x n x n matmul (2 n^3 FLOPs) in `dtype`."""
    torch.set_num_threads(threads)
    probe = _best_gflops(dtype, max(64, n // 8), 1)
    return probe if probe < SLOW_GFLOPS else _best_gflops(dtype, n, repeats)


def matmul_peak(threads: int = 2, quick: bool = False) -> dict[str, float]:
    n, rep = (1024, 5) if quick else (2048, 10)
    out = {}
    for _ in range(2 if not quick else 1):  # interleave the two dtypes, keep the best
        for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            out[name] = max(out.get(name, 0.0), matmul_gflops(dt, n, threads, rep))
    out["n"] = n
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    p = matmul_peak(args.threads, args.quick)
    print(f"matmul {p['n']}^3, {args.threads} threads: fp32 {p['fp32']:.0f} GFLOP/s, "
          f"bf16 {p['bf16']:.0f} GFLOP/s")


if __name__ == "__main__":
    main()
