"""All benchmarks in one run: matmul peak, training throughput vs HF BERT, LEGO generation
rate, time to 99% (ours vs the authors' recipe). Prints a summary table at the end.

Run: `python benchmarks/run_all.py [--threads 2] [--quick | --smoke] [--skip-tta]
[--force-bf16]`.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
warnings.filterwarnings("ignore")

import torch  # noqa: E402

from bench_lego_gen import lego_generation_rate  # noqa: E402
from bench_matmul import matmul_peak, mfu_text  # noqa: E402
from bench_train import bench_train  # noqa: E402


BF16_SMALL_BATCH = 4


def log(msg: str) -> None:
    print(msg, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: every part at its smallest, one round (the tests run it)")
    ap.add_argument("--skip-tta", action="store_true")
    ap.add_argument("--force-bf16", action="store_true",
                    help="run the bf16 training benchmark even when bf16 matmul is slow")
    args = ap.parse_args()
    t_start = time.perf_counter()
    log(f"torch {torch.__version__}, threads {args.threads}, quick={args.quick}")
    rows: list[tuple[str, str]] = []

    # 1. matmul peak
    peak = matmul_peak(args.threads, args.quick, smoke=args.smoke)
    log(f"[peak] matmul {peak['n']}^3: fp32 {peak['fp32']:.0f} GFLOP/s, "
        f"bf16 {peak['bf16']:.1f} GFLOP/s (best of interleaved rounds)")
    flag = "" if peak["trusted"] else "  (untrustworthy: below the sanity floor, a busy host)"
    rows += [(f"matmul peak fp32 ({args.threads} thr)", f"{peak['fp32']:.0f} GFLOP/s{flag}"),
             (f"matmul peak bf16 ({args.threads} thr)", f"{peak['bf16']:.1f} GFLOP/s{flag}")]

    # 2. training throughput
    dtypes = ["fp32"]
    if args.force_bf16 or peak["bf16"] >= 0.5 * peak["fp32"]:
        dtypes.append("bf16")
    tr = bench_train(args.threads, args.quick, dtypes, log=log, smoke=args.smoke)
    if "bf16" not in dtypes:
        # Without a native bf16 GEMM (no AVX-512 BF16 / AMX) a batch-64 bf16 step takes about a
        # minute or more; the ratio against the reference is still measured, on batch 4.
        log(f"[train bf16] bf16 matmul is {peak['bf16']:.1f} GFLOP/s vs fp32 "
            f"{peak['fp32']:.0f} (emulated): measuring bf16 at batch {BF16_SMALL_BATCH} "
            "(--force-bf16 for batch 64)")
        tr.update({f"bf16 (batch {BF16_SMALL_BATCH})": r for r in bench_train(
            args.threads, True, ["bf16"], log=log, batch_size=BF16_SMALL_BATCH,
            smoke=args.smoke).values()})
    for dt, r in tr.items():
        tok = r["tokens_per_step"]
        for k in ("ours", r["ref"]):
            s = r["s_per_step"][k]
            # an emulated dtype's peak comes from a small probe matmul: no meaningful MFU
            mfu = ("n/a" if dt not in ("fp32", "bf16") else
                   mfu_text(r["flops_step"] / s / 1e9, peak, dt))
            rows.append((f"train {dt} {k}", f"{tok / s:,.0f} tok/s  {1 / s:.2f} step/s  "
                         f"MFU {mfu}"))
        other = "hf-sdpa" if r["ref"] == "hf-eager" else "hf-eager"
        rows.append((f"train {dt} {other} (not ref)",
                     f"{tok / r['s_per_step'][other]:,.0f} tok/s"))
        rows.append((f"train {dt} ours/ref ({r['ref']})", f"{r['ratio']:.3f}"))
    if tr:
        r0 = next(iter(tr.values()))
        rows.append(("model FLOPs/step", f"{r0['flops_step'] / 1e9:.1f} GFLOP "
                     f"({r0['tokens_per_step']} tok)"))

    # 3. LEGO generation
    rate = (lego_generation_rate(2_000, 1) if args.smoke else
            lego_generation_rate(50_000 if args.quick else 200_000, 2 if args.quick else 3))
    torch.set_num_threads(args.threads)
    log(f"[gen] LEGO Task 1 (n=12): {rate:,.0f} sentences/s (1 thread)")
    rows.append(("LEGO gen (1 thr)", f"{rate:,.0f} sentences/s"))

    # 4. time to 99%
    if not args.skip_tta:
        from bench_tta import ESCAPE, TARGET, bench_tta, describe

        res = bench_tta(args.quick, log=log, smoke=args.smoke)
        for key, what in (("escaped", f"plateau left (a position >= {ESCAPE})"),
                          ("reached", f"#0-#5 >= {TARGET}")):
            so, sa, ratio = describe(res, key)
            rows += [(f"time to {what}: ours", so), (f"time to {what}: authors", sa),
                     (f"time to {what}: authors/ours", ratio)]

    w = max(len(k) for k, _ in rows)
    log("\n" + "=" * 78 + "\nSUMMARY\n" + "=" * 78)
    for k, v in rows:
        log(f"{k:<{w}}  {v}")
    log(f"(total wall {time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
