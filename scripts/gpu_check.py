#!/usr/bin/env python3
"""The prepared device check: what a GPU must show before `--scale paper` is trusted there.

Run it as `scripts/gpu-check` (README, "GPU check"): on one H100 it takes at most about 8
minutes (--budget, default 450 s of checks, each section skipped when too little is left) and
writes gpu-check.json and gpu-check.md into --out (default: $OUT when set, else
./gpu-check-out), rewritten after every section so a cut-off run still leaves its results.

Sections, in order of value:

  env          torch, CUDA, the GPU, native bf16, a bf16 matmul's TFLOP/s
  determinism  per mode (strict, the default; warn, the lab's old setting): a run trained twice
               in this process, and once killed with SIGKILL mid-run in a child process and
               resumed by `reasonlab train` in another, compared bitwise (metrics.jsonl and
               every checkpointed tensor)
  steps        paper shapes of each family with random weights (GPT-2 and BERT-base shapes
               without their weights): ms per step before and after the sync-free loop
               (per-step permutation + boolean-mask loss vs EpochOrder + ignore_index), CUDA
               kernels per step (profiler) beside the plan's count, host time per kernel, MFU,
               peak memory, and the sync-free steps run under
               torch.cuda.set_sync_debug_mode("error")
  precision    fp32 vs tf32 vs bf16 on one model: logits, gradient cosine, 30-step trajectories
  paper trial  `reasonlab run lego-extrapolation --scale paper steps=20` through the CLI
  smoke        `reasonlab run STUDY --scale smoke --device cuda` for every study whose assets
               this machine has, a family at a time, while the budget allows
  compile      torch.compile's speed-up (FPT: also mode reduce-overhead, CUDA graphs)

It needs torch (a CUDA build), numpy, safetensors, tqdm and matplotlib, as a GPU image has
them, and pydantic, which the bash wrapper installs from .whl/ when it is missing
(`scripts/gpu-check --fetch-wheels`, on a machine with a package index, fills .whl/).
`--device cpu --quick` runs the CPU-capable parts at tiny sizes
(tests/integration/test_gpu_check.py).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import json
import math
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:  # a bare checkout: no install, the source tree itself
    sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402

H100_BF16_DENSE = 989e12  # as plan.py; the MFU column is against it on any GPU


# ----------------------------------------------------------------------------- the harness


class Check:
    """Sections run in order under one time budget; results written after each."""

    def __init__(self, out: Path, budget: float, device: str, quick: bool) -> None:
        self.out, self.budget, self.device, self.quick = out, budget, device, quick
        self.t0 = time.monotonic()
        self.results: dict[str, Any] = {"device": device, "quick": quick, "budget_s": budget,
                                        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                                        "sections": {}}
        out.mkdir(parents=True, exist_ok=True)

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.t0)

    def section(self, name: str, fn: Callable[[], Any], need_s: float) -> None:
        if self.left() < need_s:
            self.results["sections"][name] = {"status": "skipped", "why": (
                f"{self.left():.0f} s of the budget left, the section needs ~{need_s:.0f} s")}
            self.write()
            return
        print(f"[gpu-check] {name} ({self.left():.0f} s left)", file=sys.stderr, flush=True)
        t = time.monotonic()
        try:
            entry = {"status": "ok", "result": fn()}
        except Exception as e:  # noqa: BLE001 - a failed section is a finding, not the end
            entry = {"status": "error", "error": f"{type(e).__name__}: {e}".splitlines()[0][:500],
                     "traceback": traceback.format_exc().splitlines()[-12:]}
        entry["wall_s"] = round(time.monotonic() - t, 1)
        self.results["sections"][name] = entry
        self.write()

    def write(self) -> None:
        self.results["wall_s"] = round(time.monotonic() - self.t0, 1)
        (self.out / "gpu-check.json").write_text(json.dumps(self.results, indent=1,
                                                            default=str))
        (self.out / "gpu-check.md").write_text(markdown(self.results))


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ----------------------------------------------------------------------------- configs


def tiny(**over: Any) -> dict[str, Any]:
    """A small LEGO run (BERT-like: learned positions, post-LN, dropout, softmax attention
    through SDPA): the determinism and precision subject."""
    base = {"task": {"name": "lego", "n_clauses": 6, "n_train_vars": 3},
            "model": {"d_model": 256, "n_layers": 4, "n_heads": 4, "d_mlp": 1024,
                      "dropout": 0.1},
            "n_train": 4000, "n_test": 256, "batch_size": 128, "steps": 120,
            "eval_every": 20, "ckpt_every": 40, "seed": 3}
    base.update(over)
    return base


FAMILIES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "lego BERT-base": ("lego-extrapolation", lambda s: s.arm == "BERT"),
    "lego pretrained BERT-base": ("lego-pretraining",
                                  lambda s: s.config.init_checkpoint is not None),
    "anchors": ("anchors-init-phase", lambda s: True),
    "symbols": ("symbols-mlp-vs-transformer", lambda s: s.config.model.arch.name
                == "transformer"),
    "fpt GPT-2 shape": ("fpt-universal", lambda s: s.config.init_checkpoint == "gpt2"),
    "fpt LSTM": ("fpt-lstm", lambda s: True),
    "artificial MLM": ("artificial-pretraining", lambda s: s.config.init_run is None),
}
"""A representative paper-scale run of each family: (study, which of its runs)."""
QUICK_FAMILIES = ("lego BERT-base", "fpt GPT-2 shape")
"""The families --quick times (the CPU test): a post-LN encoder and a pre-LN decoder."""


def random_weights(config: Any) -> Any:
    """The run with random weights of its checkpoint's shapes (no package needed) and no
    pretraining run: the shapes, steps and batch are the paper's."""
    from reasonlab.model.pretrained import fixed_fields
    from reasonlab.train.config import TrainConfig

    data = config.model_dump(mode="json")
    init = data.pop("init_from", None)
    if isinstance(init, str):
        arch = fixed_fields(init)
        model = {**data["model"], **{k: v for k, v in arch.items() if k != "n_layers"}}
        for k in ("vocab_size", "n_classes", "max_seq_len", "d_input", "outputs_per_token"):
            model.pop(k, None)  # the task's
        data["model"] = model
    return TrainConfig.build(data)


