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
it), never chosen by `auto`.

Determinism on CUDA: `torch.use_deterministic_algorithms(True, warn_only=True)` and the cuBLAS
workspace setting it needs; kernels torch has no deterministic version of warn instead of
failing (README, "Running at paper scale on a GPU").
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Literal

import torch

from reasonlab.errors import ConfigError

Precision = Literal["fp32", "tf32", "bf16"]


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
    return "bf16" if torch.cuda.is_bf16_supported() else "tf32"


def configure(device: torch.device, precision: Precision) -> None:
    """Process-wide settings for a run on `device`: TF32 and deterministic algorithms on CUDA
    (each run sets them anew, so runs sharing a process do not leak settings into each other).
    Nothing changes on the CPU."""
    if device.type != "cuda":
        return
    # cuBLAS is deterministic only with a fixed workspace; read when cuBLAS starts
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    tf32 = precision != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def autocast_for(precision: Precision, device: torch.device
                  ) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast for the forward pass when the precision is bf16, else a no-op."""
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()
