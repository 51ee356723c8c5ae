"""Fenced run ownership: every write a trainer makes to a run is conditional on still holding
its lock (locking.RunLock.check), so a process that lost the run (it stalled past the lease and
another process took it over) is refused at its next write, leaves every file as it was and
never removes the folder; and a holder whose pid belongs to another user is alive."""

import json
import os
import platform
import time
from pathlib import Path

import pytest

from reasonlab import locking
from reasonlab.locking import LeaseLost, LockHeld, RunLock, held, lock_path, read_lock
from reasonlab.runs import execute, run_dir_for
from reasonlab.store import write_text_atomic
from reasonlab.train.config import TrainConfig

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 8, "eval_every": 2,
        "ckpt_every": 2}
THIEF = {"host": "node7", "pid": 4242, "started": 0.0, "token": "f" * 32}


def forge(path: Path) -> None:
    """Another process's lock in place of ours: what a takeover leaves."""
    path.write_text(json.dumps(THIEF))


def test_check_refuses_a_forged_token_and_says_who_took_over(tmp_path):
    path = tmp_path / "runs" / ".abc123.lock"
    path.parent.mkdir()
    lock = RunLock(path, heartbeat=100)
    lock.acquire()
    lock.check()  # ours: passes
    forge(path)
    with pytest.raises(LeaseLost, match="run abc123 was taken over by node7 pid 4242") as e:
        lock.check()
    assert "\n" not in str(e.value)
    assert lock.lost
    with pytest.raises(LeaseLost):  # and stays lost
        lock.check()
    lock.release()
    assert read_lock(path) == THIEF  # another's lock is never removed


def test_check_refuses_once_the_lock_is_gone(tmp_path):
    path = tmp_path / ".abc.lock"
    lock = RunLock(path, heartbeat=100)
    lock.acquire()
    path.unlink()  # broken by a waiter, whose run has finished and released it since
    with pytest.raises(LeaseLost, match="taken over by another process"):
        lock.check()
    lock.release()


def test_check_renews_a_lease_whose_heartbeat_is_due(tmp_path):
    path = tmp_path / ".r.lock"
    lock = RunLock(path, heartbeat=0.2)
    lock._try_create()  # held, without the heartbeat thread: only check() renews it
    os.utime(path, (1, 1))
    lock.check()
    assert path.stat().st_mtime == 1  # renewed less than a heartbeat ago: untouched
    time.sleep(0.25)
    lock.check()
    assert path.stat().st_mtime > 1


def test_a_refused_atomic_write_leaves_the_file_as_it_was(tmp_path):
    path = tmp_path / "run.json"
    path.write_text("old")

    def fence() -> None:
        raise LeaseLost("taken over")

    with pytest.raises(LeaseLost):
        write_text_atomic(path, "new", fence)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]  # no temporary file left


def test_train_refuses_to_write_with_a_stale_token(tmp_path):
    from reasonlab.train.loop import train

    config = TrainConfig.build(TINY)
    run_dir = run_dir_for(config, tmp_path)
    run_dir.mkdir(parents=True)
    lock = RunLock(lock_path(run_dir), heartbeat=100)
    lock.acquire()
    forge(lock.path)
    with pytest.raises(LeaseLost):
        train(config, run_dir, quiet=True, fence=lock.check)
    assert list(run_dir.iterdir()) == []  # not one line, not one checkpoint
    lock.release()


def test_save_checkpoint_refused_touches_no_checkpoint(tmp_path):
    import torch

    from reasonlab.train.checkpoint import save_checkpoint

    model = torch.nn.Linear(2, 2)
    save_checkpoint(tmp_path, 2, "h", model, None)
    before = {p.name: p.read_bytes() for p in (tmp_path / "ckpt").iterdir()}
    calls = []

    def fence() -> None:  # refuses its second call: the lease lost while the file was written
        calls.append(1)
        if len(calls) == 2:
            raise LeaseLost("taken over")

    with torch.no_grad():
        model.weight.add_(1)
    with pytest.raises(LeaseLost):
        save_checkpoint(tmp_path, 4, "h", model, None, fence=fence)
    assert {p.name: p.read_bytes() for p in (tmp_path / "ckpt").iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]  # its own temporary folder gone
    theirs = tmp_path / ".ckpt.tmp.theirs"  # the new owner's checkpoint being written
    theirs.mkdir()
    calls[:] = [1]  # now it refuses the first call: not even another's temporary folder goes
    with pytest.raises(LeaseLost):
        save_checkpoint(tmp_path, 4, "h", model, None, fence=fence)
    assert theirs.is_dir()
    assert {p.name: p.read_bytes() for p in (tmp_path / "ckpt").iterdir()} == before


def _ckpt_step(run_dir: Path) -> int:
    try:
        return json.loads((run_dir / "ckpt" / "state.json").read_text())["step"]
    except FileNotFoundError:
        return 0


def _interrupt_at(step: int):
    def fence() -> None:  # a kill once the checkpoint of `step` is written
        if _ckpt_step(fence.run_dir) >= step:
            raise KeyboardInterrupt
    return fence


@pytest.mark.parametrize("resumed", [False, True], ids=["new-run", "resumed-run"])
def test_execute_stops_at_its_next_write_after_a_takeover(tmp_path, monkeypatch, resumed):
    """The run is taken over after this process's first checkpoint: the process that lost it
    writes nothing more (no metrics line, no checkpoint, no run.json, no result.json) and keeps
    the folder, even one it created: its files are the new owner's now."""
    from reasonlab.train.loop import train

    config = TrainConfig.build(TINY)
    run_dir = run_dir_for(config, tmp_path)
    start = 0
    if resumed:  # an interrupted run: checkpoint and metrics of step 4
        fence = _interrupt_at(4)
        fence.run_dir = run_dir
        with pytest.raises(KeyboardInterrupt):
            train(config, run_dir, quiet=True, fence=fence)
        start = _ckpt_step(run_dir)
        assert start == 4
    seen: dict[str, bytes] = {}
    check = RunLock.check

    def spy(self: RunLock) -> None:
        if not seen and _ckpt_step(run_dir) > start:  # another process takes the run over
            forge(self.path)
            seen.update({str(p.relative_to(run_dir)): p.read_bytes()
                         for p in run_dir.rglob("*") if p.is_file()})
        check(self)

    monkeypatch.setattr(RunLock, "check", spy)
    with pytest.raises(LeaseLost, match="node7 pid 4242"):
        execute(config, tmp_path, quiet=True)
    assert run_dir.is_dir(), "the process that lost the run removed its folder"
    now = {str(p.relative_to(run_dir)): p.read_bytes() for p in run_dir.rglob("*")
           if p.is_file()}
    assert now == seen, "the process that lost the run wrote to it"
    assert json.loads(now["run.json"])["status"] == "running"  # not rewritten as partial
    assert read_lock(lock_path(run_dir)) == THIEF


def test_a_live_process_of_another_user_is_alive(tmp_path, monkeypatch):
    """os.kill(pid, 0) raises PermissionError for another user's live process: the lock is
    held, never broken (two writers on a shared store otherwise)."""
    path = tmp_path / "runs" / ".r.lock"
    path.parent.mkdir()
    (tmp_path / "runs" / "r").mkdir()
    holder = {"host": platform.node(), "pid": 31337, "started": time.time(), "token": "x"}
    path.write_text(json.dumps(holder))

    def kill(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(locking.os, "kill", kill)
    with pytest.raises(LockHeld):
        RunLock(path, stale_after=60).acquire(wait=False)
    assert read_lock(path) == holder
    assert held(tmp_path / "runs" / "r") == holder
