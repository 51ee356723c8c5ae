#!/usr/bin/env python3
"""The prepared device check: what a GPU must show before `--scale paper` is trusted there.

Run it as `scripts/gpu-check` (README, "GPU check"): it fits a 10-minute slot on a machine with
no package index. The wrapper installs what the image lacks from the carried wheels (.whl/),
and the whole command ends within --window seconds (default 560) counted from the wrapper's
start. The checks share the window's rest (--budget overrides it) on a fixed schedule: each
section has its own deadline, enforced inside it (its loops skip what no longer fits, its child
processes are killed at it, and a SIGALRM ends whatever else is running there), and a section
that finishes early leaves its time to the next. A section cut short reports what it measured,
with "cut_short": true. Results go to gpu-check.json and gpu-check.md in --out (default $OUT
when set, else ./gpu-check-out), rewritten after every section.

Sections, in order of value (share of the budget):

  env          torch, CUDA, the GPU, native bf16, a bf16 matmul's TFLOP/s; the wheels installed
  fpt launch   (24%) FPT's GPT-2 shape, launch-bound: eager ms per step, CUDA kernels per step
               beside the plan's count, host time per kernel (plan.PER_OP_SECONDS assumes
               10 us); eager vs CUDA graphs (torch.compile mode reduce-overhead) in a child
               process; runs per GPU: 1, 2, 4 processes stepping side by side, their summed
               steps per second; then torch.compile's default mode
  determinism  (16%) strict mode: a run trained twice in this process, and once killed with
               SIGKILL mid-run in a child process and resumed by `reasonlab train` in another,
               compared bitwise (metrics.jsonl and every checkpointed tensor); then mode warn
               (the lab's old setting) if its time allows
  steps        (16%) paper shapes with random weights, LEGO's BERT-base at batch 1000 first
               (GPT-2 and BERT-base shapes without their weights): ms per step before and after
               the sync-free loop, CUDA kernels per step, host time per kernel, MFU, peak
               memory, and the sync-free steps run under torch.cuda.set_sync_debug_mode("error")
  precision    (7%) bf16, then tf32, against fp32 on one model: logits, gradient cosine,
               30-step trajectories
  smoke        (13%) `reasonlab run STUDY --scale smoke --device cuda` for every study whose
               assets this machine has, a family at a time
  paper trial  (20%) `reasonlab run lego-extrapolation --scale paper --seeds 1 steps=20
               n_test=64` through the CLI: one seed, a small test set (the full study is 6
               BERT-base runs and ~285 TFLOP of analyses)

It needs torch (a CUDA build) and the lab's dependencies (pyproject.toml), which the wrapper
installs from .whl/ where the image lacks them (`scripts/gpu-check --fetch-wheels`, on a machine
with a package index, fills .whl/). `--device cpu --quick` runs every section at toy sizes
(tests/integration/test_gpu_check.py; test_gpu_check_offline.py runs it as on an offline node).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:  # a bare checkout: no install, the source tree itself
    sys.path.insert(0, str(ROOT / "src"))

import torch  # noqa: E402

H100_BF16_DENSE = 989e12  # as plan.py; the MFU column is against it on any GPU
WINDOW_S = 560.0
"""The whole command, the wheels' install included: a 10-minute slot less 40 s for the
machine's start and the results' copy."""
FINISH_S = 15.0
"""Kept back from the budget: the last write, the scratch folder's removal, CUDA's teardown."""
CHILD_RESERVE_S = 3.0
"""A child process is ended this long before its section's deadline, so the section still
reads what it printed and records it before the SIGALRM."""


# ----------------------------------------------------------------------------- the harness


class Cut(BaseException):
    """Raised in a section at its deadline (SIGALRM). A BaseException, so that a section's
    `except Exception` (a failed measurement is a finding, and the section goes on) cannot
    swallow it."""


class Deadline:
    """A section's end (time.monotonic()). The section asks `fits(seconds)` before each
    measurement and skips what no longer fits; `enforced()` ends the rest with Cut."""

    def __init__(self, end: float) -> None:
        self.end = end
        self.cut = False
        """Something was left out for lack of time (a skipped measurement, a killed child)."""

    def left(self) -> float:
        return self.end - time.monotonic()

    def fits(self, seconds: float) -> bool:
        ok = self.left() >= seconds
        self.cut |= not ok
        return ok

    @contextlib.contextmanager
    def enforced(self) -> Iterator[None]:
        def alarm(signum: int, frame: Any) -> None:
            raise Cut

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, max(self.left(), 1e-3))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


Section = Callable[[dict[str, Any], Deadline], object]
"""A section fills the dict it is given as it measures (so a cut leaves what it got)."""


class Check:
    """Sections run in order on one schedule; results written after each."""

    def __init__(self, out: Path, budget: float, device: str, quick: bool,
                 extra: dict[str, Any] | None = None) -> None:
        self.out, self.budget, self.device, self.quick = out, budget, device, quick
        self.t0 = time.monotonic()
        self.results: dict[str, Any] = {"device": device, "quick": quick, "budget_s": budget,
                                        **(extra or {}),
                                        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
                                        "sections": {}}
        out.mkdir(parents=True, exist_ok=True)

    def run(self, sections: list[tuple[str, float, float, Section]]) -> None:
        """(name, share, seconds it needs to start, fn) in order: section i ends when the
        shares up to it have passed since the start (shares normalised over `sections`), so a
        section never takes a later one's time but may use what an earlier one left."""
        total, done = sum(s[1] for s in sections), 0.0
        for name, share, need, fn in sections:
            done += share
            self.section(name, fn, self.t0 + self.budget * done / total, need)

    def section(self, name: str, fn: Section, end: float, need: float) -> None:
        dl = Deadline(end)
        entry: dict[str, Any] = {"status": "running", "deadline_s": round(dl.left(), 1)}
        self.results["sections"][name] = entry
        if dl.left() < need:
            entry.update(status="skipped", why=f"{dl.left():.0f} s until its deadline, the "
                         f"section needs ~{need:.0f} s")
            self.write()
            return
        print(f"[gpu-check] {name} ({dl.left():.0f} s)", file=sys.stderr, flush=True)
        out: dict[str, Any] = {}
        entry["result"] = out
        t = time.monotonic()
        try:
            with dl.enforced():
                fn(out, dl)
            entry["status"] = "ok"
        except Cut:
            dl.cut = True
            entry["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - a failed section is a finding, not the end
            entry.update(status="error",
                         error=f"{type(e).__name__}: {e}".splitlines()[0][:500],
                         traceback=traceback.format_exc().splitlines()[-12:])
        finally:  # also on SystemExit (SIGTERM at the window's end): what it got stays
            if entry["status"] == "running":
                entry["status"] = "stopped"
            entry["cut_short"] = dl.cut
            entry["wall_s"] = round(time.monotonic() - t, 1)
            self.write()

    def write(self) -> None:
        self.results["wall_s"] = round(time.monotonic() - self.t0, 1)
        for name, text in (("gpu-check.json", json.dumps(self.results, indent=1, default=str)),
                           ("gpu-check.md", markdown(self.results))):
            tmp = self.out / f".{name}.tmp"  # renamed into place: a kill never leaves half
            tmp.write_text(text)
            os.replace(tmp, self.out / name)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH"))
                                        if p)
    return env


