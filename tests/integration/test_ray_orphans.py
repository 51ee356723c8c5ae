"""A driver that started a local Ray (`--executor ray`, no --address) and is then killed with
SIGKILL leaves no Ray process behind: the raylet and GCS exit by themselves, and the dashboard
and runtime-env agents (which would live on for a minute or more) and any worker are ended by
the watchdog the driver started (orphans.py) within seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install 'reasonlab[ray]')")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")]

DRIVER = """
import os, sys, time
from reasonlab.execution import connect_ray
ray = connect_ray(None, 1)

@ray.remote
def pid():
    return os.getpid()

ray.get(pid.remote())  # a worker started, too
open(sys.argv[1], "w").write("")
time.sleep(600)
"""


def descendants(root: int) -> dict[int, str]:
    """pid -> command line of every live descendant of `root`."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
                parent[int(name)] = int(stat.rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, grew = {root}, True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    out = {}
    for pid in tree - {root}:
        try:
            out[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            pass
    return out


def alive(pids: dict[int, str]) -> dict[int, str]:
    out = {}
    for pid, cmd in pids.items():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if "zombie" not in status.lower():
            out[pid] = cmd
    return out


def test_ray_processes_end_with_their_killed_driver(tmp_path):
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(ready)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 180
    while not ready.exists():
        assert driver.poll() is None, driver.communicate()
        assert time.time() < deadline, "Ray did not start"
        time.sleep(0.2)
    time.sleep(2)  # the watchdog notes the driver's processes every second
    ray_procs = {p: c for p, c in descendants(driver.pid).items()
                 if "ray" in c and "import os, signal, sys, time" not in c}
    assert any("raylet" in c for c in ray_procs.values()), ray_procs
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    deadline = time.time() + 15  # the agents alone would live on for a minute or more
    while alive(ray_procs) and time.time() < deadline:
        time.sleep(0.5)
    left = alive(ray_procs)
    for pid in left:  # leave nothing behind either way
        os.kill(pid, signal.SIGKILL)
    assert not left, f"outlived their driver: {sorted(c[:60] for c in left.values())}"
