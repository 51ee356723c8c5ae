"""One writer per run: a lock file beside the run folder that works on a local disk and on a
filesystem several nodes share (the Ray recipe's store on NFS or Lustre).

The lock is `<root>/runs/.<id>.lock`, created with O_CREAT | O_EXCL (atomic on local disks and
on NFSv3+). It holds who took it (host, pid, start time, a random token) and its holder touches
it every HEARTBEAT_S seconds while the run trains. Another process judges it stale, and breaks
it, when
  - it was taken on the same host by a process that no longer exists (a kill -9: at once), or
  - its mtime has not moved for STALE_S seconds of the waiter's own clock (a crashed node; a
    waiter never compares clocks of two machines, so clock skew does not matter).
Two breakers are serialised by a `.break` folder (mkdir is atomic everywhere), and a lock is
only removed if it is still the very file judged stale.

The lock is a lease with a fencing token: a holder paused past STALE_S (Ctrl-Z, SIGSTOP, a
frozen NFS client, a node swapping) loses it to a waiter, which takes the run over. So every
write a holder makes to its run is preceded by `RunLock.check()`, which reads the lock file and
raises `LeaseLost` (one line: who holds the run now) unless it still holds this process's
token, renewing the lease when a heartbeat is due; a resumed holder therefore stops at its next
write instead of writing beside the new owner (or deleting its folder). What is left is the
moment between the check and the write itself (one rename or one append): microseconds,
against a lease of a minute.

Written by hand because the libraries do not do this: fcntl/flock locks are unreliable or
absent on shared filesystems, and `filelock.SoftFileLock` has no stale-lock recovery.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reasonlab.errors import ReasonlabError

HEARTBEAT_S = 5.0
STALE_S = 60.0
POLL_S = 0.5


class LockHeld(Exception):
    """The lock is held by a live process (non-blocking acquire)."""


class LeaseLost(ReasonlabError):
    """This process held the lock, stalled past its lease, and another process took it over:
    it must not write to the run again."""


def lock_path(run_dir: Path) -> Path:
    return run_dir.parent / f".{run_dir.name}.lock"


def read_lock(path: Path) -> dict[str, Any] | None:
    """Who holds the lock at `path` (None: no lock, or one whose holder died mid-write)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _pid_gone(holder: dict[str, Any] | None) -> bool:
    """The holder ran on this host and its process is gone."""
    if not holder or holder.get("host") != platform.node() or not isinstance(
            holder.get("pid"), int):
        return False
    try:
        os.kill(holder["pid"], 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else
        return False
    return False


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


class RunLock:
    """`with RunLock(path):` holds the lock while the block runs, heartbeating all along."""

    def __init__(self, path: Path, heartbeat: float | None = None,
                 stale_after: float | None = None, poll: float | None = None):
        # None: the module's values at construction (a test may shorten them in a process)
        self.path = path
        self.heartbeat = HEARTBEAT_S if heartbeat is None else heartbeat
        self.stale_after = STALE_S if stale_after is None else stale_after
        self.poll = POLL_S if poll is None else poll
        self.token = uuid.uuid4().hex
        self.lost = False  # set if another process broke our lock (we stalled > stale_after)
        self._renewed = 0.0  # monotonic time of our last heartbeat
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: dict[str, tuple[Any, float]] = {}  # file -> (identity, since)

    # ------------------------------------------------------------------ acquire / release

    def acquire(self, wait: bool = True,
                on_wait: Callable[[dict[str, Any] | None], None] | None = None) -> None:
        told = False
        while True:
            if self._try_create():
                self._thread = threading.Thread(target=self._beat, daemon=True,
                                                name=f"lock {self.path.name}")
                self._thread.start()
                return
            holder = read_lock(self.path)
            if self._stale(holder):
                self._break()
                continue
            if not wait:
                raise LockHeld(str(holder))
            if on_wait is not None and not told:
                on_wait(holder)
                told = True
            time.sleep(self.poll)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if (read_lock(self.path) or {}).get("token") == self.token:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def check(self) -> None:
        """The fence: raise LeaseLost unless this process still holds the lock (the lock file
        holds its token), and renew the lease when a heartbeat is due. Called immediately before
        every write to the run, so a holder that stalled past its lease and lost the run stops
        at its next write."""
        holder = read_lock(self.path)
        if self.lost or (holder or {}).get("token") != self.token:
            self.lost = True
            raise LeaseLost(self._lost_message(holder))
        if time.monotonic() - self._renewed >= self.heartbeat:
            self._renew()

    def _lost_message(self, holder: dict[str, Any] | None) -> str:
        run_id = self.path.name.removeprefix(".").removesuffix(".lock")
        who = f"{holder.get('host')} pid {holder.get('pid')}" if holder else None
        if who is None:  # the new owner has released it since: run.json says who it was
            try:
                start = json.loads((self.path.parent / run_id / "run.json").read_text()
                                   )["starts"][-1]
                if start["pid"] != os.getpid() or start["host"] != platform.node():
                    who = f"{start['host']} pid {start['pid']} (done with it since)"
            except (OSError, ValueError, KeyError, IndexError, TypeError):
                pass
        return (f"run {run_id} was taken over by {who or 'another process'} while this process "
                f"was stalled (no heartbeat for {self.stale_after:.0f} s: paused, frozen or "
                "swapped out); this process stopped without writing to it again; run the "
                "command again to reuse the run")

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # ------------------------------------------------------------------ internals

    def _try_create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        info = {"host": platform.node(), "pid": os.getpid(), "started": time.time(),
                "token": self.token}
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(info))
            f.flush()
            os.fsync(f.fileno())
        self._renewed = time.monotonic()
        return True

    def _renew(self) -> None:
        with contextlib.suppress(OSError):
            os.utime(self.path)
            self._renewed = time.monotonic()

    def _unchanged_for(self, path: Path) -> float:
        """Seconds (of this process's clock) that `path` has kept its inode, mtime and size."""
        ident, now = _identity(path), time.monotonic()
        old = self._seen.get(path.name)
        if old is None or old[0] != ident:
            self._seen[path.name] = (ident, now)
            return 0.0
        return now - old[1]

    def _stale(self, holder: dict[str, Any] | None) -> bool:
        return _pid_gone(holder) or self._unchanged_for(self.path) > self.stale_after

    def _break(self) -> None:
        """Remove the stale lock, unless another process replaced it meanwhile."""
        judged = self._seen.get(self.path.name, (None, 0.0))[0]
        guard = self.path.with_name(self.path.name + ".break")
        try:
            guard.mkdir()
        except FileExistsError:  # another breaker; its guard lives milliseconds unless it died
            if self._unchanged_for(guard) > self.stale_after:
                with contextlib.suppress(OSError):
                    guard.rmdir()
            time.sleep(self.poll)
            return
        try:
            now = _identity(self.path)
            if now is not None and (now == judged or _pid_gone(read_lock(self.path))):
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
            self._seen.pop(self.path.name, None)
        finally:
            with contextlib.suppress(OSError):
                guard.rmdir()

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat):
            if (read_lock(self.path) or {}).get("token") != self.token:
                self.lost = True
                return
            self._renew()