class Child(NamedTuple):  # (no dataclass: the tests load this file under no module name)
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    wall_s: float

    def lines(self) -> list[dict[str, Any]]:
        """The JSON lines it printed (a child of this script prints one per measurement)."""
        out = []
        for line in self.stdout.splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
        return out

    def error(self) -> list[str]:
        return self.stderr.strip().splitlines()[-3:]


def run_child(cmd: list[str], dl: Deadline) -> Child:
    """`cmd` in a session of its own, killed with all it started (the CLI's workers,
    torch.compile's) CHILD_RESERVE_S before the deadline, or when this process leaves early."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=child_env(), start_new_session=True)
    timed_out = False
    try:
        try:
            out, err = p.communicate(timeout=max(0.1, dl.left() - CHILD_RESERVE_S))
        except subprocess.TimeoutExpired:
            timed_out = dl.cut = True
            _kill_group(p)
            out, err = p.communicate()  # what it printed before
    finally:
        if p.poll() is None:
            _kill_group(p)
            p.wait()
    return Child(p.returncode, out, err, timed_out, round(time.monotonic() - t, 1))


def _kill_group(p: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signal.SIGKILL)


def _error(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".splitlines()[0][:300]


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
"""A representative paper-scale run of each family: (study, which of its runs), the steps
section's order (LEGO's BERT-base at batch 1000 first)."""
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


def _save_config(config: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config.model_dump(mode="json")))
    return path


def _load_config(path: str) -> Any:
    from reasonlab.train.config import TrainConfig

    return TrainConfig.build(json.loads(Path(path).read_text()))


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


# ----------------------------------------------------------------------------- sections


def env(device: torch.device, out: dict[str, Any] | None = None) -> dict[str, Any]:
    from reasonlab.store import provenance

    out = {} if out is None else out
    out.update({"torch": torch.__version__, "cuda": torch.version.cuda,
                "python": platform.python_version(), **provenance(),
                # what the wrapper installed from the carried wheels (.whl/)
                "from_wheels": os.environ.get("GPU_CHECK_INSTALLED", "").split()})
    if device.type == "cuda":
        from reasonlab.train.device import native_bf16

        p = torch.cuda.get_device_properties(device)
        out.update(gpu=p.name, capability=f"{p.major}.{p.minor}", memory_gb=round(
            p.total_memory / 1e9, 1), sms=p.multi_processor_count,
            cudnn=torch.backends.cudnn.version(), native_bf16=native_bf16(),
            gpus=torch.cuda.device_count())
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


COMPILE_LAYERS = 6
"""torch.compile's subject is cut to this many layers: compilation time grows with depth, and
the per-layer speed-up is what it measures."""


def fpt_launch(device: str, quick: bool, scratch: Path, out: dict[str, Any],
               dl: Deadline) -> None:
    """FPT's GPT-2 shape (batch 4 through frozen layers: launch-bound on a GPU), eager; then
    CUDA graphs, runs per GPU and torch.compile's default mode, each in child processes (a
    graph capture cut at the deadline would leave this process's CUDA unusable for the
    sections after)."""
    from reasonlab import plan

    config = family_config("fpt GPT-2 shape", device, quick)
    warm, n = (1, 3) if quick else (3, 20)
    r: dict[str, Any] = out.setdefault("eager", {"layers": config.model.n_layers,
                                                 "batch": config.batch_size})
    s = Stepper(config)
    s.steps(warm)
    r["ms_per_step"] = round(1e3 * s.timed(n), 2)
    r["plan_ops_per_step"] = plan.ops_per_step(config).train
    kernels = count_kernels(s, 3)
    r["kernels_per_step"] = kernels
    if kernels:  # the step is launch-bound: its time over its kernels is the host's per kernel
        r["us_per_kernel"] = round(1e3 * r["ms_per_step"] / kernels, 2)
        r["plan_assumes_us"] = plan.PER_OP_SECONDS * 1e6
    del s
    path = _save_config(config, scratch / "fpt.json")

    compiled: dict[str, Any] = out.setdefault("compiled", {})

    def compile_cases(cases: list[str]) -> None:
        # ~60 s on a GPU node: the child's start, eager steps, one compilation (toy: seconds)
        if not dl.fits(20 if quick else 60):
            compiled.update(dict.fromkeys(cases, {"skipped": "deadline"}))
            return
        child = run_child([sys.executable, __file__, "_compile", str(path), ",".join(cases),
                           str(int(quick))], dl)
        for line in child.lines():
            compiled.setdefault(line.pop("case"), line)  # the eager baseline: the first's
        if child.returncode and not child.timed_out:
            compiled[f"{'+'.join(cases)} error"] = {"error": child.error()}

    # CUDA graphs first (FPT's launch floor), then runs per GPU, then plain torch.compile
    compile_cases(["CUDA graphs"] if device == "cuda" else ["aot_eager"])
    if device == "cuda":
        torch.cuda.empty_cache()

    # runs per GPU: K processes, each a whole run's steps, side by side on the one device
    per_gpu: dict[str, Any] = out.setdefault("runs_per_gpu", {})
    window = 2.0 if quick else 10.0
    for k in (1, 2) if quick else (1, 2, 4):
        # each child starts torch and builds the model (~15 s on a GPU node), then steps
        if not dl.fits(window + (20 if quick else 30)):
            per_gpu[str(k)] = {"skipped": "deadline"}
            continue
        per_gpu[str(k)] = side_by_side(path, k, window, scratch / f"side-{k}", dl)
    base = per_gpu.get("1", {}).get("steps_per_s")
    for k_runs in per_gpu.values():
        if base and k_runs.get("steps_per_s"):
            k_runs["vs_one_run"] = round(k_runs["steps_per_s"] / base, 2)

    if device == "cuda":
        compile_cases(["default"])


def side_by_side(config_path: Path, k: int, seconds: float, folder: Path,
                 dl: Deadline) -> dict[str, Any]:
    """k children step the same run for `seconds` at once (started together once all are
    warm): their summed steps per second."""
    folder.mkdir(parents=True, exist_ok=True)
    go = folder / "go"
    procs = [subprocess.Popen([sys.executable, __file__, "_steps", str(config_path),
                               str(folder / f"ready-{i}"), str(go), str(seconds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=child_env(), start_new_session=True) for i in range(k)]
    result: dict[str, Any] = {}
    try:
        while not all((folder / f"ready-{i}").exists() for i in range(k)):
            if any(p.poll() is not None for p in procs):
                bad = next(p for p in procs if p.poll() is not None)
                return {"error": bad.communicate()[1].strip().splitlines()[-1:]}
            if dl.left() < seconds + CHILD_RESERVE_S + 5:
                dl.cut = True
                return {"cut_short": "not warm before the deadline"}
            time.sleep(0.05)
        go.touch()
        runs = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=max(0.1, dl.left() - CHILD_RESERVE_S))
            if p.returncode:
                return {"error": stderr.strip().splitlines()[-1:]}
            runs.append(json.loads(stdout.strip().splitlines()[-1]))
        result = {"steps_per_s": round(sum(r["steps"] / r["seconds"] for r in runs), 1),
                  "ms_per_step_each": [round(1e3 * r["seconds"] / r["steps"], 2)
                                       for r in runs]}
    except subprocess.TimeoutExpired:
        dl.cut = True
        result = {"cut_short": "a run did not finish before the deadline"}
    finally:
        for p in procs:
            if p.poll() is None:
                _kill_group(p)
                p.wait()
    return result


def determinism(device: str, quick: bool, scratch: Path, out: dict[str, Any] | None = None,
                dl: Deadline | None = None) -> dict[str, Any]:
    """Strict mode first (the lab's default: what paper runs rely on); warn mode only if the
    time strict took is still left."""
    from reasonlab.runs import execute, run_dir_for
    from reasonlab.train.config import TrainConfig

    out = {} if out is None else out
    dl = Deadline(time.monotonic() + 3600) if dl is None else dl
    size = ({"model": {"d_model": 32, "n_layers": 2, "n_heads": 2, "d_mlp": 64,
                       "dropout": 0.1}, "n_train": 256, "batch_size": 16, "steps": 24,
             "eval_every": 4, "ckpt_every": 8} if quick else {})
    took = 0.0
    for mode in ("strict",) if quick else ("strict", "warn"):
        if not dl.fits(took):
            out[mode] = {"skipped": "deadline"}
            continue
        t = time.monotonic()
        cfg = TrainConfig.build(tiny(device=device, deterministic=mode, **size))
        roots = {k: scratch / f"{mode}-{k}" for k in ("a", "b", "killed")}
        r: dict[str, Any] = out.setdefault(mode, {"steps": cfg.steps, "train_s": {}})
        try:
            for k in ("a", "b"):
                t_run = time.monotonic()
                execute(cfg, roots[k], quiet=True)
                r["train_s"][k] = round(time.monotonic() - t_run, 1)
        except Exception as e:  # noqa: BLE001 - strict mode's one-line error is a finding
            r["error"] = _error(e)
            continue
        r["rerun"] = compare_runs(run_dir_for(cfg, roots["a"]), run_dir_for(cfg, roots["b"]))
        path = _save_config(cfg, scratch / f"{mode}.json")
        die_at = cfg.steps // 2 + cfg.ckpt_every // 2  # after a checkpoint, before the next
        child = run_child([sys.executable, __file__, "_train_and_die", str(path),
                           str(roots["killed"]), str(die_at)], dl)
        ckpt = run_dir_for(cfg, roots["killed"]) / "ckpt" / "state.json"
        r["killed"] = {"returncode": child.returncode, "by_sigkill":
                       child.returncode == -signal.SIGKILL and not child.timed_out,
                       "at_call": die_at, "checkpoint_step": json.loads(
                           ckpt.read_text())["step"] if ckpt.exists() else None}
        if child.timed_out:
            r["killed"]["cut_short"] = True
            break
        resumed = run_child([sys.executable, "-m", "reasonlab.cli", "train", str(path),
                             "--out", str(roots["killed"]), "--quiet"], dl)
        r["resume_returncode"] = resumed.returncode
        if resumed.timed_out:
            r["resume_cut_short"] = True
            break
        if resumed.returncode:
            r["resume_error"] = resumed.error()[-1:]
        else:
            r["resume"] = compare_runs(run_dir_for(cfg, roots["a"]),
                                       run_dir_for(cfg, roots["killed"]))
        took = time.monotonic() - t
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


def step_times(device: str, quick: bool, out: dict[str, Any], dl: Deadline) -> None:
    from reasonlab import plan

    warm, n = (1, 2) if quick else (3, 10)
    for name in QUICK_FAMILIES if quick else FAMILIES:
        # ~25 s: a paper-shape model built, 26 steps at its batch, a profiled pair
        if not dl.fits(3 if quick else 25):
            out[name] = {"skipped": "deadline"}
            continue
        r: dict[str, Any] = out.setdefault(name, {})
        try:
            config = family_config(name, device, quick)
            t = time.monotonic()
            s = Stepper(config)
            r.update({"build_s": round(time.monotonic() - t, 1), "precision": s.precision,
                      "batch": config.batch_size, "layers": config.model.n_layers,
                      "d_model": config.model.d_model, "seq": config.model.max_seq_len})
            if s.device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(s.device)
            s.steps(warm, legacy=True)
            r["before_ms"] = round(1e3 * s.timed(n, legacy=True), 2)
            s.steps(warm)
            r["after_ms"] = round(1e3 * s.timed(n), 2)
            r["speedup"] = round(r["before_ms"] / r["after_ms"], 2)
            flops = plan.flops_per_token(config) * config.model.max_seq_len * config.batch_size
            r["mfu"] = round(flops / (r["after_ms"] / 1e3) / H100_BF16_DENSE, 4)
            if s.device.type == "cuda":
                r["peak_memory_gb"] = round(torch.cuda.max_memory_allocated(s.device) / 1e9, 2)
            r["sync"] = sync_free(s, 3)
            kernels = count_kernels(s, 2)
            r["kernels_per_step"] = kernels
            r["plan_ops_per_step"] = plan.ops_per_step(config).train
            if kernels:
                r["us_per_kernel"] = round(1e3 * r["after_ms"] / kernels, 2)
            del s
        except Exception as e:  # noqa: BLE001 - e.g. a task whose data needs a package
            r["error"] = _error(e)
        if device == "cuda":
            torch.cuda.empty_cache()


def precision(device: str, quick: bool, out: dict[str, Any] | None = None,
              dl: Deadline | None = None) -> dict[str, Any]:
    """bf16, then tf32, against fp32 from the same weights and batches: logits, gradients, and
    a trajectory of 30 steps (3 with `quick`)."""
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.device import autocast_for, configure
    from reasonlab.train.metrics import model_inputs, slot_loss

    out = {} if out is None else out
    dl = Deadline(time.monotonic() + 3600) if dl is None else dl
    size = ({"model": {"d_model": 32, "n_layers": 2, "n_heads": 2, "d_mlp": 64, "dropout": 0.0},
             "batch_size": 16, "n_train": 256} if quick else
            {"model": {"d_model": 512, "n_layers": 6, "n_heads": 8, "d_mlp": 2048,
                       "dropout": 0.0}})
    ref: dict[str, Any] | None = None
    base = None
    took = 0.0
    for p in ("fp32", "bf16", "tf32"):
        if not dl.fits(took):  # each precision takes about as long as fp32 did
            out[p] = {"skipped": "deadline"}
            continue
        t = time.monotonic()
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
        losses = [s.steps(1) for _ in range(3 if quick else 30)]
        r = {"logits": logits.detach(), "grad": grad.detach(),
             "losses": torch.stack(losses).float().cpu(),
             "weights": torch.cat([q.detach().flatten().float() for q in s.model.parameters()])}
        if ref is None:
            ref = r
        else:
            out[p] = {
                "logits_max_abs_diff": float((r["logits"] - ref["logits"]).abs().max()),
                "logits_rel_diff": float((r["logits"] - ref["logits"]).norm()
                                         / ref["logits"].norm()),
                "grad_cosine": float(torch.nn.functional.cosine_similarity(
                    r["grad"].double(), ref["grad"].double(), dim=0)),
                "trajectory_max_abs_loss_diff": float((r["losses"] - ref["losses"]).abs().max()),
                "final_loss": float(r["losses"][-1]), "final_loss_fp32": float(ref["losses"][-1]),
                "weights_rel_diff": float((r["weights"] - ref["weights"]).norm()
                                          / ref["weights"].norm())}
        took = time.monotonic() - t
    return out


def smoke(device: str, quick: bool, scratch: Path, out: dict[str, Any], dl: Deadline) -> None:
    """Every study whose assets are here, smoke scale, through the CLI in this process; the
    families take turns, so a short deadline still covers each."""
    from reasonlab.cli import main
    from reasonlab.studies import STUDIES

    by_family: dict[str, list[str]] = {}
    for name, cls in STUDIES.items():
        by_family.setdefault(cls.__module__.split(".")[2], []).append(name)
    order = [n for group in _zip_longest(*by_family.values()) for n in group if n]
    if quick:
        order = ["lego-extrapolation"]
    for name in order:
        why = STUDIES[name].missing()
        if why:
            out[name] = {"skipped": why}
            continue
        if not dl.fits(5 if quick else 15):  # a smoke study: seconds to a minute on a GPU
            out[name] = {"skipped": "deadline"}
            continue
        t = time.monotonic()
        out[name] = {"started": True}  # what a cut leaves: the study it was in
        err = _capture_stderr(lambda n=name: main(["run", n, "--scale", "smoke", "--device",
                                                   device, "--out", str(scratch / "smoke"),
                                                   "--quiet", "--workers", "1"]))
        out[name] = {"returncode": err[0], "wall_s": round(time.monotonic() - t, 1),
                     **({"error": err[1][-1:]} if err[0] else {})}


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
            return 1, [_error(e)]
    return rc, buf.getvalue().strip().splitlines()


PAPER_TRIAL = ["--seeds", "1", "steps=20", "n_test=64"]
"""One seed (2 runs, not 6) and a test set of 64: the full test set makes LEGO's analyses
~285 TFLOP on the CPU; 20 steps time the paper's BERT-base at batch 1000."""
QUICK_PAPER_TRIAL = ["--seeds", "1", "steps=2", "batch_size=4", "n_train=64", "n_test=16",
                     "eval_every=1", "ckpt_every=2", "eval_batch_size=16",
                     "optim.warmup_steps=0"]
"""--quick: the paper's shapes, the data shrunk as tests/integration/test_paper_scale.py does."""


def paper_trial(device: str, quick: bool, scratch: Path, out: dict[str, Any],
                dl: Deadline) -> None:
    store = scratch / "paper"
    cmd = [sys.executable, "-m", "reasonlab.cli", "run", "lego-extrapolation", "--scale",
           "paper", *(QUICK_PAPER_TRIAL if quick else PAPER_TRIAL), "--device", device,
           "--out", str(store), "--quiet", "--workers", "1"]
    out["command"] = "reasonlab " + " ".join(cmd[3:])
    t = time.monotonic()
    try:
        child = run_child(cmd, dl)
        out.update(returncode=child.returncode, stdout_tail=child.stdout.strip().splitlines()[
            -8:], stderr_tail=child.error())
    finally:  # cut short too (the child is killed by then): how far each run got
        out.update(wall_s=round(time.monotonic() - t, 1), runs=_progress(store))


def _progress(store: Path) -> list[dict[str, Any]]:
    """Each run the trial started: its last logged step, and whether it finished."""
    out = []
    for run in sorted((store / "runs").glob("*/")):
        lines = (run / "metrics.jsonl").read_text().splitlines() if (
            run / "metrics.jsonl").exists() else []
        out.append({"run": run.name, "last_step": json.loads(lines[-1])["step"] if lines
                    else 0, "finished": (run / "result.json").exists()})
    return out


# ----------------------------------------------------------------------------- children


def _train_and_die(config_path: str, root: str, die_at: int) -> None:
    """The child of `determinism`: trains the run and SIGKILLs itself in the middle of training
    call `die_at` (no cleanup, no flush: as a killed job)."""
    from reasonlab.runs import execute
    from reasonlab.train import loop

    real, calls = loop.train_step, {"n": 0}

    def step(*a: Any) -> torch.Tensor:
        calls["n"] += 1
        if calls["n"] == die_at:
            sync(torch.device(a[3].tokens.device))
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*a)

    loop.train_step = step
    execute(_load_config(config_path), Path(root), quiet=True)