def family_config(name: str, device: str, quick: bool) -> Any:
    from reasonlab.studies import STUDIES
    from reasonlab.train.config import TrainConfig

    study, pick = FAMILIES[name]
    spec = next(s for s in STUDIES[study]().runs("paper", 1) if pick(s))
    config = random_weights(spec.config)
    data = config.model_dump(mode="json")
    data.update(device=device, n_train=max(8 * config.batch_size, 64), n_test=64, n_val=0,
                steps=10**6, eval_every=10**6, ckpt_every=10**6)
    if quick:  # the CPU test: the family's structure at toy widths and batches
        data["model"] = {**data["model"], "n_layers": min(config.model.n_layers, 2)}
        for k, v in (("d_model", 32), ("d_mlp", 64), ("d_embed", None)):
            if k in data["model"] and data["model"][k] is not None:
                data["model"][k] = v if v is not None else 16
        data["model"]["n_heads"] = 2 if config.model.n_kv_heads is None else 4
        if config.model.n_kv_heads is not None:
            data["model"]["n_kv_heads"] = 2
        data["model"].pop("d_head", None)
        data.update(batch_size=4, n_train=32, n_test=8, eval_batch_size=8)
    return TrainConfig.build(data)


# ----------------------------------------------------------------------------- sections


def env(device: torch.device) -> dict[str, Any]:
    from reasonlab.store import provenance

    out: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda,
                           "python": platform.python_version(), **provenance()}
    if device.type == "cuda":
        from reasonlab.train.device import native_bf16

        p = torch.cuda.get_device_properties(device)
        out.update(gpu=p.name, capability=f"{p.major}.{p.minor}", memory_gb=round(
            p.total_memory / 1e9, 1), sms=p.multi_processor_count,
            cudnn=torch.backends.cudnn.version(), native_bf16=native_bf16())
        a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
        for _ in range(3):
            a @ a
        sync(device)
        t = time.perf_counter()
        for _ in range(10):
            a @ a
        sync(device)
        out["bf16_matmul_tflops"] = round(10 * 2 * 8192**3 / (time.perf_counter() - t) / 1e12)
    return out


