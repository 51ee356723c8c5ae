"""Matmul peak of this machine, measured now: GFLOP/s of a large square torch.matmul.

Run: `python benchmarks/bench_matmul.py [--threads 2] [--quick | --smoke]`.
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


PEAK_FLOOR_PER_THREAD = 10.0
"""fp32 GFLOP/s per thread below which a measured peak is not this machine's but a busy host's:
any AVX2 core sustains several times this in a large fp32 GEMM. A peak under the floor (or an
MFU above 100% computed from it) is reported as untrustworthy, not printed as a figure."""


def matmul_peak(threads: int = 2, quick: bool = False, rounds: int | None = None,
                smoke: bool = False) -> dict[str, float]:
    """Best GFLOP/s per dtype over `rounds` interleaved rounds (fp32, bf16, fp32, ...), each
    itself a best of several calls: a round that met a busy host loses to one that did not.
    `trusted` is 1.0 when the fp32 peak clears PEAK_FLOOR_PER_THREAD x threads, else 0.0."""
    n, rep = (128, 1) if smoke else (1024, 3) if quick else (2048, 5)
    rounds = rounds or (1 if smoke else 3 if quick else 6)
    out: dict[str, float] = {}
    for _ in range(rounds):  # interleave the two dtypes, keep the best of each
        for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            out[name] = max(out.get(name, 0.0), matmul_gflops(dt, n, threads, rep))
    out["n"] = n
    out["trusted"] = float(out["fp32"] >= PEAK_FLOOR_PER_THREAD * threads)
    return out


def mfu_text(achieved_gflops: float, peak: dict[str, float], dtype: str) -> str:
    """MFU as a percentage, or why no trustworthy figure can be given."""
    if not peak.get("trusted", 1.0):
        return (f"untrustworthy (fp32 peak {peak['fp32']:.0f} GFLOP/s is below the sanity floor: "
                "the host was busy while it was measured)")
    mfu = achieved_gflops / peak[dtype]
    if mfu > 1.0:
        return (f"untrustworthy ({mfu:.0%}: above 100%, so the peak was measured while the host "
                "was busier than during training)")
    return f"{mfu:.1%}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    p = matmul_peak(args.threads, args.quick, smoke=args.smoke)
    print(f"matmul {p['n']}^3, {args.threads} threads: fp32 {p['fp32']:.0f} GFLOP/s, "
          f"bf16 {p['bf16']:.0f} GFLOP/s"
          + ("" if p["trusted"] else " (untrustworthy: below the sanity floor, a busy host)"))


if __name__ == "__main__":
    main()
