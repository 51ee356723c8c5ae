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

A run with frozen parameters (`trainable` set, no mimicking) stores its trained ones alone: the
frozen ones are what the run's initialisation gives (a shipped checkpoint, a pretraining run of
the store, or the seeded random init), never touched by training, so state.json records
instead where they come from and the SHA-256 of their values (FROZEN: `Frozen`), and loading
rebuilds them from the config and checks them against it (init_stages.load_run_model; a resume
has them already). An FPT run at paper scale then keeps its ~1 MB of trained weights, not its
own 540 MB copy of SmolLM2 (the FPT studies: ~240 GB of frozen copies).

The file's checksum is taken from the bytes as they are written (one pass; no re-read).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save
from torch import nn

from reasonlab.errors import CheckpointError
from reasonlab.store import (CHECKSUM, META_CHECKSUM, MODEL_CHECKSUM, CorruptRunError,
                             check_checkpoint, check_safetensors, checkpoint_dir,
                             checkpoint_meta, checkpointed_files, file_sha256, meta_sha256)

if TYPE_CHECKING:
    from reasonlab.train.config import TrainConfig

MODEL_PREFIX = "model."

CKPT_DIR = "ckpt"

FROZEN = "frozen"
"""The key in state.json of a checkpoint that leaves its frozen parameters out (`Frozen`)."""

WEIGHTS_KEPT = "weights_kept"
"""The key in state.json of a finished run's last checkpoint that holds no weights (false):
the run was trained with keep_checkpoints="none" and keeps its metrics alone. Absent in every
other checkpoint (they hold their weights)."""


@dataclass(frozen=True)
class Frozen:
    """The frozen parameters a checkpoint leaves out: their names, the SHA-256 of their values
    (tensors_sha256) and where the run's initialisation took them from."""

    names: tuple[str, ...]
    sha256: str
    source: str

    def meta(self) -> dict[str, Any]:
        return {"names": list(self.names), "sha256": self.sha256, "source": self.source}


def frozen_record(model: nn.Module, config: TrainConfig) -> Frozen | None:
    """The frozen parameters of `model` as the init stages left them, when its checkpoints may
    leave them out: a `trainable` policy and no mimicking (mimicked weights are the product of
    a training of their own, not of the config alone). None otherwise, or when nothing is
    frozen."""
    if config.trainable is None or config.mimic is not None:
        return None
    names = sorted(n for n, p in model.named_parameters() if not p.requires_grad)
    if not names:
        return None
    params = dict(model.named_parameters())
    sha = tensors_sha256({n: params[n].detach().cpu() for n in names})
    return Frozen(tuple(names), sha, frozen_source(config))


def frozen_source(config: TrainConfig) -> str:
    """Where a run's frozen weights come from, as state.json says it."""
    from reasonlab.train.config import config_id

    if config.init_checkpoint is not None:
        return f"checkpoint {config.init_checkpoint}"
    if config.init_run is not None:
        return f"pretraining run {config_id(config.init_run)}"
    return f"random init, seed {config.seed}"


def save_checkpoint(run_dir: Path, step: int, config_hash: str, model: nn.Module,
                    optimizer: torch.optim.Optimizer | None, frozen: Frozen | None = None,
                    fence: Callable[[], None] = lambda: None, weights: bool = True) -> None:
    """Write the checkpoint of `step`; `optimizer` None at a run's final step (module doc);
    `frozen` (frozen_record): parameters left out and recorded instead. `weights` False (the
    end of a run with keep_checkpoints="none"): no model weights either, only the record
    (step, the checksums of config.json and metrics.jsonl) that a finished run's result.json
    and a resume verify; it replaces the run's last checkpoint, so the run keeps no weights.
    `fence` (train()'s) is called before the folder is touched and again before the
    renames."""
    skip = set(frozen.names) if frozen is not None else set()
    tensors: dict[str, torch.Tensor] = {
        f"{MODEL_PREFIX}{k}": v.detach().cpu().contiguous()
        for k, v in model.state_dict().items() if k not in skip
    } if weights else {}
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
    if frozen is not None and weights:
        meta[FROZEN] = frozen.meta()
    if not weights:
        meta[WEIGHTS_KEPT] = False
    # metrics.jsonl as of this step (its line of `step` is written before the checkpoint) and
    # config.json: a resume then verifies the lines it keeps and builds the result from
    meta.update(checkpointed_files(run_dir))
    fence()
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in run_dir.glob(f".{CKPT_DIR}.tmp*"):  # left by a killed writer of this run
        shutil.rmtree(stale, ignore_errors=True)
    data = save(tensors)  # the bytes save_file writes
    # the file's checksum, from the bytes written: a flipped byte in the tensors is then
    # detected before it is used
    meta[CHECKSUM] = hashlib.sha256(data).hexdigest()
    meta = json.loads(json.dumps(meta))  # as it reads back (tuples as lists), then its checksum
    meta[META_CHECKSUM] = meta_sha256(meta)
    state = json.dumps(meta, indent=1)
    tmp = None
    try:
        tmp = Path(tempfile.mkdtemp(dir=run_dir, prefix=f".{CKPT_DIR}.tmp."))  # never shared
        tmp.chmod(0o755)  # mkdtemp's 0700 would hide ckpt/ from a shared store's other users
        with open(tmp / "state.safetensors", "wb") as f:
            f.write(data)
        (tmp / "state.json").write_text(state)
        fence()
    except BaseException as e:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise disk_full(run_dir, step, len(data) + len(state)) from None
        raise
    size = len(data)
    del data
    final = run_dir / CKPT_DIR
    old = run_dir / f".{CKPT_DIR}.old"
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(tmp, final)
    # the previous checkpoint goes once the new one reads back whole (its header, its size)
    check_safetensors(run_dir, f"{CKPT_DIR}/state.safetensors")
    if (final / "state.safetensors").stat().st_size == size:
        shutil.rmtree(old, ignore_errors=True)


