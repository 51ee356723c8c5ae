"""Processes that must not outlive the command that started them.

A local Ray instance (`--executor ray` without `--address`) is a tree of processes under the
driver: GCS server, raylet, dashboard and runtime-env agents, log monitor, workers. When the
driver ends normally `ray.shutdown` stops them; when it is killed outright (SIGKILL, the
out-of-memory killer) the raylet and GCS notice and exit, but the agents live on for a minute
or more, and a worker that still trains is a second writer for the next command. So the
driver starts a watchdog beside it (`reap_with_driver`): a small process in a session of its
own that notes the driver's Ray descendants every second and, once the driver is gone, ends
every one of them still running (SIGTERM, then SIGKILL after 5 s). Linux only (/proc); a no-op
elsewhere.
"""

from __future__ import annotations

import os
import subprocess
import sys

WATCHDOG = r'''
import os, signal, sys, time
driver, marks = int(sys.argv[1]), sys.argv[2:]

def stat(pid):
    """(parent pid, start time) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):
        return None

def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""

born = stat(driver)
seen = {}  # pid -> start time: the driver's Ray descendants, each as first seen
while born is not None and stat(driver) == born:
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            s = stat(int(name))
            if s is not None:
                procs[int(name)] = s
    tree, grew = {driver}, True
    while grew:
        grew = False
        for pid, (ppid, _) in procs.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    for pid in tree - {driver}:
        if pid not in seen and any(m in cmdline(pid) for m in marks):
            seen[pid] = procs[pid][1]
    time.sleep(1.0)

def alive():
    return [p for p, t in seen.items() if (stat(p) or (0, None))[1] == t]

for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
    for pid in alive():
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    deadline = time.monotonic() + wait
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
'''


def reap_with_driver(package_dir: str) -> subprocess.Popen[bytes] | None:
    """Start the watchdog for this process's Ray descendants (those whose command line names
    `package_dir`, Ray's install folder, or is a Ray worker's "ray::..." title)."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc"):
        return None
    return subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), package_dir,
                             "ray::"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
