"""Time to 99%: our CPU-scale recipe vs the authors' optimiser recipe, same model and data.

Both train the model of `SCALES["cpu"]` (read at run time from studies/lego_extrapolation.py)
on the same LEGO Task 1 data (n = 12, first 6 chain variables supervised). The target is the
mean test accuracy over chain positions #0-#5 >= 0.99. Wall-clock excludes evaluation.

  ours     the cpu scale's optim block as is (AdamW, warmup + cosine, clipping, ...)
  authors  Adam lr 5e-5, cosine over the same number of steps, no warmup, weight decay 0,
           no gradient clipping, same batch size; capped at 6x our time-to-99%.

Run: `python benchmarks/bench_tta.py [--quick]`.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np
import torch

from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import build_model, make_autocast, make_data, seeds, train_step
from reasonlab.train.metrics import evaluate
from reasonlab.train.optim import lr_at, make_optimizer

TARGET = 0.99
N_SUP = 6


def cpu_scale() -> dict[str, Any]:
    import reasonlab.studies.lego_extrapolation as le

    # imported when the benchmark runs, so the current SCALES["cpu"] is used
    return le.SCALES["cpu"], le.lego_task()


def configs(steps: int | None = None) -> tuple[TrainConfig, TrainConfig]:
    base, task = cpu_scale()
    d = {**base, "task": task, "seed": 0}
    if steps is not None:
        d["steps"] = steps
    ours = TrainConfig.build(d)
    authors_optim = {**base.get("optim", {}), "lr": 5e-5, "warmup_steps": 0,
                     "weight_decay": 0.0, "schedule": "cosine", "min_lr_ratio": 0.0,
                     "grad_clip": None}
    authors = TrainConfig.build({**d, "optim": authors_optim})
    return ours, authors


def timed_run(cfg: TrainConfig, eval_every: int, time_cap: float | None = None,
              log: Callable[[str], None] = print, name: str = "") -> dict[str, Any]:
    """Train with cfg, evaluate every `eval_every` steps; stop at the target or the cap."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    train_set, test_set = make_data(cfg)
    model = build_model(cfg)
    opt = make_optimizer(model, cfg.optim)
    torch.manual_seed(int(seeds(cfg.seed, 3, 2**31).generate_state(1)[0]))
    autocast = make_autocast(cfg, torch.device("cpu"))
    model.train()
    wall, curve = 0.0, []
    reached = None
    for step in range(cfg.steps):
        t0 = time.perf_counter()
        loss = train_step(cfg, model, opt, train_set, step, lr_at(step, cfg.steps, cfg.optim),
                          autocast)
        wall += time.perf_counter() - t0
        done = step + 1
        if done % eval_every == 0 or done == cfg.steps:
            ev = evaluate(model, test_set, cfg.eval_batch_size, autocast)
            acc = float(np.mean(ev["acc_by_depth"][:N_SUP]))
            curve.append((done, wall, acc))
            if done % (eval_every * 4) == 0 or acc >= TARGET:
                log(f"  [{name}] step {done}: {wall:6.1f} s, #0-#5 acc {acc:.4f}, "
                    f"loss {loss.item():.4f}")
            if acc >= TARGET:
                reached = (done, wall)
                break
        if time_cap is not None and wall >= time_cap:
            break
    return {"reached": reached, "curve": curve, "wall": wall, "steps_run": curve[-1][0]
            if curve else 0, "steps_total": cfg.steps,
            "final_acc": curve[-1][2] if curve else float("nan")}


def bench_tta(quick: bool = False, log: Callable[[str], None] = print,
              cap_ratio: float = 6.0) -> dict[str, Any]:
    ours_cfg, authors_cfg = configs(steps=300 if quick else None)
    eval_every = 25 if quick else 50
    log(f"[tta] model {ours_cfg.model.model_dump(include={'d_model', 'n_layers', 'n_heads', 'd_mlp', 'norm', 'init_std'})}, "
        f"batch {ours_cfg.batch_size}, steps {ours_cfg.steps}, threads {ours_cfg.threads}")
    log(f"[tta] ours optim: {ours_cfg.optim.model_dump()}")
    log(f"[tta] authors optim: {authors_cfg.optim.model_dump()}")
    ours = timed_run(ours_cfg, eval_every, log=log, name="ours")
    if ours["reached"] is None:
        cap = ours["wall"] * cap_ratio
        log(f"[tta] ours did not reach {TARGET} in {ours['steps_run']} steps "
            f"({ours['wall']:.1f} s); authors capped at {cap:.0f} s")
    else:
        cap = ours["reached"][1] * cap_ratio
    authors = timed_run(authors_cfg, eval_every, time_cap=cap, log=log, name="authors")
    return {"ours": ours, "authors": authors, "cap_s": cap, "cap_ratio": cap_ratio,
            "steps": ours_cfg.steps}


def describe(res: dict[str, Any]) -> tuple[str, str, str]:
    o, a = res["ours"], res["authors"]
    so = (f"{o['reached'][1]:.1f} s ({o['reached'][0]} steps)" if o["reached"]
          else f"not reached in {o['wall']:.1f} s / {o['steps_run']} steps "
               f"(final {o['final_acc']:.3f})")
    if a["reached"]:
        sa = f"{a['reached'][1]:.1f} s ({a['reached'][0]} steps)"
        ratio = (f"{a['reached'][1] / o['reached'][1]:.2f}" if o["reached"] else "n/a")
    else:
        why = ("full cosine schedule" if a["steps_run"] >= a["steps_total"]
               else f"{res['cap_ratio']:.0f}x cap")
        sa = (f"not reached within {a['wall']:.1f} s ({a['steps_run']} steps, {why}; "
              f"final #0-#5 acc {a['final_acc']:.3f})")
        if o["reached"]:
            lo = a["wall"] / o["reached"][1]
            ratio = f"> {lo:.1f}" if why.endswith("cap") else f"> {lo:.1f} (schedule ended)"
        else:
            ratio = "n/a"
    return so, sa, ratio


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    res = bench_tta(args.quick)
    so, sa, ratio = describe(res)
    print(f"time to {TARGET} on #0-#5: ours {so}; authors {sa}; authors/ours {ratio}")


if __name__ == "__main__":
    main()