def disk_full(run_dir: Path, step: int, need: int) -> CheckpointError:
    """The one-line error of a checkpoint that did not fit on the disk (nothing of it is left;
    the previous checkpoint is intact)."""
    try:
        free = f"{shutil.disk_usage(run_dir).free / 1e6:,.1f} MB free"
    except OSError:
        free = "free space unknown"
    return CheckpointError(
        f"no space left to write the checkpoint of step {step} into {run_dir / CKPT_DIR}: it "
        f"needs {need / 1e6:,.1f} MB ({free}); free some space and run the same command again "
        "(the run resumes from its previous checkpoint)")


def settle_checkpoint(run_dir: Path, fence: Callable[[], None] = lambda: None) -> None:
    """Before a resume (its checkpoint verified by store.check_partial): a writer killed
    between save_checkpoint's renames left the previous checkpoint as `.ckpt.old`, which
    becomes ckpt/ again; one killed after them left `.ckpt.old` beside a whole ckpt/, which
    goes. `fence` before either."""
    old = run_dir / f".{CKPT_DIR}.old"
    if not old.exists():
        return
    fence()
    final = run_dir / CKPT_DIR
    if checkpoint_dir(run_dir) == final:
        shutil.rmtree(old, ignore_errors=True)
    else:
        shutil.rmtree(final, ignore_errors=True)
        os.replace(old, final)


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
    if meta.get(WEIGHTS_KEPT) is False:
        raise CheckpointError(no_weights(run_dir))
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


def no_weights(run_dir: Path) -> str:
    """What a reader of a run trained with keep_checkpoints="none" is told."""
    return (f"run {run_dir.name} kept no weights (it was trained with keep_checkpoints=none: "
            "its metrics alone are stored); train it without keep_checkpoints=none to read "
            "its model")


def load_weights(model: nn.Module, weights: Mapping[str, torch.Tensor],
                 frozen: Mapping[str, Any] | None) -> None:
    """Load a checkpoint's model weights into `model`. With `frozen` (state.json's FROZEN
    record) the parameters it names are left as `model` holds them (its initialisation, rebuilt)
    and must hash to the recorded SHA-256; every other one must be in `weights`.
    RuntimeError / ValueError (first line: what differs) otherwise."""
    if frozen is None:
        model.load_state_dict(weights, strict=True)
        return
    names = list(frozen.get("names", []))
    missing, unexpected = model.load_state_dict(weights, strict=False)
    if set(missing) != set(names) or unexpected:
        raise ValueError(f"weights missing {sorted(set(missing) - set(names))[:3]}, "
                         f"unexpected {list(unexpected)[:3]}")
    params = dict(model.named_parameters())
    if tensors_sha256({n: params[n].detach().cpu() for n in names}) != frozen.get("sha256"):
        raise ValueError(f"the frozen weights rebuilt from {frozen.get('source')} are not "
                         "those the run trained with (their SHA-256 differs)")


def frozen_meta(run_dir: Path) -> dict[str, Any] | None:
    """The FROZEN record of the run's checkpoint, None when it stores every parameter."""
    meta = checkpoint_meta(run_dir)
    record = meta.get(FROZEN) if meta is not None else None
    return record if isinstance(record, dict) else None


INIT_DIR = "init"
"""The folder of a mimicking run's step-0 model (save_initial): what its training started from."""


def save_initial(run_dir: Path, model: nn.Module) -> None:
    """Write the model a run starts training from into `init/` (safetensors + state.json with
    the file's SHA-256), atomically. train() keeps it for mimicking runs: the mimicked heads are
    the product of a training of their own (1,000 steps through MiniLM at paper scale), made
    where the run trained, so an analysis reads them rather than redoing it on the CPU."""
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    data = save(tensors)
    tmp = Path(tempfile.mkdtemp(dir=run_dir, prefix=f".{INIT_DIR}.tmp."))
    tmp.chmod(0o755)
    with open(tmp / "state.safetensors", "wb") as f:
        f.write(data)
    (tmp / "state.json").write_text(json.dumps({CHECKSUM: hashlib.sha256(data).hexdigest()}))
    final = run_dir / INIT_DIR
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)


