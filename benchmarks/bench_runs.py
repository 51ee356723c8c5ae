"""Run-store scan: `reasonlab runs` over 10,000 run folders (target: under 2 s).

Builds 10,000 fake run folders in a temporary directory, shaped like real ones (config.json,
metrics.jsonl, ckpt/state.json, run.json, and result.json for the finished 90%), then times
the listing (store.scan + the table) against a reference measured in the same run over the
same tree: a bare os.scandir of every run folder (the least any listing must do).
Run: `python benchmarks/bench_runs.py [--n 10000] [--smoke]`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from reasonlab.index import list_table
from reasonlab.store import fingerprints, scan

CONFIG = {"task": {"name": "lego", "group": "z2", "n_clauses": 12, "n_train_vars": 6},
          "model": {"d_model": 64, "n_layers": 6, "n_heads": 4, "d_mlp": 256},
          "optim": {"lr": 0.002}, "seed": 0, "steps": 2000}


def _safetensors() -> bytes:
    from safetensors.numpy import save

    import numpy as np

    return save({"model.w": np.zeros((64, 64), dtype=np.float32)})


SAFETENSORS = _safetensors()


def build(root: Path, n: int) -> None:
    evals = [{"step": s, "lr": 1e-3, "train_loss": 0.5, "loss": 0.4, "acc": 0.9,
              "acc_by_depth": [0.9] * 12} for s in range(100, 2001, 100)]
    metrics = "".join(json.dumps(e) + "\n" for e in evals)
    result = json.dumps({"final": evals[-1], "curve": evals})
    for i in range(n):
        d = root / "runs" / f"{i:012x}"
        (d / "ckpt").mkdir(parents=True)
        (d / "config.json").write_text(json.dumps({**CONFIG, "seed": i}))
        (d / "metrics.jsonl").write_text(metrics)
        (d / "ckpt" / "state.safetensors").write_bytes(SAFETENSORS)
        (d / "ckpt" / "state.json").write_text(json.dumps(
            {"step": 2000, "config_hash": d.name, "param_groups": [], "optim_scalars": {}}))
        finished = i % 10 != 0
        rec = {"id": d.name, "task": "lego", "changed": {"seed": i, "steps": 2000},
               "created": 1.7e9 + i, "wall_s": 60.0, "host": "bench", "torch": "x",
               "git_commit": None, "status": "finished" if finished else "running",
               "pid": 1 << 30}
        if finished:
            rec |= {"step": 2000, "acc": 0.9}
            (d / "result.json").write_text(result)
            rec["files"] = fingerprints(d)  # as RunRecord.end records them
        (d / "run.json").write_text(json.dumps(rec))


def reference(root: Path) -> int:
    n = 0
    for e in os.scandir(root / "runs"):
        n += sum(1 for _ in os.scandir(e.path))
    return n


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: the smallest sizes, one round (the tests run it; no figures)")
    args = ap.parse_args()
    if args.smoke:
        args.n, args.repeats = 50, 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        build(root, args.n)
        print(f"built {args.n:,} run folders in {time.perf_counter() - t0:.1f} s")
        t_ref = best_of(lambda: reference(root), args.repeats)
        t_scan = best_of(lambda: list_table(scan(root)), args.repeats)
        infos = scan(root)
        assert len(infos) == args.n, len(infos)
        print(f"bare os.scandir of every folder: {t_ref:.3f} s")
        print(f"`reasonlab runs` listing ({sum(r.status == 'finished' for r in infos):,} "
              f"finished, {sum(r.status != 'finished' for r in infos):,} partial): "
              f"{t_scan:.3f} s = {t_scan / t_ref:.1f}x the bare scandir "
              f"(target: under 2 s for 10,000: {'met' if t_scan < 2 else 'MISSED'})")