COMPILE_CASES: dict[str, dict[str, str]] = {
    "CUDA graphs": {"mode": "reduce-overhead"}, "default": {"mode": "default"},
    "aot_eager": {"backend": "aot_eager"}}
"""torch.compile's arguments per case. On the CPU (--quick) aot_eager stands in: it traces as
inductor does without generating C++, so the CPU test stays short; CUDA graphs exist only on a
GPU."""


def _compile(config_path: str, cases: list[str], quick: bool) -> None:
    """The child of `fpt launch`: eager, then each torch.compile case, at COMPILE_LAYERS
    layers; one JSON line per case as it is measured (a kill keeps those printed)."""
    config = _load_config(config_path)
    config = config.model_copy(update={"model": config.model.model_copy(update={
        "n_layers": min(config.model.n_layers, COMPILE_LAYERS), "depth_range": None})})
    n = 3 if quick else 20
    s = Stepper(config)
    s.steps(2)
    eager = s.timed(n)
    print(json.dumps({"case": "eager", "layers": config.model.n_layers,
                      "ms_per_step": round(eager * 1e3, 2)}), flush=True)
    real = s.model
    for case in cases:
        try:
            s.model = torch.compile(real, **COMPILE_CASES[case])
            t = time.monotonic()
            s.steps(3)
            sync(s.device)
            first = time.monotonic() - t
            compiled = s.timed(n)
            line = {"ms_per_step": round(compiled * 1e3, 2),
                    "speedup": round(eager / compiled, 2), "first_3_steps_s": round(first, 1)}
        except Exception as e:  # noqa: BLE001 - a failing mode is a finding
            line = {"error": _error(e)}
        s.model = real
        torch._dynamo.reset()
        print(json.dumps({"case": case, **line}), flush=True)