def _tensors(run_dir: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(run_dir / "ckpt" / "state.safetensors"))


def compare_runs(a: Path, b: Path) -> dict[str, Any]:
    """Bitwise comparison of two run folders: metrics.jsonl and every checkpointed tensor."""
    ma, mb = (a / "metrics.jsonl").read_text(), (b / "metrics.jsonl").read_text()
    ta, tb = _tensors(a), _tensors(b)
    differ = [k for k in ta if k not in tb or not torch.equal(ta[k], tb[k])]
    worst = max((float((ta[k].double() - tb[k].double()).abs().max()) for k in differ
                 if k in tb and ta[k].is_floating_point()), default=0.0)
    return {"metrics_equal": ma == mb, "tensors_equal": not differ and ta.keys() == tb.keys(),
            "tensors_differing": len(differ), "max_abs_diff": worst,
            "bitwise": ma == mb and not differ and ta.keys() == tb.keys()}


def determinism(device: str, quick: bool, scratch: Path) -> dict[str, Any]:
    from reasonlab.runs import execute, run_dir_for
    from reasonlab.train.config import TrainConfig

    out: dict[str, Any] = {}
    size = ({"model": {"d_model": 32, "n_layers": 2, "n_heads": 2, "d_mlp": 64,
                       "dropout": 0.1}, "n_train": 256, "batch_size": 16, "steps": 24,
             "eval_every": 4, "ckpt_every": 8} if quick else {})
    for mode in ("strict",) if quick else ("strict", "warn"):
        cfg = TrainConfig.build(tiny(device=device, deterministic=mode, **size))
        roots = {k: scratch / f"{mode}-{k}" for k in ("a", "b", "killed")}
        r: dict[str, Any] = {}
        try:
            for k in ("a", "b"):
                execute(cfg, roots[k], quiet=True)
        except Exception as e:  # noqa: BLE001 - strict mode's one-line error is a finding
            out[mode] = {"error": f"{type(e).__name__}: {e}".splitlines()[0]}
            continue
        r["rerun"] = compare_runs(run_dir_for(cfg, roots["a"]), run_dir_for(cfg, roots["b"]))
        path = scratch / f"{mode}.json"
        path.write_text(json.dumps(cfg.model_dump(mode="json")))
        die_at = cfg.steps // 2 + cfg.ckpt_every // 2  # after a checkpoint, before the next
        child = subprocess.run([sys.executable, __file__, "_train_and_die", str(path),
                                str(roots["killed"]), str(die_at)], capture_output=True,
                               text=True, timeout=600, env=child_env())
        r["killed"] = {"returncode": child.returncode, "by_sigkill":
                       child.returncode == -signal.SIGKILL, "at_call": die_at,
                       "checkpoint_step": json.loads((run_dir_for(cfg, roots["killed"]) / "ckpt"
                                                      / "state.json").read_text())["step"]}
        resumed = subprocess.run([sys.executable, "-m", "reasonlab.cli", "train", str(path),
                                  "--out", str(roots["killed"]), "--quiet"],
                                 capture_output=True, text=True, timeout=600, env=child_env())
        r["resume_returncode"] = resumed.returncode
        if resumed.returncode:
            r["resume_error"] = resumed.stderr.strip().splitlines()[-1:]
        else:
            r["resume"] = compare_runs(run_dir_for(cfg, roots["a"]),
                                       run_dir_for(cfg, roots["killed"]))
        out[mode] = r
    return out


