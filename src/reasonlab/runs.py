"""Runs: content-addressed directories; finished runs are reused, interrupted ones resumed.

A run's id is `config_id` (train/config.py, beside TrainConfig, so that the training loop can
key its checkpoints by it without importing this module): it hashes the values of the resolved
config that differ from their defaults (plus the task's name, which is every task config's
default), together with RESULTS_VERSION. So adding a new config field with a default that keeps
old behaviour keeps every existing run id; bump RESULTS_VERSION (train/config.py) whenever a
code change alters results or a default changes meaning, so that old run directories are not
silently reused.
"""

from __future__ import annotations

import contextlib
import errno
import json
import shutil
from pathlib import Path
from typing import Any

from reasonlab.errors import CheckpointError, ConfigError, ReasonlabError
from reasonlab.locking import LeaseLost, LockHeld, RunLock, clear_stale, held, lock_path
from reasonlab.store import (
    CONFIG_CHECKSUM,
    RESULT_CHECKSUMS,
    RunRecord,
    check_partial,
    checkpoint_meta,
    flatten,
    last_start,
    make_dirs,
    read_result,
    remove_empty,
    result_checksums,
    write_json_atomic,
)
from reasonlab.tracking import TrackerConfig, backfill, hparams, open_sink
from reasonlab.train.config import RESULTS_VERSION, TrainConfig, config_id
# below train.loop, so that loading a run's model (init stages: `init_from`) imports no cycle
from reasonlab.train.init_stages import load_run_model
from reasonlab.train.run_files import run_dir_for

__all__ = ["RESULTS_VERSION", "check_runs", "config_id", "execute", "execute_if_free",
           "load_result", "load_run_model", "run_dir_for"]

def load_result(run_dir: Path) -> dict[str, Any] | None:
    """The checked result.json of a finished run, or None (see store.read_result): reused only
    if its checkpoint is whole too (checksum verified)."""
    return read_result(run_dir, verify=True)


def check_device(config: TrainConfig, executor: str = "local") -> None:
    """device=cuda on a machine without CUDA fails before anything is written. Under Ray or
    SLURM the runs train on the cluster's nodes, not here: a driver or login node without a
    GPU may send device=cuda runs to GPU nodes (execution.ray_resources checks the Ray cluster
    has some; each SLURM task checks its own node)."""
    from reasonlab.train.device import check_available  # imports torch: only when checking

    if executor not in ("ray", "slurm"):
        check_available(config.device)


def check_runs(configs: list[TrainConfig], root: Path, executor: str = "local") -> None:
    """Fail with one line before anything trains: a device this machine lacks (under Ray the
    cluster's nodes train, so check_device leaves that to the executor), or a damaged run
    folder among those the configs reuse or resume (a study's runs, a sweep's)."""
    for c in configs:
        check_device(c, executor)
        run_dir = run_dir_for(c, root)
        # a run another process trains right now changes under us: its trainer checks it
        if load_result(run_dir) is None and held(run_dir) is None:
            check_partial(run_dir)


def execute(config: TrainConfig, root: Path, quiet: bool = False, desc: str | None = None,
            position: int | None = None, tracker: TrackerConfig | None = None
            ) -> dict[str, Any]:
    """Run `config` under `root/runs/<id>` unless it already finished; return its result.
    A run another process trains is waited for, then reused.

    Everything resuming reads is checked first, so a damaged folder fails with one line before
    it is touched; a user error raised while starting a run that did not exist before removes
    the folder again (nothing half-written is left behind). `tracker` (tracking.py) mirrors
    the metrics the run logs."""
    result = _execute(config, root, quiet, desc, position, tracker, wait=True)
    if result is None:  # never: waiting ends with the run's result
        raise RuntimeError(f"run {run_dir_for(config, root).name} has no result")
    return result


def execute_if_free(config: TrainConfig, root: Path, quiet: bool = False,
                    desc: str | None = None, position: int | None = None,
                    tracker: TrackerConfig | None = None) -> dict[str, Any] | None:
    """`execute`, except that a run another live process holds (or whose pretraining run one
    holds) is not waited for: None at once, nothing touched. Several commands on one study
    and store thus each train the runs no other one has taken (execution.execute_all), and
    wait only at the end for the rest."""
    return _execute(config, root, quiet, desc, position, tracker, wait=False)


def _execute(config: TrainConfig, root: Path, quiet: bool, desc: str | None,
             position: int | None, tracker: TrackerConfig | None, wait: bool
             ) -> dict[str, Any] | None:
    run_dir = run_dir_for(config, root)
    done = load_result(run_dir)
    if done is not None:
        clear_stale(lock_path(run_dir))  # left by a process killed after it finished the run
        if tracker is not None:
            backfill(tracker, run_dir, done["curve"], hparams(config))
        return done
    if config.init_run is not None:  # its initialisation first: trained once, then reused
        if _execute(config.init_run, root, quiet, f"pretraining for {desc or 'run'}", position,
                    tracker, wait) is None:
            return None
    check_device(config)
    parents = make_dirs(run_dir.parent)  # <root>/runs: the lock file lies there
    lock = RunLock(lock_path(run_dir))
    try:
        lock.acquire(wait=wait,
                     on_wait=None if quiet else lambda holder: _waiting(run_dir, holder))
    except LockHeld:  # another live process trains it: this one takes another run
        return None
    try:
        done = load_result(run_dir)  # another process may have finished it while we waited
        if done is not None:
            return done
        return _train_locked(config, run_dir, lock, quiet, desc, position, tracker)
    except ReasonlabError:
        lock.release()
        remove_empty(parents)  # a user error on a new store leaves no empty runs/ behind
        raise
    finally:
        lock.release()