def read_initial(run_dir: Path) -> dict[str, torch.Tensor] | None:
    """The weights save_initial kept (checked against their checksum), None if none were."""
    folder = run_dir / INIT_DIR
    if not (folder / "state.json").is_file():
        return None
    try:
        want = json.loads((folder / "state.json").read_text())[CHECKSUM]
        same = want == file_sha256(folder / "state.safetensors")
        tensors = load_file(str(folder / "state.safetensors"))
    except (OSError, ValueError, KeyError, TypeError, SafetensorError) as e:
        raise CorruptRunError(run_dir, f"{INIT_DIR}/state.safetensors", f"is unreadable ({e})"
                              ) from None
    if not same:
        raise CorruptRunError(run_dir, f"{INIT_DIR}/state.safetensors", "does not match the "
                              "checksum in init/state.json (its bytes changed after it was "
                              "written)")
    return tensors


def kept_weights(run_dir: Path) -> bool:
    """Whether the run's checkpoint holds weights: every one does but the record a run
    trained with keep_checkpoints="none" ends with (WEIGHTS_KEPT)."""
    meta = checkpoint_meta(run_dir)
    return meta is None or meta.get(WEIGHTS_KEPT) is not False


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
    if meta.get(WEIGHTS_KEPT) is False:
        # the record a run with keep_checkpoints="none" ends with: nothing to restore, and
        # nothing to train (train() checks that the run ended at its step)
        return int(meta["step"])
    model_sd = {k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")}
    try:
        load_weights(model, model_sd, meta.get(FROZEN))
    except (RuntimeError, ValueError) as e:
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


RECORD_BYTES = 8_000
"""About what the record a keep_checkpoints="none" run ends with takes: its state.json and a
safetensors file holding the RNG state alone (~6 kB measured; tests/unit/test_plan_launch.py)."""


@dataclass(frozen=True)
class CheckpointSizes:
    """What a run's checkpoints take on disk, from the shapes alone: fp32 weights, all of them
    or the trained ones alone (frozen_record's rule), plus Adam's two moments of the trained
    ones in a checkpoint written before the run's last step."""

    writes: int
    """Checkpoints the run writes: one every ckpt_every steps and one at its end (a run that
    stops early at `stop_at` writes fewer)."""
    mid: int
    """Bytes of one checkpoint written before the last step (weights and moments: a resume
    needs both)."""
    kept: int
    """Bytes the finished run keeps: its last checkpoint (the final weights, no moments; with
    `stop_at`, at most a mid-run one's, as it may stop before its last step), or RECORD_BYTES
    with keep_checkpoints="none"."""
    peak: int
    """The most its checkpoints take at once while it trains: a checkpoint is written beside
    the one it replaces, which goes once the new one reads back whole (save_checkpoint), so
    two mid-run ones, or the last one and the mid-run one before it."""
    written: int
    """Bytes written over the whole run, every checkpoint counted."""
    initial: int = 0
    """Bytes of a mimicking run's step-0 model (`init/`, save_initial: every weight), written
    before its first step and kept for its analyses whatever keep_checkpoints says; counted
    in kept, peak and written."""


def checkpoint_sizes(config: TrainConfig, model: nn.Module | None = None) -> CheckpointSizes:
    """The run's CheckpointSizes. `model`: the run's model on the meta device, if the caller
    has it (else built here)."""
    total, trained, stored = param_counts(config, model)
    mid = 4 * (stored + 2 * trained)
    last = 4 * stored
    if config.stop_at is not None:  # stopped before its last step, it keeps its moments too
        last = mid
    if config.keep_checkpoints == "none":
        last = RECORD_BYTES
    before = (config.steps - 1) // config.ckpt_every  # checkpoints before the last step
    peak = max(last, mid + last if before >= 1 else 0, 2 * mid if before >= 2 else 0)
    initial = 4 * total if config.mimic is not None else 0
    return CheckpointSizes(writes=before + 1, mid=mid, kept=last + initial,
                           peak=peak + initial, written=before * mid + last + initial,
                           initial=initial)


def checkpoint_bytes(config: TrainConfig, model: nn.Module | None = None) -> tuple[int, int]:
    """(bytes the finished run keeps, the most its checkpoints take while it trains): the
    `kept` and `peak` of checkpoint_sizes."""
    sizes = checkpoint_sizes(config, model)
    return sizes.kept, sizes.peak


def param_counts(config: TrainConfig, model: nn.Module | None = None) -> tuple[int, int, int]:
    """(parameters, trained ones, stored ones) of the run's model, from the shapes (`model` as
    for checkpoint_bytes)."""
    key = (config.model.model_dump_json(), str(config.trainable), config.mimic is None)
    if key not in _SIZES:
        if model is None:
            from reasonlab.model import MODELS

            with torch.device("meta"):
                model = MODELS[config.model.arch.name](config.model)
        params = list(model.parameters())
        total = sum(p.numel() for p in params)
        trained = total
        if config.trainable is not None:
            config.trainable.apply(model)
            trained = sum(p.numel() for p in params if p.requires_grad)
        stored = trained if config.trainable is not None and config.mimic is None else total
        _SIZES[key] = (total, trained, stored)
    return _SIZES[key]


_SIZES: dict[tuple[str, str, bool], tuple[int, int, int]] = {}