def _train_and_die(config_path: str, root: str, die_at: int) -> None:
    """The child of `determinism`: trains the run and SIGKILLs itself in the middle of training
    call `die_at` (no cleanup, no flush: as a killed job)."""
    from reasonlab.runs import execute
    from reasonlab.train import loop
    from reasonlab.train.config import TrainConfig

    real, calls = loop.train_step, {"n": 0}

    def step(*a: Any) -> torch.Tensor:
        calls["n"] += 1
        if calls["n"] == die_at:
            sync(torch.device(a[3].tokens.device))
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*a)

    loop.train_step = step
    execute(TrainConfig.build(json.loads(Path(config_path).read_text())), Path(root),
            quiet=True)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH"))
                                        if p)
    return env


class Stepper:
    """One paper-shape run's training steps, as train() takes them, with the loop of before
    the sync-free change selectable (`legacy`)."""

    def __init__(self, config: Any) -> None:
        from reasonlab.tasks.base import build_task
        from reasonlab.train import loop
        from reasonlab.train.device import configure, resolve_device, resolve_dtype
        from reasonlab.train.optim import make_optimizer

        self.loop, self.config = loop, config
        self.device = resolve_device(config.device)
        self.precision = resolve_dtype(config.dtype, self.device)
        configure(self.device, self.precision, config.deterministic)
        task = build_task(config.task)
        train_set, _ = loop.make_data(config, task)
        self.train_set = train_set.to(self.device)
        self.model = loop.build_model(config, task, device=self.device)
        self.classes = loop.class_masks(task, self.device)["train"]
        self.opt = make_optimizer(self.model, config.optim, fused=self.device.type == "cuda")
        self.autocast = loop.autocast_for(self.precision, self.device)
        self.order = loop.EpochOrder(config, len(self.train_set), self.device)
        self.step_i = 0

    def steps(self, n: int, legacy: bool = False) -> torch.Tensor:
        from reasonlab.train.metrics import slot_loss

        loss = torch.zeros((), device=self.device)
        real = self.loop.slot_loss
        self.loop.slot_loss = (functools.partial(slot_loss, sync_free=False) if legacy
                               else real)
        try:
            for _ in range(n):
                loss += self.loop.train_step(self.config, self.model, self.opt, self.train_set,
                                             self.step_i, 1e-4, self.autocast, self.classes,
                                             None if legacy else self.order)
                self.step_i += 1
        finally:
            self.loop.slot_loss = real
        return loss

    def timed(self, n: int, legacy: bool = False) -> float:
        """Seconds per step over n steps after everything queued before has finished."""
        sync(self.device)
        t = time.perf_counter()
        self.steps(n, legacy)
        sync(self.device)
        return (time.perf_counter() - t) / n


def count_kernels(stepper: Stepper, n: int) -> float | None:
    """CUDA kernels per step, from the profiler (None on the CPU)."""
    if stepper.device.type != "cuda":
        return None
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        stepper.steps(n)
        sync(stepper.device)
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
    return len(kernels) / n


def sync_free(stepper: Stepper, n: int) -> dict[str, Any]:
    """The sync-free loop under torch's sync detector: any host sync raises."""
    if stepper.device.type != "cuda":
        return {"checked": False}
    torch.cuda.set_sync_debug_mode("error")
    try:
        stepper.steps(n)
        ok, why = True, None
    except RuntimeError as e:
        ok, why = False, str(e).splitlines()[0][:300]
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return {"checked": True, "no_sync": ok, "error": why}