def _steps(config_path: str, ready: str, go: str, seconds: float) -> None:
    """A child of `side_by_side`: warm up, say so, wait for the others, then step for
    `seconds`; prints {"steps", "seconds"}."""
    s = Stepper(_load_config(config_path))
    s.steps(3)
    sync(s.device)
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.01)
    done, t = 0, time.perf_counter()
    while time.perf_counter() - t < seconds:
        s.steps(5)  # a few at a time: a sync after each would drain the launch queue
        sync(s.device)
        done += 5
    print(json.dumps({"steps": done, "seconds": time.perf_counter() - t}), flush=True)


CHILDREN: dict[str, Callable[[list[str]], None]] = {
    "_train_and_die": lambda a: _train_and_die(a[0], a[1], int(a[2])),
    "_compile": lambda a: _compile(a[0], a[1].split(","), a[2] == "1"),
    "_steps": lambda a: _steps(a[0], a[1], a[2], float(a[3])),
}


# ----------------------------------------------------------------------------- report


def markdown(results: dict[str, Any]) -> str:
    lines = [f"# GPU check ({results['started']}, {results.get('wall_s')} s of "
             f"{results['budget_s']:.0f})", ""]
    for name, entry in results["sections"].items():
        status = entry["status"] + (", cut short" if entry.get("cut_short") else "")
        took = ""
        if "wall_s" in entry:
            took = f" ({entry['wall_s']} s" + (f" of {entry['deadline_s']}" if "deadline_s"
                                               in entry else "") + ")"
        lines += [f"## {name}: {status}{took}", ""]
        if entry["status"] in ("skipped", "error"):
            lines += [f"{entry.get('why') or entry.get('error')}", ""]
        result = entry.get("result")
        if isinstance(result, dict):
            lines += _tables(result)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))  # one blank line between blocks


