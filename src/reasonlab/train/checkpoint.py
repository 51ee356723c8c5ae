"""Checkpoints: tensors in safetensors, everything else in JSON. Never pickle.

A checkpoint is a directory `ckpt/` holding `state.safetensors` (model, optimizer moments,
RNG states) and `state.json` (step, config hash, optimizer scalars, the checksum of the whole
file and that of the model weights alone). It is written into a temporary directory and
renamed into place, so a run killed mid-write leaves the previous checkpoint intact.

Resuming reads and verifies everything; loading a finished run for analysis reads the model
weights alone (`read_model_weights`): with Adam, the optimizer moments are twice the weights.
So a run's LAST checkpoint, written at its final step, holds no optimizer state: nothing
resumes a finished run (a longer run is another config, another run), and at paper scale the
moments would triple the store (a BERT-base run: 1.3 GB with them, 0.44 GB without; the
artificial-corpus study's 194 runs, 250 GB against 85).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file
from torch import nn

from reasonlab.errors import CheckpointError
from reasonlab.store import (CHECKSUM, MODEL_CHECKSUM, CorruptRunError, check_checkpoint,
                             checkpoint_dir, checkpoint_meta, file_sha256)

MODEL_PREFIX = "model."

CKPT_DIR = "ckpt"


def save_checkpoint(run_dir: Path, step: int, config_hash: str, model: nn.Module,
                    optimizer: torch.optim.Optimizer | None,
                    fence: Callable[[], None] = lambda: None) -> None:
    """Write the checkpoint of `step`; `optimizer` None at a run's final step (module doc).
    `fence` (train()'s) is called before the folder is touched and again before the renames."""
    tensors: dict[str, torch.Tensor] = {
        f"{MODEL_PREFIX}{k}": v.detach().cpu().contiguous()
        for k, v in model.state_dict().items()
    }
    weights_sha256 = tensors_sha256(tensors)  # the model's alone: an analysis verifies these
    opt = optimizer.state_dict() if optimizer is not None else {"state": {}, "param_groups": None}
    scalars: dict[str, Any] = {}
    for pid, st in opt["state"].items():
        for k, v in st.items():
            if isinstance(v, torch.Tensor):
                tensors[f"optim.{pid}.{k}"] = v.detach().cpu().contiguous()
            else:
                scalars[f"{pid}.{k}"] = v
    tensors["rng.torch_cpu"] = torch.get_rng_state()
    if torch.cuda.is_available():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = s
    meta = {
        "step": step,
        "config_hash": config_hash,
        "param_groups": opt["param_groups"],
        "optim_scalars": scalars,
        MODEL_CHECKSUM: weights_sha256,
    }
    fence()
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in run_dir.glob(f".{CKPT_DIR}.tmp*"):  # left by a killed writer of this run
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(dir=run_dir, prefix=f".{CKPT_DIR}.tmp."))  # never shared
    tmp.chmod(0o755)  # mkdtemp's 0700 would hide ckpt/ from a shared store's other users
    save_file(tensors, str(tmp / "state.safetensors"))
    # the file's checksum: a flipped byte in the tensors is then detected before it is used
    meta[CHECKSUM] = file_sha256(tmp / "state.safetensors")
    (tmp / "state.json").write_text(json.dumps(meta, indent=1))
    final = run_dir / CKPT_DIR
    old = run_dir / f".{CKPT_DIR}.old"
    try:
        fence()
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def tensors_sha256(tensors: Mapping[str, torch.Tensor]) -> str:
    """SHA-256 of CPU tensors: each one's name, dtype, shape and bytes, in name order. The
    bytes are those safetensors stores, so the tensors read back from the file hash alike."""
    h = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy())
    return h.hexdigest()