def step_times(device: str, quick: bool, check: Check) -> dict[str, Any]:
    from reasonlab import plan

    out: dict[str, Any] = {}
    warm, n = (1, 2) if quick else (3, 10)
    for name in QUICK_FAMILIES if quick else FAMILIES:
        if check.left() < (5 if quick else 25):
            out[name] = {"skipped": "budget"}
            continue
        try:
            config = family_config(name, device, quick)
            t = time.monotonic()
            s = Stepper(config)
            r: dict[str, Any] = {"build_s": round(time.monotonic() - t, 1),
                                 "precision": s.precision, "batch": config.batch_size,
                                 "layers": config.model.n_layers,
                                 "d_model": config.model.d_model,
                                 "seq": config.model.max_seq_len}
            if s.device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(s.device)
            s.steps(warm, legacy=True)
            r["before_ms"] = round(1e3 * s.timed(n, legacy=True), 2)
            s.steps(warm)
            r["after_ms"] = round(1e3 * s.timed(n), 2)
            r["speedup"] = round(r["before_ms"] / r["after_ms"], 2)
            r["sync"] = sync_free(s, 3)
            kernels = count_kernels(s, 2)
            r["kernels_per_step"] = kernels
            r["plan_ops_per_step"] = plan.ops_per_step(config).train
            if kernels:
                r["us_per_kernel"] = round(1e3 * r["after_ms"] / kernels, 2)
            flops = plan.flops_per_token(config) * config.model.max_seq_len * config.batch_size
            r["mfu"] = round(flops / (r["after_ms"] / 1e3) / H100_BF16_DENSE, 4)
            if s.device.type == "cuda":
                r["peak_memory_gb"] = round(torch.cuda.max_memory_allocated(s.device) / 1e9, 2)
            out[name] = r
            del s
        except Exception as e:  # noqa: BLE001 - e.g. a task whose data needs a package
            out[name] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
        if device == "cuda":
            torch.cuda.empty_cache()
    return out


def precision(device: str, quick: bool) -> dict[str, Any]:
    """fp32 vs tf32 vs bf16 from the same weights and batches: logits, gradients, and a
    trajectory of 30 steps (3 with `quick`)."""
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.device import autocast_for, configure
    from reasonlab.train.metrics import model_inputs, slot_loss

    size = ({"model": {"d_model": 32, "n_layers": 2, "n_heads": 2, "d_mlp": 64, "dropout": 0.0},
             "batch_size": 16, "n_train": 256} if quick else
            {"model": {"d_model": 512, "n_layers": 6, "n_heads": 8, "d_mlp": 2048,
                       "dropout": 0.0}})
    precisions = ("fp32", "tf32", "bf16")
    runs: dict[str, dict[str, Any]] = {}
    base = None
    for p in precisions:
        cfg = TrainConfig.build(tiny(device=device, dtype=p, **size))
        s = Stepper(cfg)
        if base is None:
            base = copy.deepcopy(s.model.state_dict())
        s.model.load_state_dict(base)
        configure(s.device, p)
        batch = s.train_set[:cfg.batch_size]
        with autocast_for(p, s.device):
            logits = s.model(batch.tokens, batch.label_pos, batch.pad_mask,
                             **model_inputs(batch)).float()
        slot_loss(logits, batch).backward()
        grad = torch.cat([q.grad.flatten() for q in s.model.parameters() if q.grad is not None])
        s.opt.zero_grad(set_to_none=True)
        s.model.load_state_dict(base)
        losses = []
        for _ in range(3 if quick else 30):
            losses.append(s.steps(1))
        runs[p] = {"logits": logits.detach(), "grad": grad.detach(),
                   "losses": torch.stack(losses).float().cpu(),
                   "weights": torch.cat([q.detach().flatten().float()
                                         for q in s.model.parameters()])}
    ref = runs["fp32"]
    out: dict[str, Any] = {}
    for p in ("tf32", "bf16"):
        r = runs[p]
        out[p] = {
            "logits_max_abs_diff": float((r["logits"] - ref["logits"]).abs().max()),
            "logits_rel_diff": float((r["logits"] - ref["logits"]).norm() / ref["logits"].norm()),
            "grad_cosine": float(torch.nn.functional.cosine_similarity(
                r["grad"].double(), ref["grad"].double(), dim=0)),
            "trajectory_max_abs_loss_diff": float((r["losses"] - ref["losses"]).abs().max()),
            "final_loss": float(r["losses"][-1]), "final_loss_fp32": float(ref["losses"][-1]),
            "weights_rel_diff": float((r["weights"] - ref["weights"]).norm()
                                      / ref["weights"].norm())}
    return out


