"""A pool of spawned worker processes that outlives a dead worker.

`concurrent.futures.ProcessPoolExecutor` breaks as a whole when one of its workers dies (the
kernel's out-of-memory killer sends SIGKILL to the biggest run; a segfault): every job not yet
done fails with BrokenProcessPool and the other workers are terminated. Here each worker has a
pipe of its own, so the parent knows which job a dead worker held: that job's result is a
`WorkerDied` (its exit status and what it likely means), a new worker takes the dead one's
place, and every other job runs on. A job that raises stops the handing out of new jobs; the
running ones finish, and the first error (in job order) is raised, its remote traceback as its
cause (as `ProcessPoolExecutor.map` does).
"""

from __future__ import annotations

import os
import signal
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.queues import Queue
from typing import Any


@dataclass
class WorkerDied:
    """The result of a job whose worker process died while running it."""

    index: int
    exitcode: int
    """The process's exit status: -N when signal N killed it."""

    @property
    def cause(self) -> str:
        """What happened, as a clause: "its worker process was killed by signal 9 ..."."""
        if self.exitcode >= 0:
            return f"its worker process exited with status {self.exitcode}"
        try:
            name = f" ({signal.Signals(-self.exitcode).name})"
        except ValueError:
            name = ""
        oom = ": out of memory?" if -self.exitcode == signal.SIGKILL else ""
        return f"its worker process was killed by signal {-self.exitcode}{name}{oom}"


class WorkerStartError(RuntimeError):
    """A worker process died before it could take a job (its initializer failed)."""


class _RemoteTraceback(Exception):
    def __init__(self, tb: str):
        self.tb = tb

    def __str__(self) -> str:
        return self.tb


def run_jobs(fn: Callable[[Any], Any], jobs: Sequence[Any], workers: int,
             initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = (),
             pins: Queue[str] | None = None) -> list[Any]:
    """fn(job) for every job, in `workers` spawned processes (each runs `initializer(*initargs)`
    first); results in job order, a `WorkerDied` for each job whose worker died. `pins`: the
    queue the initializer takes the worker's CUDA_VISIBLE_DEVICES from; a dead worker's entry
    goes back into it for the worker that replaces it."""
    ctx = get_context("spawn")
    n = max(1, min(workers, len(jobs)))
    results: list[Any] = [None] * len(jobs)
    todo = list(range(len(jobs)))[::-1]  # popped from the end: handed out in order
    errors: list[tuple[int, BaseException, str]] = []
    procs: dict[Connection, Any] = {}  # the parent's end of each worker's pipe -> its process
    busy: dict[Connection, int] = {}  # -> the job it runs
    idle: list[Connection] = []
    pin: dict[Connection, str | None] = {}

    def spawn() -> None:
        mine, theirs = ctx.Pipe()
        p = ctx.Process(target=_serve, args=(theirs, fn, initializer, initargs),
                        name="reasonlab worker")
        p.start()
        theirs.close()
        procs[mine] = p

    def died(c: Connection) -> None:
        p = procs.pop(c)
        p.join()
        c.close()
        if c in idle:
            idle.remove(c)
        if c not in pin:  # it never took a job: replacing it would fail the same way
            raise WorkerStartError(f"a worker process failed to start (exit status "
                                   f"{p.exitcode}); its error is printed above")
        if pins is not None and pin[c] is not None:
            pins.put(pin[c])  # its GPU, for the worker that takes its place
        if c in busy:
            i = busy.pop(c)
            results[i] = WorkerDied(i, p.exitcode)
        if todo and not errors and len(procs) < min(n, len(todo) + len(busy)):
            spawn()

    def receive(c: Connection) -> None:
        try:
            msg = c.recv()
        except (EOFError, OSError):
            return died(c)
        except Exception as e:  # noqa: BLE001 - a result or error that does not unpickle
            msg = ("error", busy.get(c), e, traceback.format_exc())
        if msg[0] == "ready":
            pin[c] = msg[1]
        else:
            i = busy.pop(c)
            if msg[0] == "ok":
                results[i] = msg[2]
            else:
                errors.append((i, msg[2], msg[3]))
        idle.append(c)

    try:
        for _ in range(n):
            spawn()
        while busy or (todo and not errors):
            while idle and todo and not errors:
                c, i = idle.pop(), todo.pop()
                c.send((i, jobs[i]))
                busy[c] = i
            sentinels = {p.sentinel: c for c, p in procs.items()}
            for r in wait([*procs, *sentinels]):
                c = sentinels.get(r, r)  # type: ignore[arg-type]
                if c not in procs:
                    continue  # handled already (its pipe and its sentinel both woke us)
                if c.poll():  # what it sent before it died comes first
                    receive(c)
                if c in procs and r in sentinels:
                    died(c)
    finally:
        for c, p in procs.items():
            try:
                c.send(None)
            except OSError:
                pass
        for c, p in procs.items():
            p.join(timeout=5 if not busy else 0)
            if p.is_alive():
                p.terminate()
                p.join()
            c.close()
    if errors:
        i, e, tb = min(errors, key=lambda x: x[0])
        e.__cause__ = _RemoteTraceback(f'\n"""\n{tb}"""')
        raise e
    return results


def _serve(conn: Connection, fn: Callable[[Any], Any],
           initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    """A worker: run the initializer, say so (with the GPU it took), then run the jobs sent."""
    try:
        if initializer is not None:
            initializer(*initargs)
        conn.send(("ready", os.environ.get("CUDA_VISIBLE_DEVICES")))
    except KeyboardInterrupt:  # Ctrl-C reaches every process of the terminal: the parent acts
        return
    while True:
        try:
            msg = conn.recv()
        except (EOFError, KeyboardInterrupt):  # the parent is gone, or Ctrl-C while idle
            return
        if msg is None:
            return
        i, job = msg
        try:
            out: tuple[Any, ...] = ("ok", i, fn(job))
        except BaseException as e:  # noqa: BLE001 - sent to the parent, raised there
            out = ("error", i, e, traceback.format_exc())
        try:
            conn.send(out)
        except Exception as e:  # noqa: BLE001 - a result or an error that does not pickle
            conn.send(("error", i, RuntimeError(f"{type(e).__name__}: {e}"),
                       traceback.format_exc()))