def read_model_weights(run_dir: Path) -> dict[str, torch.Tensor]:
    """The model's state dict from the run's checkpoint, on the CPU, read alone: the optimizer
    moments and RNG states stay on disk (safetensors reads tensor by tensor). state.json and
    the header are checked, and the weights against their own checksum (MODEL_CHECKSUM); a
    checkpoint written before that checksum existed is verified whole, as before."""
    meta = checkpoint_meta(run_dir)
    name = f"{checkpoint_dir(run_dir).name}/state.safetensors"
    if meta is None:
        if (run_dir / "result.json").exists():  # finished: its checkpoint lost a file since
            raise CorruptRunError(run_dir, f"{CKPT_DIR}/state.json", "is missing (a finished "
                                  "run keeps its final checkpoint)")
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "ckpt/state.json); train it first")
    if meta.get(MODEL_CHECKSUM) is None:
        check_checkpoint(run_dir)
    try:
        with safe_open(str(run_dir / name), framework="pt") as f:
            tensors = {k: f.get_tensor(k) for k in f.keys() if k.startswith(MODEL_PREFIX)}
    except Exception as e:  # noqa: BLE001 - safetensors raises several types for bad data
        raise CorruptRunError(run_dir, name, f"is unreadable ({e})") from None
    if meta.get(MODEL_CHECKSUM) not in (None, tensors_sha256(tensors)):
        raise CorruptRunError(run_dir, name, "does not match the checksum of its model weights "
                              "in state.json (its bytes changed after it was written)")
    return {k.removeprefix(MODEL_PREFIX): v for k, v in tensors.items()}


def has_checkpoint(run_dir: Path) -> bool:
    return (run_dir / CKPT_DIR / "state.json").exists() or (run_dir / f".{CKPT_DIR}.old").exists()


def load_checkpoint(run_dir: Path, config_hash: str, model: nn.Module,
                    optimizer: torch.optim.Optimizer, steps: int) -> int:
    """Restore model, optimizer and RNG states in place; returns the step to continue from. A
    checkpoint without optimizer state (a run's last, save_checkpoint) is only read at the
    run's final step `steps`, where nothing trains."""
    ckpt = checkpoint_dir(run_dir)  # ckpt/, or .ckpt.old/ if killed between the renames
    try:
        meta = json.loads((ckpt / "state.json").read_text())
        same = meta.get(CHECKSUM) in (None, file_sha256(ckpt / "state.safetensors"))
        tensors = load_file(str(ckpt / "state.safetensors"))
    except (OSError, ValueError, SafetensorError, AttributeError) as e:
        raise CheckpointError(f"checkpoint {ckpt} is unreadable ({e}); delete {run_dir} "
                              "to start the run again") from None
    if not same:  # None: a checkpoint written before checksums, read as before
        raise CheckpointError(f"checkpoint {ckpt} does not match its checksum (its bytes "
                              f"changed after it was written); delete {run_dir} to start the "
                              "run again")
    if meta.get("config_hash") != config_hash:
        raise CheckpointError(f"checkpoint {ckpt} belongs to another config; delete {run_dir} "
                              "or use the config it was made with")
    model_sd = {k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")}
    try:
        model.load_state_dict(model_sd, strict=True)
    except RuntimeError as e:
        first = str(e).splitlines()[0]
        raise CheckpointError(f"checkpoint {ckpt} does not match the model ({first}); "
                              f"delete {run_dir} to start again") from None
    if meta["param_groups"] is None and meta["step"] != steps:
        raise CheckpointError(f"checkpoint {ckpt} holds no optimizer state (a finished run's) "
                              f"but is at step {meta['step']} of {steps}; delete {run_dir} to "
                              "train the run again")
    state: dict[int, dict[str, Any]] = {}
    for k, v in tensors.items():
        if k.startswith("optim."):
            _, pid, name = k.split(".", 2)
            state.setdefault(int(pid), {})[name] = v
    for k, v in meta["optim_scalars"].items():
        pid, name = k.split(".", 1)
        state.setdefault(int(pid), {})[name] = v
    if meta["param_groups"] is not None:
        optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    torch.set_rng_state(tensors["rng.torch_cpu"])
    if torch.cuda.is_available():
        cuda = [tensors[f"rng.cuda.{i}"] for i in range(torch.cuda.device_count())
                if f"rng.cuda.{i}" in tensors]
        if cuda:
            torch.cuda.set_rng_state_all(cuda)
    return int(meta["step"])