def clear_stale(path: Path) -> bool:
    """Remove the lock file at `path` if `held` judges its holder dead (its pid gone on this
    host, or no heartbeat for STALE_S by this machine's clock): a lock a killed process left
    beside a run it had finished. Serialised with breakers by the `.break` folder, and only
    the very file judged dead is removed; True if removed. A stale `.break` folder (its breaker
    died in it) goes too."""
    judged = _identity(path)
    if judged is None or _alive(path, read_lock(path)):
        return False
    guard = path.with_name(path.name + ".break")
    with contextlib.suppress(OSError):
        if time.time() - guard.stat().st_mtime > STALE_S:
            guard.rmdir()
    try:
        guard.mkdir()
    except OSError:  # a breaker at work: it decides
        return False
    try:
        if _identity(path) != judged:
            return False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True
    finally:
        with contextlib.suppress(OSError):
            guard.rmdir()


def _alive(path: Path, holder: dict[str, Any] | None) -> bool:
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return False
    return not _pid_gone(holder) and age <= STALE_S


def held(run_dir: Path) -> dict[str, Any] | None:
    """The holder of a run's lock if it looks alive, for listing (`runs`, gc): its process
    exists (same host) and its heartbeat is younger than STALE_S by this machine's clock (an
    approximation a listing can afford; acquiring never compares clocks)."""
    path = lock_path(run_dir)
    holder = read_lock(path) or {}
    return holder if _alive(path, holder) else None
