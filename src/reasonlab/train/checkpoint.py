"""Checkpoints: tensors in safetensors, everything else in JSON. Never pickle.

A checkpoint is a directory `ckpt/` holding `state.safetensors` (model, optimizer moments,
RNG states) and `state.json` (step, config hash, optimizer scalars). It is written into a
temporary directory and renamed into place, so a run killed mid-write leaves the previous
checkpoint intact.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from reasonlab.errors import CheckpointError
from reasonlab.store import CHECKSUM, file_sha256

CKPT_DIR = "ckpt"


def save_checkpoint(run_dir: Path, step: int, config_hash: str, model: nn.Module,
                    optimizer: torch.optim.Optimizer) -> None:
    tensors: dict[str, torch.Tensor] = {
        f"model.{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()
    }
    opt = optimizer.state_dict()
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
    }
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
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def has_checkpoint(run_dir: Path) -> bool:
    return (run_dir / CKPT_DIR / "state.json").exists() or (run_dir / f".{CKPT_DIR}.old").exists()


def load_checkpoint(run_dir: Path, config_hash: str, model: nn.Module,
                    optimizer: torch.optim.Optimizer) -> int:
    """Restore model, optimizer and RNG states in place; returns the step to continue from."""
    ckpt = run_dir / CKPT_DIR
    if not (ckpt / "state.json").exists() and (run_dir / f".{CKPT_DIR}.old").exists():
        ckpt = run_dir / f".{CKPT_DIR}.old"  # killed between the two renames
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
    state: dict[int, dict[str, Any]] = {}
    for k, v in tensors.items():
        if k.startswith("optim."):
            _, pid, name = k.split(".", 2)
            state.setdefault(int(pid), {})[name] = v
    for k, v in meta["optim_scalars"].items():
        pid, name = k.split(".", 1)
        state.setdefault(int(pid), {})[name] = v
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    torch.set_rng_state(tensors["rng.torch_cpu"])
    if torch.cuda.is_available():
        cuda = [tensors[f"rng.cuda.{i}"] for i in range(torch.cuda.device_count())
                if f"rng.cuda.{i}" in tensors]
        if cuda:
            torch.cuda.set_rng_state_all(cuda)
    return int(meta["step"])