def _waiting(run_dir: Path, holder: dict[str, Any] | None) -> None:
    import sys

    who = f"{holder.get('host')} pid {holder.get('pid')}" if holder else "another process"
    print(f"run {run_dir.name} is being trained by {who}; waiting for it to finish",
          file=sys.stderr)


def _train_locked(config: TrainConfig, run_dir: Path, lock: RunLock, quiet: bool,
                  desc: str | None, position: int | None, tracker: TrackerConfig | None
                  ) -> dict[str, Any]:
    """Train or resume the run while this process holds its lock."""
    from reasonlab.train.checkpoint import settle_checkpoint
    from reasonlab.train.device import where_it_runs
    from reasonlab.train.loop import read_metrics, train

    # Every write below is fenced (lock.check, locking.py): a process that stalled past its
    # lease and lost the run to another stops at its next write, and never removes the folder.
    step = check_partial(run_dir)  # with the metrics lines and config.json it checkpointed
    where = where_it_runs(config.device, config.dtype, config.deterministic,
                          config.compile_mode if config.compile else "off")
    if step:
        check_same_place(run_dir, where)
        settle_checkpoint(run_dir, fence=lock.check)  # no .ckpt.old is left beside it
    lock.check()
    created = make_dirs(run_dir)
    try:
        # a resume keeps the config.json its checkpoint verified (a rewrite in a newer
        # schema would no longer match the checksum the checkpoint recorded)
        if not (step and CONFIG_CHECKSUM in (checkpoint_meta(run_dir) or {})):
            write_json_atomic(run_dir / "config.json", config.model_dump(mode="json"),
                              fence=lock.check)
        record = RunRecord(run_dir, run_dir.name, config.task.name,
                           flatten(config.model_dump(mode="json", exclude_defaults=True)), step,
                           where, fence=lock.check)
    except OSError as e:
        _discard(run_dir, created, lock)
        raise ConfigError(f"cannot write into {run_dir} ({e.strerror})") from None
    sink = open_sink(tracker, run_dir, hparams(config)) if tracker is not None else None
    try:
        final = train(config, run_dir, quiet=quiet, desc=desc, position=position,
                      fence=lock.check, sink=sink)
        lock.check()
    except LeaseLost:
        raise  # the run is another process's now: nothing of it is touched
    except Exception as e:
        user = (e if isinstance(e, ReasonlabError)
                else out_of_memory(e) or nondeterministic_op(e) or disk_full(e, run_dir))
        if user is None:  # a bug: recorded, and its traceback shown
            with contextlib.suppress(LeaseLost):
                record.end("failed", error=f"{type(e).__name__}: {e}".splitlines()[0][:300])
            raise
        # a user error while starting leaves nothing behind; one after a checkpoint (a full
        # disk) keeps it, to resume from
        if created and not (run_dir / "ckpt").is_dir():
            _discard(run_dir, created, lock)
        else:
            record.end("partial")
        raise user from None
    finally:
        if sink is not None:
            sink.close()
    result = {"id": run_dir.name, "final": final, "curve": read_metrics(run_dir)}
    # JSON's own view of the values (tuples read back as lists), which the checksum covers
    result = json.loads(json.dumps(result))
    result[RESULT_CHECKSUMS] = result_checksums(run_dir, result)
    write_json_atomic(run_dir / "result.json", result, indent=None, fence=lock.check)
    record.end("finished", step=final.get("step"), acc=final.get("acc"))
    return result


def check_same_place(run_dir: Path, where: dict[str, str]) -> None:
    """A run resumes where it started: on the same kind of device in the same precision (a CPU
    fp32 run resumed on a GPU in bf16 would mix two computations under one id). Runs whose
    run.json predates the record resume as before."""
    last = last_start(run_dir)
    for key in ("device", "precision"):
        if key in last and last[key] != where[key]:
            raise CheckpointError(
                f"run {run_dir.name} started with {key}={last[key]} and would resume with "
                f"{key}={where[key]}; resume it where it started (--device / --dtype), or "
                f"delete {run_dir} to train it again here")


def _discard(run_dir: Path, created: list[Path], lock: RunLock) -> None:
    """Remove a run folder this command created, and the empty parents it created with it,
    while this process still holds the run (raises LeaseLost, removing nothing, if not)."""
    if created:
        lock.check()
        shutil.rmtree(run_dir, ignore_errors=True)
        remove_empty(created[1:])


def nondeterministic_op(e: BaseException) -> ConfigError | None:
    """An op without a deterministic CUDA kernel under deterministic='strict' (a user
    choice: train/device.py), or None."""
    from reasonlab.train.device import nondeterministic_op as translate

    return translate(e)


def disk_full(e: BaseException, run_dir: Path) -> ConfigError | None:
    """A write into the run that found its disk full (a metrics line, run.json), or None; a
    checkpoint says how much it needs itself (train/checkpoint.disk_full)."""
    if not (isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)):
        return None
    return ConfigError(f"no space left on the device to write {e.filename or run_dir}; free "
                       "some space and run the same command again (the run resumes from its "
                       "last checkpoint)")


def out_of_memory(e: BaseException) -> ConfigError | None:
    """An allocation the machine cannot make (an impossible size: a user error), or None."""
    text = str(e)
    if not (isinstance(e, MemoryError) or "can't allocate memory" in text
            or "out of memory" in text.lower()):
        return None
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    first = first.split("DefaultCPUAllocator: ")[-1][:160]
    return ConfigError(f"not enough memory for this run ({first}); lower the model size "
                       "(d_model, n_layers, d_mlp), batch_size, or n_train / n_test")
