"""A damaged run folder is never reused, resumed or listed as finished: `runs`, `runs show`
and `runs gc` agree that it is damaged, and the command that needs it fails with one line."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from reasonlab.cli import main
from reasonlab.errors import CheckpointError
from reasonlab.runs import execute, load_result, load_run_model
from reasonlab.store import CorruptRunError, inspect_run, scan
from reasonlab.train.config import TrainConfig

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 4, "eval_every": 2,
        "ckpt_every": 2}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("store")
    execute(TrainConfig.build(TINY), root, quiet=True)
    return root


def edit_result(fn: Callable[[dict], None]) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        data = json.loads((run / "result.json").read_text())
        fn(data)
        (run / "result.json").write_text(json.dumps(data))
    return damage


def cut_last_metrics_line(run: Path) -> None:
    (run / "result.json").unlink()
    lines = (run / "metrics.jsonl").read_text().splitlines()
    (run / "metrics.jsonl").write_text("".join(x + "\n" for x in lines[:-1]))


def empty_metrics(run: Path) -> None:
    (run / "result.json").unlink()
    (run / "metrics.jsonl").write_text("")


def flip_tensor_byte(run: Path) -> None:
    path = run / "ckpt" / "state.safetensors"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01  # in the tensor data, past the header: the header still parses
    path.write_bytes(bytes(data))


def flip_tensor_byte_partial(run: Path) -> None:
    (run / "result.json").unlink()
    flip_tensor_byte(run)


CASES = {
    "result-gone-metrics-cut": (cut_last_metrics_line, "metrics.jsonl"),
    "result-gone-metrics-empty": (empty_metrics, "metrics.jsonl"),
    "result-no-final-acc": (edit_result(lambda d: d["final"].pop("acc")), "final.acc"),
    "result-no-acc-by-depth": (edit_result(lambda d: d["final"].pop("acc_by_depth")),
                               "final.acc_by_depth"),
    "result-empty-curve": (edit_result(lambda d: d.update(curve=[])), "curve"),
    "result-unreadable": (lambda run: (run / "result.json").write_text("{oops"),
                          "result.json"),
    "ckpt-empty": (lambda run: shutil.rmtree(run / "ckpt"), "state.safetensors"),
    "ckpt-state-json-gone": (lambda run: (run / "ckpt" / "state.json").unlink(),
                             "state.json is missing"),
    "ckpt-byte-flipped": (flip_tensor_byte, "checksum"),
    "ckpt-byte-flipped-partial": (flip_tensor_byte_partial, "checksum"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_damaged_run_is_never_reused_nor_listed_finished(name, finished, tmp_path, capsys):
    damage, needle = CASES[name]
    store = tmp_path / "store"
    shutil.copytree(finished, store)
    run = next(p for p in (store / "runs").iterdir() if p.is_dir())
    damage(run)
    # the status is the same whichever way it is read
    (listed,) = scan(store)
    assert listed.status == "corrupt" and needle in listed.problem, listed
    assert inspect_run(run).status == "corrupt"
    assert main(["runs", "--out", str(store)]) == 0
    assert "corrupt" in capsys.readouterr().out
    assert main(["runs", "show", run.name, "--out", str(store)]) == 0
    assert "corrupt" in capsys.readouterr().out
    # never reused, never resumed: one error line naming the file
    before = sorted((p.name, p.stat().st_size) for p in run.rglob("*") if p.is_file())
    with pytest.raises(CheckpointError, match="damaged|checksum|lacks"):
        load_result(run) if (run / "result.json").exists() else None
        execute(TrainConfig.build(TINY), store, quiet=True)
    assert sorted((p.name, p.stat().st_size) for p in run.rglob("*") if p.is_file()) == before


def test_old_checkpoints_without_checksums_still_load(finished, tmp_path):
    """A run written before checkpoints carried checksums is read as before."""
    store = tmp_path / "store"
    shutil.copytree(finished, store)
    run = next(p for p in (store / "runs").iterdir() if p.is_dir())
    meta = json.loads((run / "ckpt" / "state.json").read_text())
    assert "sha256" in meta and "model_sha256" in meta
    for key in ("sha256", "model_sha256", "metrics_sha256", "config_sha256", "state_sha256"):
        del meta[key]
    (run / "ckpt" / "state.json").write_text(json.dumps(meta))
    result = json.loads((run / "result.json").read_text())
    del result["sha256"]  # nor did result.json record the checksums of the files
    (run / "result.json").write_text(json.dumps(result))
    record = json.loads((run / "run.json").read_text())
    del record["files"]
    (run / "run.json").write_text(json.dumps(record))
    assert load_result(run) is not None and scan(store)[0].status == "finished"
    assert load_run_model(run)[0] == TrainConfig.build(TINY)
    (run / "result.json").unlink()  # and it resumes (at its last step) to the same result
    result = execute(TrainConfig.build(TINY), store, quiet=True)
    assert result["final"] == json.loads((finished / "runs" / run.name / "result.json")
                                         .read_text())["final"]


# ----------------------------------------------------------------------------- analysis

def tensor_span(path: Path, name: str) -> tuple[int, int]:
    """Where a tensor's bytes lie in a safetensors file: [start, end) from the file's start
    (8 bytes of header length, the JSON header, then the data)."""
    n = int.from_bytes(path.read_bytes()[:8], "little")
    start, end = json.loads(path.read_bytes()[8:8 + n])[name]["data_offsets"]
    return 8 + n + start, 8 + n + end


def flip_byte_of(run: Path, tensor: str) -> None:
    path = run / "ckpt" / "state.safetensors"
    data = bytearray(path.read_bytes())
    data[tensor_span(path, tensor)[0]] ^= 0x01
    path.write_bytes(bytes(data))


def test_analysis_loads_the_model_weights_alone(finished, tmp_path, monkeypatch):
    """Loading a finished run for analysis reads its model weights (checked against their own
    checksum) and neither reads nor hashes the optimizer moments and RNG states: for a
    BERT-base run with Adam that is 1.3 GB less per load. Reuse and resume still verify the
    whole checkpoint."""
    import safetensors

    import reasonlab.store as store_module
    import reasonlab.train.checkpoint as checkpoint

    store = tmp_path / "store"
    shutil.copytree(finished, store)
    run = next(p for p in (store / "runs").iterdir() if p.is_dir())
    path = run / "ckpt" / "state.safetensors"
    saved = load_file(str(path))
    # a finished run's last checkpoint: weights and RNG states, no optimizer moments
    assert not any(k.startswith("optim.") for k in saved) and "rng.torch_cpu" in saved

    read, hashed = [], []

    class Spy:  # what load_run_model takes out of the file
        def __init__(self, *a, **kw):
            self.f = safetensors.safe_open(*a, **kw)

        def __enter__(self):
            self.f.__enter__()
            return self

        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

        def keys(self):
            return self.f.keys()

        def get_tensor(self, key):
            read.append(key)
            return self.f.get_tensor(key)

    monkeypatch.setattr(checkpoint, "safe_open", Spy)
    real_sha256 = store_module.file_sha256
    monkeypatch.setattr(store_module, "file_sha256", lambda p: hashed.append(p) or
                        real_sha256(p))
    config, model = load_run_model(run)
    assert read and all(k.startswith("model.") for k in read)
    assert sorted(read) == sorted(k for k in saved if k.startswith("model."))
    # the small files result.json's checksums cover are verified; the tensors' file is not
    assert sorted(Path(p).name for p in hashed) == ["config.json", "metrics.jsonl",
                                                    "state.json"]
    assert all(torch.equal(v, saved[f"model.{k}"]) for k, v in model.state_dict().items())
    monkeypatch.undo()

    # the RNG state gone from the file: analysis loads the same weights, reuse refuses
    save_file({k: v for k, v in saved.items() if k.startswith("model.")}, str(path))
    _, again = load_run_model(run)
    assert all(torch.equal(v, saved[f"model.{k}"]) for k, v in again.state_dict().items())
    with pytest.raises(CheckpointError, match="checksum"):
        load_result(run)

    # a damaged weight is caught by analysis too, in one line naming the file
    save_file(saved, str(path))
    flip_byte_of(run, next(k for k in saved if k.startswith("model.")))
    with pytest.raises(CorruptRunError, match="state.safetensors does not match the checksum "
                       "of its model weights"):
        load_run_model(run)


def test_a_last_checkpoint_is_never_resumed_mid_run(finished, tmp_path):
    """The final step's checkpoint holds no optimizer state, so it cannot continue a run: one
    put where a mid-run checkpoint belongs (state.json claiming step 2 of 4) is refused in one
    line, never trained on with fresh Adam moments."""
    store = tmp_path / "store"
    shutil.copytree(finished, store)
    run = next(p for p in (store / "runs").iterdir() if p.is_dir())
    meta = json.loads((run / "ckpt" / "state.json").read_text())
    assert meta["step"] == 4 and meta["param_groups"] is None and meta["optim_scalars"] == {}
    for key in ("metrics_sha256", "state_sha256"):  # an older checkpoint's: else the edit
        meta.pop(key)                                # and the cut metrics fail first
    (run / "ckpt" / "state.json").write_text(json.dumps({**meta, "step": 2}))
    (run / "result.json").unlink()
    lines = (run / "metrics.jsonl").read_text().splitlines()
    (run / "metrics.jsonl").write_text(lines[0] + "\n")
    with pytest.raises(CheckpointError, match="holds no optimizer state .* at step 2 of 4"):
        execute(TrainConfig.build(TINY), store, quiet=True)


def test_gc_removes_a_linked_run_folder_not_its_target(finished, tmp_path, capsys):
    store = tmp_path / "store"
    shutil.copytree(finished, store)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(next(p for p in (store / "runs").iterdir() if p.is_dir()), elsewhere)
    (elsewhere / "result.json").write_text("{oops")  # damaged: a gc candidate
    (store / "runs" / "0123456789ab").symlink_to(elsewhere)
    assert main(["runs", "gc", "--yes", "--out", str(store)]) == 0
    assert not (store / "runs" / "0123456789ab").exists()
    assert (elsewhere / "result.json").read_text() == "{oops"  # the target is untouched


def test_a_finished_run_without_state_json_is_damaged_and_collected(finished, tmp_path,
                                                                     capsys):
    """Not "train it first" (it finished): its analysis names the missing file, and gc
    removes it."""
    store = tmp_path / "store"
    shutil.copytree(finished, store)
    run = next(p for p in (store / "runs").iterdir() if p.is_dir())
    (run / "ckpt" / "state.json").unlink()
    with pytest.raises(CorruptRunError, match="ckpt/state.json is missing"):
        load_run_model(run)
    assert main(["runs", "gc", "--yes", "--out", str(store)]) == 0
    assert "removed 1 run folders" in capsys.readouterr().out
    assert not run.exists()


def _dead_pid() -> int:
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                       capture_output=True, text=True)
    return int(p.stdout)


def test_a_stale_lock_beside_a_finished_run_goes(finished, tmp_path, capsys):
    """A process killed between writing result.json and releasing its lock leaves the lock:
    gc removes it (a live one stays), and so does the next command that reuses the run."""
    import os
    import platform
    import time

    from reasonlab.locking import RunLock, read_lock

    store = tmp_path / "store"
    shutil.copytree(finished, store)
    run = next(p for p in (store / "runs").iterdir() if p.is_dir())
    lock = store / "runs" / f".{run.name}.lock"
    dead = {"host": platform.node(), "pid": _dead_pid(), "started": time.time(), "token": "t"}
    lock.write_text(json.dumps(dead))
    gone = store / "runs" / ".0123456789ab.lock"  # beside a folder removed since
    gone.write_text(json.dumps({"host": "node7", "pid": 1, "token": "u"}))
    old = time.time() - 3600  # no heartbeat for an hour
    os.utime(gone, (old, old))
    live = RunLock(store / "runs" / ".fedcba987654.lock")
    live.acquire()
    try:
        assert main(["runs", "gc", "--yes", "--out", str(store)]) == 0
        assert "removed 2 stale lock files" in capsys.readouterr().out
        assert not lock.exists() and not gone.exists()
        assert read_lock(live.path)["token"] == live.token
    finally:
        live.release()
    lock.write_text(json.dumps(dead))
    execute(TrainConfig.build(TINY), store, quiet=True)  # reuses the run, clears its lock
    assert not lock.exists()