def smoke(device: str, quick: bool, check: Check, scratch: Path) -> dict[str, Any]:
    """Every study whose assets are here, smoke scale, through the CLI in this process; the
    families take turns, so a short budget still covers each."""
    from reasonlab.cli import main
    from reasonlab.studies import STUDIES

    by_family: dict[str, list[str]] = {}
    for name, cls in STUDIES.items():
        by_family.setdefault(cls.__module__.split(".")[2], []).append(name)
    order = [n for group in _zip_longest(*by_family.values()) for n in group if n]
    if quick:
        order = ["lego-extrapolation"]
    out: dict[str, Any] = {}
    for name in order:
        why = STUDIES[name].missing()
        if why:
            out[name] = {"skipped": why}
            continue
        if check.left() < (10 if quick else 90):  # 90 s: the compile section's
            out[name] = {"skipped": "budget"}
            continue
        t = time.monotonic()
        err = _capture_stderr(lambda n=name: main(["run", n, "--scale", "smoke", "--device",
                                                   device, "--out", str(scratch / "smoke"),
                                                   "--quiet", "--workers", "1"]))
        out[name] = {"returncode": err[0], "wall_s": round(time.monotonic() - t, 1),
                     **({"error": err[1][-1:]} if err[0] else {})}
    return out


def _zip_longest(*groups: list[str]) -> list[tuple[str | None, ...]]:
    n = max(map(len, groups), default=0)
    return [tuple(g[i] if i < len(g) else None for g in groups) for i in range(n)]


def _capture_stderr(fn: Callable[[], int]) -> tuple[int, list[str]]:
    import io

    buf = io.StringIO()
    with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = fn()
        except Exception as e:  # noqa: BLE001 - a bug is a finding
            return 1, [f"{type(e).__name__}: {e}".splitlines()[0]]
    return rc, buf.getvalue().strip().splitlines()


def compile_speedups(device: str, quick: bool, check: Check) -> dict[str, Any]:
    """torch.compile against eager on LEGO's BERT-base and FPT's GPT-2 shape, cut to their
    first COMPILE_LAYERS layers (compilation time grows with depth; the per-layer speed-up is
    what it measures); FPT also with mode reduce-overhead (CUDA graphs)."""
    out: dict[str, Any] = {}
    cases = [("fpt GPT-2 shape", "default"), ("fpt GPT-2 shape", "reduce-overhead"),
             ("lego BERT-base", "default")]
    if quick:
        cases = cases[:1]
    for family, mode in cases:
        if check.left() < (20 if quick else 75):
            out[f"{family}, {mode}"] = {"skipped": "budget"}
            continue
        try:
            config = family_config(family, device, quick)
            config = config.model_copy(update={"model": config.model.model_copy(update={
                "n_layers": min(config.model.n_layers, COMPILE_LAYERS), "depth_range": None})})
            s = Stepper(config)
            s.steps(2)
            eager = s.timed(3 if quick else 10)
            real_model = s.model
            s.model = torch.compile(real_model, mode=mode)
            t = time.monotonic()
            s.steps(3)
            sync(s.device)
            first = time.monotonic() - t
            compiled = s.timed(3 if quick else 10)
            s.model = real_model
            out[f"{family}, {mode}"] = {"layers": config.model.n_layers,
                                        "eager_ms": round(eager * 1e3, 2),
                                        "compiled_ms": round(compiled * 1e3, 2),
                                        "speedup": round(eager / compiled, 2),
                                        "first_3_steps_s": round(first, 1)}
        except Exception as e:  # noqa: BLE001
            out[f"{family}, {mode}"] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
        torch._dynamo.reset()
    return out


