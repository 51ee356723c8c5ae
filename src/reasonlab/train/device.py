"""Where and in what precision a run computes: device, dtype, TF32, determinism on CUDA.

`device="auto"` takes CUDA when present, else the CPU. `dtype="auto"` (the default) is bf16
autocast on a CUDA device that supports bf16 and fp32 everywhere else, so a CPU run computes
exactly as it did before the option existed (same run ids, same bits):

    dtype   forward pass                         fp32 matmuls on CUDA   weights, optimizer
    fp32    fp32                                 IEEE fp32              fp32
    tf32    fp32                                 TF32 (10-bit mantissa) fp32
    bf16    bf16 autocast (matmuls, attention)   TF32                   fp32
    auto    bf16 on CUDA with bf16, else fp32 (tf32 on CUDA without bf16)

On the CPU tf32 is fp32 (there is no TF32 there). bf16 on the CPU is honoured when asked for
explicitly (autocast is slower than fp32 on most CPUs; benchmarks/bench_precision.py measures
it), never chosen by `auto`. `auto` never picks bf16 on a GPU that only emulates it (V100, T4:
`is_bf16_supported()` counts emulation unless told not to); those get tf32.

Determinism on CUDA (TrainConfig.deterministic, README "Running at paper scale on a GPU"):

    strict  (default) torch.use_deterministic_algorithms(True, warn_only=False): every kernel
            is a deterministic one, or the run ends in one `error:` line naming the op that has
            none (`nondeterministic_op`). Only warn_only=False switches SDPA's flash and
            memory-efficient attention backward to their deterministic variants: with
            warn_only=True they stay on the non-deterministic kernels and only warn.
    warn    warn_only=True, what the lab did before `strict`: such kernels warn and run
            non-deterministically, so a resumed run agrees with an uninterrupted one to float
            tolerance, not bitwise.
    off     no deterministic algorithms at all (fastest; results vary run to run).

`warn` and `off` enter the run id (they change what a run computes); `strict` is the default
and keeps every id. In all three, torch's filling of uninitialised memory (a NaN write into
every torch.empty under deterministic algorithms) is off: nothing reads memory it did not
write. The CPU is deterministic as it is: nothing changes there.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any, Literal

import torch

from reasonlab.errors import ConfigError

Precision = Literal["fp32", "tf32", "bf16"]
Determinism = Literal["strict", "warn", "off"]


def resolve_device(name: str) -> torch.device:
    """`auto` -> CUDA when present, else the CPU; `cuda` -> the process's current CUDA device
    (the one a scheduler pinned it to with CUDA_VISIBLE_DEVICES)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def check_available(name: str) -> None:
    """device="cuda" on a machine without CUDA fails before anything is computed or written."""
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device='cuda' but CUDA is not available here (torch "
                          f"{torch.__version__}); use device=auto or device=cpu")


def resolve_dtype(name: str, device: torch.device) -> Precision:
    """The precision `dtype` means on `device` (table in the module docstring)."""
    if name != "auto":
        return name  # type: ignore[return-value]
    if device.type != "cuda":
        return "fp32"
    return "bf16" if native_bf16() else "tf32"


def where_it_runs(device_name: str, dtype: str, deterministic: Determinism = "strict",
                  compile_mode: str = "off") -> dict[str, str]:
    """What run.json records of where a run computes: the resolved device ("cpu", or "cuda"
    with the GPU's name), the resolved precision, torch.compile's mode ("off" without it) and,
    on CUDA, the determinism mode. The run id says the device class and precision
    (train/config.id_place), not the GPU's model, so run.json does, and a resume in another
    place is refused (runs.py)."""
    device = resolve_device(device_name)
    out = {"device": device.type, "precision": resolve_dtype(dtype, device),
           "compile": compile_mode}
    if device.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(device)
        out["deterministic"] = deterministic
    return out


def native_bf16() -> bool:
    """Whether the current GPU computes bf16 in hardware (Ampere and later), not by emulation
    (V100, T4), which `is_bf16_supported()` counts by default."""
    try:
        return bool(torch.cuda.is_bf16_supported(including_emulation=False))
    except TypeError:  # torch < 2.4 has no `including_emulation` and does not count emulation
        return bool(torch.cuda.is_bf16_supported())


def configure(device: torch.device, precision: Precision,
              deterministic: Determinism = "strict") -> None:
    """Process-wide settings for a run on `device`: TF32 and deterministic algorithms on CUDA
    (each run sets them anew, so runs sharing a process do not leak settings into each other).
    Nothing changes on the CPU."""
    if device.type != "cuda":
        return
    # cuBLAS is deterministic only with a fixed workspace; read when cuBLAS starts
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if deterministic == "off":
        torch.use_deterministic_algorithms(False)
    else:
        torch.use_deterministic_algorithms(True, warn_only=deterministic == "warn")
    # no NaN fill of every torch.empty: nothing in the lab reads memory it did not write
    torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]
    tf32 = precision != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def autocast_for(precision: Precision, device: torch.device
                  ) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast for the forward pass when the precision is bf16, else a no-op."""
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


_NONDETERMINISTIC = re.compile(r"^\s*(\S+) does not have a deterministic implementation")


def nondeterministic_op(e: BaseException) -> ConfigError | None:
    """torch's error for an op without a deterministic kernel under deterministic='strict',
    as one line naming the op and the way out; None for any other error."""
    m = _NONDETERMINISTIC.match(str(e)) if isinstance(e, RuntimeError) else None
    if m is None:
        return None
    return ConfigError(f"{m.group(1)} has no deterministic CUDA kernel in torch "
                       f"{torch.__version__}, and deterministic='strict' (the default) asks "
                       "every kernel to be one; rerun with deterministic=warn (it runs, and a "
                       "resumed run then agrees with an uninterrupted one to float tolerance "
                       "only) or deterministic=off (fastest); each is a new run id")


def cast_frozen_matrices(model: torch.nn.Module) -> int:
    """Store the frozen weights and biases of every linear map in bf16, once; returns how many
    tensors were cast. Autocast caches its bf16 copy of a weight only for leaves that require
    grad, so it casts a frozen one again at every forward pass (FPT: 210 SmolLM2 matrices per
    step). Under bf16 autocast a linear map computes with the bf16 rounding of its weight
    either way, so the results are the same (tests/unit/test_launch_savings.py). train() does
    it for bf16 runs on CUDA whose checkpoints leave the frozen weights out (they are never
    saved in bf16); norms and embeddings, which autocast runs in fp32, stay fp32."""
    n = 0
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            for p in (module.weight, module.bias):
                if p is not None and not p.requires_grad and p.dtype == torch.float32:
                    p.data = p.data.to(torch.bfloat16)
                    n += 1
    return n
