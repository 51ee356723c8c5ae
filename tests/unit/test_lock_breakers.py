"""A breaker removes only the very lock file it judged stale (issue 57: a mutant removing a
lock that another process re-took after the judgement survived the suite). The re-take is
made to happen exactly between the judgement and the removal."""

from __future__ import annotations

import json
import time

import reasonlab.locking as locking
from reasonlab.locking import RunLock, clear_stale, read_lock


def a_dead_nodes_lock(path) -> None:
    path.write_text(json.dumps({"host": "elsewhere", "pid": 1, "token": "old"}))


def test_a_breaker_leaves_a_lock_retaken_after_it_judged_the_old_one_stale(tmp_path):
    path = tmp_path / ".r.lock"
    a_dead_nodes_lock(path)
    breaker = RunLock(path, stale_after=0.05, poll=0.01)
    assert not breaker._stale(read_lock(path))  # first sight: the clock starts
    deadline = time.monotonic() + 60  # generous: only the order of events matters
    while not breaker._stale(read_lock(path)):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    # judged stale; now another process breaks it first and takes the run (a live holder)
    path.unlink()
    other = RunLock(path)
    other.acquire(wait=False)
    try:
        breaker._break()
        assert (read_lock(path) or {}).get("token") == other.token  # still the other's
        other.check()  # its fence holds: it still owns the run
    finally:
        other.release()


def test_clear_stale_leaves_a_lock_retaken_after_its_judgement(tmp_path, monkeypatch):
    path = tmp_path / ".r.lock"
    a_dead_nodes_lock(path)
    old = time.time() - 10 * locking.STALE_S
    locking.os.utime(path, (old, old))  # no heartbeat for long: dead
    taken: list[RunLock] = []
    real_alive = locking._alive

    def judged_then_retaken(p, holder):
        alive = real_alive(p, holder)
        assert not alive
        p.unlink()  # between the judgement and the removal, another process takes the run
        taken.append(RunLock(p))
        taken[0].acquire(wait=False)
        return alive

    monkeypatch.setattr(locking, "_alive", judged_then_retaken)
    try:
        assert clear_stale(path) is False
        assert read_lock(path)["token"] == taken[0].token
    finally:
        taken[0].release()