COMPILE_LAYERS = 6


def paper_trial(device: str, check: Check, scratch: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "reasonlab.cli", "run", "lego-extrapolation", "--scale",
           "paper", "steps=20", "--device", device, "--out", str(scratch / "paper"), "--quiet"]
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=child_env(),
                           timeout=max(30, min(240, check.left() - 120)))
    except subprocess.TimeoutExpired:
        return {"command": " ".join(cmd[2:]), "timed_out": True,
                "wall_s": round(time.monotonic() - t, 1)}
    return {"command": " ".join(cmd[2:]), "returncode": p.returncode,
            "wall_s": round(time.monotonic() - t, 1),
            "stdout_tail": p.stdout.strip().splitlines()[-8:],
            "stderr_tail": p.stderr.strip().splitlines()[-3:]}


# ----------------------------------------------------------------------------- report


def markdown(results: dict[str, Any]) -> str:
    lines = [f"# GPU check ({results['started']}, {results.get('wall_s')} s of "
             f"{results['budget_s']:.0f})", ""]
    for name, entry in results["sections"].items():
        lines += [f"## {name}: {entry['status']}" + (f" ({entry.get('wall_s')} s)"
                                                     if "wall_s" in entry else ""), ""]
        if entry["status"] != "ok":
            lines += [f"{entry.get('why') or entry.get('error')}", ""]
            continue
        result = entry["result"]
        rows = (result.items() if isinstance(result, dict) else [])
        table = [(k, v) for k, v in rows if isinstance(v, dict)]
        if table:
            keys: list[str] = []
            for _, v in table:
                keys += [k for k in v if k not in keys]
            lines += ["| | " + " | ".join(keys) + " |",
                      "|---|" + "---|" * len(keys)]
            lines += [f"| {k} | " + " | ".join(_cell(v.get(c)) for c in keys) + " |"
                      for k, v in table]
        for k, v in rows:
            if not isinstance(v, dict):
                lines.append(f"- {k}: {_cell(v)}")
        lines.append("")
    return "\n".join(lines)


def _cell(v: Any) -> str:
    if isinstance(v, dict):
        return "; ".join(f"{k}={_cell(x)}" for k, x in v.items())
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v).replace("|", "/")


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_train_and_die"]:
        _train_and_die(argv[1], argv[2], int(argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "gpu-check-out"))
    ap.add_argument("--budget", type=float, default=450.0,
                    help="seconds of checks; a section starts only if its need fits")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--quick", action="store_true", help="toy sizes (the CPU test)")
    ap.add_argument("--only", nargs="*", default=None, help="run these sections only")
    args = ap.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"error: no CUDA device (torch {torch.__version__}); --device cpu --quick runs "
              "the CPU-capable parts", file=sys.stderr)
        return 2
    check = Check(args.out, args.budget, args.device, args.quick)
    device = torch.device(args.device)
    want = set(args.only) if args.only is not None else None
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        scratch = Path(tmp)
        q = args.quick
        # in order of value; smoke studies stop while the compile section's time is left
        sections: list[tuple[str, Callable[[], Any], float]] = [
            ("env", lambda: env(device), 5),
            ("determinism", lambda: determinism(args.device, q, scratch / "det"),
             20 if q else 60),
            ("steps", lambda: step_times(args.device, q, check), 10 if q else 60),
            ("precision", lambda: precision(args.device, q), 10 if q else 25),
            ("paper trial", lambda: paper_trial(args.device, check, scratch),
             math.inf if q else 90),
            ("smoke", lambda: smoke(args.device, q, check, scratch), 10 if q else 40),
            ("compile", lambda: compile_speedups(args.device, q, check), 20 if q else 60),
        ]
        for name, fn, need in sections:
            if want is None or name in want:
                check.section(name, fn, need)
    print(f"gpu-check: {args.out / 'gpu-check.md'} ({check.results['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
