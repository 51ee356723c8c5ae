"""The run lock: exclusive, heartbeating, broken when its holder died (pid gone on this host,
or no heartbeat for the stale timeout on another), and never breaking a live lock."""

import json
import os
import platform
import subprocess
import sys
import threading
import time

import pytest

from reasonlab.locking import LockHeld, RunLock, read_lock


def dead_pid() -> int:
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                       capture_output=True, text=True)
    return int(p.stdout)


def test_exclusive_and_released(tmp_path):
    path = tmp_path / ".r.lock"
    with RunLock(path) as a:
        holder = read_lock(path)
        assert holder["pid"] == os.getpid() and holder["token"] == a.token
        assert holder["host"] == platform.node()
        with pytest.raises(LockHeld):
            RunLock(path).acquire(wait=False)
    assert not path.exists()
    RunLock(path).acquire(wait=False)  # free again


def test_waiter_gets_the_lock_when_the_holder_releases(tmp_path):
    path = tmp_path / ".r.lock"
    first = RunLock(path)
    first.acquire()
    told, order = [], []
    second = RunLock(path, poll=0.02)

    def wait() -> None:
        second.acquire(on_wait=told.append)
        order.append("second")
        second.release()

    t = threading.Thread(target=wait)
    t.start()
    time.sleep(0.3)
    order.append("first")
    first.release()
    t.join(10)
    assert order == ["first", "second"] and told[0]["token"] == first.token


def test_lock_of_a_dead_process_on_this_host_is_broken_at_once(tmp_path):
    path = tmp_path / ".r.lock"
    path.write_text(json.dumps({"host": platform.node(), "pid": dead_pid(), "token": "x"}))
    t0 = time.monotonic()
    RunLock(path, stale_after=60).acquire(wait=False)
    assert time.monotonic() - t0 < 5


def test_lock_of_another_host_is_stale_only_without_heartbeat(tmp_path):
    path = tmp_path / ".r.lock"
    path.write_text(json.dumps({"host": "elsewhere", "pid": 1, "token": "x"}))
    beating = threading.Event()

    def heartbeat() -> None:  # the other node's holder, alive: it touches the file
        while not beating.is_set():
            os.utime(path, ns=(time.time_ns(), time.time_ns()))
            time.sleep(0.05)

    t = threading.Thread(target=heartbeat)
    t.start()
    lock = RunLock(path, stale_after=0.5, poll=0.05)
    with pytest.raises(LockHeld):  # a live heartbeat is never judged stale
        for _ in range(30):
            lock.acquire(wait=False)
            lock.release()
            pytest.fail("took a live lock")
    beating.set()
    t.join()
    t0 = time.monotonic()
    got = RunLock(path, stale_after=0.5, poll=0.05)
    got.acquire()  # heartbeat stopped: stale after 0.5 s of no change
    assert 0.4 < time.monotonic() - t0 < 10
    assert read_lock(path)["token"] == got.token
    got.release()


def test_holder_heartbeats_and_notices_a_takeover(tmp_path):
    path = tmp_path / ".r.lock"
    lock = RunLock(path, heartbeat=0.05)
    lock.acquire()
    m0 = path.stat().st_mtime_ns
    time.sleep(0.3)
    assert path.stat().st_mtime_ns > m0
    path.write_text(json.dumps({"host": "x", "pid": 1, "token": "other"}))
    time.sleep(0.3)
    assert lock.lost
    lock.release()
    assert read_lock(path)["token"] == "other"  # not ours: left alone


def test_a_breaker_that_died_in_its_guard_does_not_block_forever(tmp_path):
    path = tmp_path / ".r.lock"
    path.write_text(json.dumps({"host": platform.node(), "pid": dead_pid(), "token": "x"}))
    (tmp_path / ".r.lock.break").mkdir()
    lock = RunLock(path, stale_after=0.3, poll=0.05)
    lock.acquire()
    assert read_lock(path)["token"] == lock.token
    lock.release()