def _tables(result: dict[str, Any]) -> list[str]:
    """A result as Markdown: its dicts of measurements one table (a row each), a dict of such
    dicts (the FPT section's compiled cases, its runs per GPU) a table under its own heading,
    and the plain values a list."""
    def flat(v: Any) -> bool:
        return isinstance(v, dict) and bool(v) and not all(isinstance(x, dict)
                                                           for x in v.values())

    lines = _table([(k, v) for k, v in result.items() if flat(v)])
    for k, v in result.items():
        if isinstance(v, dict) and v and not flat(v):
            lines += [f"### {k}", "", *_table(list(v.items()))]
    lines += [f"- {k}: {_cell(v)}" for k, v in result.items() if not isinstance(v, dict)]
    return [*lines, ""]


def _table(rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    if not rows:
        return []
    keys: list[str] = []
    for _, v in rows:
        keys += [k for k in v if k not in keys]
    return ["| | " + " | ".join(keys) + " |", "|---|" + "---|" * len(keys),
            *(f"| {k} | " + " | ".join(_cell(v.get(c)) for c in keys) + " |"
              for k, v in rows), ""]


def _cell(v: Any) -> str:
    if isinstance(v, dict):
        return "; ".join(f"{k}={_cell(x)}" for k, x in v.items())
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v).replace("|", "/")


