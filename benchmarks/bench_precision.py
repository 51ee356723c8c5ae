"""Precision and compilation on this CPU, as ratios measured in one process: a training step
(forward, backward, AdamW) of the cpu recipes of LEGO (lego-extrapolation, BERT arm), anchors
(anchors-init-phase, first arm) and symbols (symbols-mlp-vs-transformer, transformer arm),
timed with the run's own `train_step`:

- bf16 autocast vs fp32 (what `dtype="bf16"` buys where the CPU has native bf16: AVX-512 BF16
  or AMX; `dtype="auto"` never picks it on the CPU);
- torch.compile vs eager (`compile=True`), after the compile's warm-up steps, whose one-off
  cost is reported beside;
- how far each moves the loss after a few steps from the same init (max |loss difference|).

Timed blocks alternate between the variants (the machine is shared and noisy); medians of the
blocks and their ratio are reported. `--rate` measures instead the model FLOP/s of one
training run of a BERT-base layer stack, the CPU rate `reasonlab studies --scale paper` uses
(plan.py CPU_FLOPS).

Run: `python benchmarks/bench_precision.py [--threads 1] [--quick | --smoke] [--rate]`.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import torch

from reasonlab.studies import STUDIES
from reasonlab.train.config import TrainConfig
from reasonlab.train.device import autocast_for
from reasonlab.train.loop import build_model, class_masks, make_data, train_step
from reasonlab.train.optim import make_optimizer
from reasonlab.tasks.base import build_task

RECIPES = {"LEGO": ("lego-extrapolation", "BERT"), "anchors": ("anchors-init-phase", None),
           "symbols": ("symbols-mlp-vs-transformer", "transformer")}
"""family -> (study, arm; None = the first arm) whose cpu recipe is timed."""


def recipe(study: str, arm: str | None) -> TrainConfig:
    specs = STUDIES[study]().runs("cpu", 1)
    return next(s.config for s in specs if arm is None or s.arm.startswith(arm))


def small(config: TrainConfig) -> TrainConfig:
    """The config with little data and batches of 4: what a smoke run (seconds) times."""
    return config.model_copy(update={"n_train": min(config.n_train, 256), "n_val": 0,
                                     "n_test": min(config.n_test, 32), "batch_size": 4})


class Stepper:
    """A model, optimizer and data of `config`, stepping with `precision`, compiled or not."""

    def __init__(self, config: TrainConfig, precision: str, compiled: bool) -> None:
        if config.init_run is not None:  # random weights: a step costs the same whatever they are
            config = config.model_copy(update={"init_from": None})
        task = build_task(config.task)
        self.config, self.train_set = config, make_data(config, task)[0]
        self.model = build_model(config, task)
        self.forward = torch.compile(self.model) if compiled else self.model
        self.opt = make_optimizer(self.model, config.optim)
        self.classes = class_masks(task, torch.device("cpu"))["train"]
        self.autocast = autocast_for(precision, torch.device("cpu"))  # type: ignore[arg-type]
        self.step_i = 0

    def step(self) -> float:
        loss = train_step(self.config, self.forward, self.opt, self.train_set, self.step_i,
                          self.config.optim.lr, self.autocast, self.classes)
        self.step_i += 1
        return float(loss)


def compare(config: TrainConfig, variants: dict[str, tuple[str, bool]], steps: int,
            blocks: int) -> dict[str, Any]:
    """Median seconds per step of each variant (alternating timed blocks), the one-off cost
    of its first steps, and its losses over the first steps."""
    out: dict[str, Any] = {}
    steppers = {}
    for name, (precision, compiled) in variants.items():
        s = Stepper(config, precision, compiled)
        t0 = time.perf_counter()
        losses = [s.step() for _ in range(3)]  # warm-up (compiles)
        out[name] = {"warmup_s": time.perf_counter() - t0, "losses": losses, "blocks": []}
        steppers[name] = s
    for _ in range(blocks):
        for name, s in steppers.items():
            t0 = time.perf_counter()
            for _ in range(steps):
                s.step()
            out[name]["blocks"].append((time.perf_counter() - t0) / steps)
    for name in steppers:
        out[name]["s_per_step"] = statistics.median(out[name]["blocks"])
    return out


def bench_precision(threads: int, quick: bool, log: Any = print, smoke: bool = False
                    ) -> list[tuple[str, str]]:
    """`smoke`: small data, one block of one step, no torch.compile (seconds)."""
    torch.set_num_threads(threads)
    steps, blocks = (1, 1) if smoke else (3, 3) if quick else (10, 5)
    rows = []
    for family, (study, arm) in RECIPES.items():
        config = small(recipe(study, arm)) if smoke else recipe(study, arm)
        variants = {"fp32": ("fp32", False), "bf16": ("bf16", False),
                    **({} if smoke else {"compiled": ("fp32", True)})}
        r = compare(config, variants, steps, blocks)
        base = r["fp32"]["s_per_step"]
        for name in [v for v in variants if v != "fp32"]:
            ratio = base / r[name]["s_per_step"]
            drift = max(abs(a - b) for a, b in zip(r[name]["losses"], r["fp32"]["losses"],
                                                   strict=True))
            rows.append((f"{family} ({study}) {name} speed-up vs fp32 eager",
                         f"{ratio:.2f}x ({r[name]['s_per_step'] * 1e3:.1f} vs {base * 1e3:.1f} "
                         f"ms/step; first 3 steps {r[name]['warmup_s']:.1f} s; max |loss diff| "
                         f"over them {drift:.1e})"))
            log(f"[precision] {rows[-1][0]}: {rows[-1][1]}")
    return rows


def cpu_rate(threads: int, quick: bool, smoke: bool = False) -> float:
    """Model FLOP/s of training a BERT-base layer stack (12 x 768, seq 64, batch 16, fp32);
    `smoke`: of a 2 x 64 stack (seconds)."""
    size = ({"d_model": 64, "n_layers": 2, "n_heads": 2, "d_mlp": 256} if smoke else
            {"d_model": 768, "n_layers": 12, "n_heads": 12, "d_mlp": 3072})
    config = TrainConfig.build({
        "task": {"name": "lego", "n_clauses": 12, "n_train_vars": 6}, "model": size,
        "n_train": 256, "n_test": 16, "batch_size": 16, "steps": 10})
    torch.set_num_threads(threads)
    from reasonlab.plan import flops_per_token

    s = Stepper(config, "fp32", False)
    s.step()
    n = 1 if smoke else 2 if quick else 5
    t0 = time.perf_counter()
    for _ in range(n):
        s.step()
    sec = (time.perf_counter() - t0) / n
    T = config.model.max_seq_len
    return flops_per_token(config) * T * config.batch_size / sec


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1, help="per run (studies run one thread "
                    "per run, two runs side by side)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rate", action="store_true", help="measure the CPU rate of plan.py")
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: both parts at their smallest sizes, one round (the tests run "
                    "it; no figures)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    flags = open("/proc/cpuinfo").read() if not args.rate else ""
    if args.rate or args.smoke:
        print(f"CPU training rate ({args.threads} threads, BERT-base stack): "
              f"{cpu_rate(args.threads, args.quick, args.smoke) / 1e9:.1f} GFLOP/s")
        if not args.smoke:
            return
    native = [f for f in ("avx512_bf16", "amx_bf16") if f in flags]
    print(f"torch {torch.__version__}, {args.threads} thread(s); native bf16: "
          f"{', '.join(native) or 'none (bf16 is emulated: expect it slower)'}", flush=True)
    bench_precision(args.threads, args.quick, log=lambda m: print(m, flush=True),
                    smoke=args.smoke)


if __name__ == "__main__":
    main()