# ----------------------------------------------------------------------------- main


SECTIONS = ("env", "fpt launch", "determinism", "steps", "precision", "smoke", "paper trial")
SHARES = {"env": 0.04, "fpt launch": 0.24, "determinism": 0.16, "steps": 0.16,
          "precision": 0.07, "smoke": 0.13, "paper trial": 0.20}
"""Each section's share of the budget, in order of value (the schedule: Check.run)."""
NEED = {"env": (5, 1), "fpt launch": (40, 5), "determinism": (30, 5), "steps": (25, 3),
        "precision": (10, 3), "smoke": (20, 5), "paper trial": (45, 10)}
"""Seconds a section needs to start at all (GPU sizes, --quick); with less it is skipped."""


def _terminated(signum: int, frame: Any) -> None:
    # the wrapper's hard stop (timeout): unwind, so the children's process groups are killed
    # and the section in progress is written
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in CHILDREN:
        CHILDREN[argv[0]](argv[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "gpu-check-out"))
    ap.add_argument("--window", type=float, default=WINDOW_S,
                    help="seconds the whole check may take, counted from the wrapper's start "
                         f"(the wheels' install included; default {WINDOW_S:.0f})")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds of checks, instead of what the window leaves")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--quick", action="store_true", help="toy sizes (the CPU test)")
    ap.add_argument("--only", nargs="*", default=None, help="run these sections only")
    args = ap.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"error: no CUDA device (torch {torch.__version__}); --device cpu --quick runs "
              "every section at toy sizes", file=sys.stderr)
        return 2
    unknown = sorted(set(args.only or ()) - set(SECTIONS))
    if unknown:
        print(f"error: unknown section {', '.join(map(repr, unknown))} in --only; choose "
              f"from: {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    # the wrapper's start (GPU_CHECK_T0, epoch seconds), else this process's
    started = float(os.environ.get("GPU_CHECK_T0") or time.time())
    spent = time.time() - started
    budget = args.budget if args.budget is not None else args.window - spent - FINISH_S
    if budget < 10:
        print(f"error: {budget:.0f} s left for the checks (--window {args.window:.0f}, "
              f"{spent:.0f} s spent on the install and start-up); give a longer --window or "
              "--budget", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminated)
    check = Check(args.out, budget, args.device, args.quick,
                  {"window_s": args.window, "before_checks_s": round(spent, 1)})
    device = torch.device(args.device)
    d, q = args.device, args.quick
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        scratch = Path(tmp)
        fns: dict[str, Section] = {
            "env": lambda out, dl: env(device, out),
            "fpt launch": lambda out, dl: fpt_launch(d, q, scratch / "fpt", out, dl),
            "determinism": lambda out, dl: determinism(d, q, scratch / "det", out, dl),
            "steps": lambda out, dl: step_times(d, q, out, dl),
            "precision": lambda out, dl: precision(d, q, out, dl),
            "smoke": lambda out, dl: smoke(d, q, scratch, out, dl),
            "paper trial": lambda out, dl: paper_trial(d, q, scratch, out, dl),
        }
        check.run([(name, SHARES[name], NEED[name][q], fns[name]) for name in SECTIONS
                   if args.only is None or name in args.only])
    print(f"gpu-check: {args.out / 'gpu-check.md'} ({check.results['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
