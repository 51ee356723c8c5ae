"""Executing many runs into one run store: a local process pool (default) or a Ray cluster.

Both executors call `runs.execute` for every config, so they share everything that makes runs
safe to repeat: the content-addressed folder, reuse of finished runs, and resume of interrupted
ones from their last checkpoint. Results are bitwise the same whichever executor trains a run.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from tqdm.auto import tqdm

from reasonlab.errors import ConfigError
from reasonlab.runs import execute, load_result, run_dir_for
from reasonlab.train.config import TrainConfig

Executor = Literal["local", "ray"]
EXECUTORS: tuple[Executor, ...] = ("local", "ray")
RAY_RETRIES = 3
"""Times Ray reruns a run whose worker died (killed, out of memory, node lost); each retry
resumes from the run's last checkpoint."""


def execute_all(configs: list[TrainConfig], root: Path, descs: list[str] | None = None,
                workers: int | None = None, quiet: bool = False, executor: Executor = "local",
                address: str | None = None, desc: str = "runs") -> list[dict[str, Any]]:
    """Results of `configs` (trained, resumed or reused under `root/runs`), in order.
    Finished runs are read here, so a sweep or study run again starts no worker at all."""
    descs = descs or [f"run {i}" for i in range(len(configs))]
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; choose one of: {', '.join(EXECUTORS)}")
    if address is not None and executor != "ray":
        raise ConfigError("--address names a Ray cluster; use it with --executor ray")
    before = prerequisites(configs, root)
    if before:  # pretraining runs first, each once: two workers never train the same one
        execute_all(before, root, [f"pretraining {i}" for i in range(len(before))], workers,
                    quiet, executor, address, desc=f"{desc}: pretraining")
    results: list[dict[str, Any] | None] = [load_result(run_dir_for(c, root)) for c in configs]
    todo = [i for i, r in enumerate(results) if r is None]
    if todo:
        run = _ray if executor == "ray" else _local
        done = run([configs[i] for i in todo], root, [descs[i] for i in todo], workers, quiet,
                   address, desc)
        for i, r in zip(todo, done, strict=True):
            results[i] = r
    return results  # type: ignore[return-value]


def prerequisites(configs: list[TrainConfig], root: Path) -> list[TrainConfig]:
    """The unfinished runs that `configs` initialise from (TrainConfig.pretrain), each once."""
    out: dict[Path, TrainConfig] = {}
    for c in configs:
        pre = c.pretrain
        if pre is not None and load_result(run_dir_for(c, root)) is None:
            d = run_dir_for(pre, root)
            if d not in out and load_result(d) is None:
                out[d] = pre
    return list(out.values())


def _local(configs: list[TrainConfig], root: Path, descs: list[str], workers: int | None,
           quiet: bool, address: str | None, desc: str) -> list[dict[str, Any]]:
    # Independent runs side by side beat one multi-threaded run on small CPU models
    # (docs/design.md §8 Performance).
    workers = min(workers, max(1, len(configs))) if workers else (
        1 if not configs or configs[0].device == "cuda" else
        min(len(configs), os.cpu_count() or 1))
    if workers == 1:
        return [execute(c, root, quiet=quiet, desc=d)
                for c, d in tqdm(list(zip(configs, descs, strict=True)), desc=desc,
                                 disable=quiet or len(configs) <= 1)]
    jobs = [(c.model_dump(mode="json"), str(root), d, -1 if quiet else i % workers + 1)
            for i, (c, d) in enumerate(zip(configs, descs, strict=True))]
    with process_pool(workers) as pool:
        return list(tqdm(pool.map(_quiet_or_not, jobs), total=len(jobs), desc=desc,
                         position=0, disable=quiet))


def process_pool(workers: int) -> ProcessPoolExecutor:
    """Spawned workers that exit when the process that started them dies (a kill -9 of the
    main process would otherwise leave them training on, a second writer for the next
    command; their run locks then go stale at once, their pids being gone)."""
    return ProcessPoolExecutor(workers, mp_context=get_context("spawn"),
                               initializer=_exit_with_parent, initargs=(os.getpid(),))


def _exit_with_parent(parent: int, every: float = 1.0) -> None:
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)  # no cleanup to wait for: the run resumes from its last checkpoint

    threading.Thread(target=watch, daemon=True, name="exit with parent").start()


def _quiet_or_not(job: tuple[dict[str, Any], str, str, int]) -> dict[str, Any]:
    config, root, desc, position = job
    return execute(TrainConfig.build(config), Path(root), quiet=position < 0, desc=desc,
                   position=max(position, 0))


# ----------------------------------------------------------------------------- Ray


def _ray(configs: list[TrainConfig], root: Path, descs: list[str], workers: int | None,
         quiet: bool, address: str | None, desc: str) -> list[dict[str, Any]]:
    """One Ray task per run (1 GPU if its config asks for CUDA, else 1 CPU); Ray retries a
    task whose worker dies and the retry resumes from the checkpoint. `root` must be on a
    filesystem every node sees (the run store is shared, not copied)."""
    ray = connect_ray(address, workers)
    remote = ray.remote(max_retries=RAY_RETRIES, retry_exceptions=False)(_ray_execute)
    root_s = str(Path(root).resolve())
    refs = [remote.options(num_cpus=0 if c.device == "cuda" else 1,
                           num_gpus=1 if c.device == "cuda" else 0).remote(
                c.model_dump(mode="json"), root_s) for c in configs]
    index = {ref: i for i, ref in enumerate(refs)}
    out: list[Any] = [None] * len(refs)
    pending = list(refs)
    with tqdm(total=len(refs), desc=f"{desc} (ray)", disable=quiet) as bar:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                out[index[ref]] = _ray_get(ray, ref)
                bar.update(1)
    return out


def connect_ray(address: str | None, workers: int | None) -> Any:
    """`ray` after connecting: to the cluster at `address`, else to one already started in this
    process, else to a new local instance with `workers` CPUs (default: all)."""
    if address:
        check_address(address)
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray; install it with "
                          "`pip install 'reasonlab[ray]'`") from None
    if ray.is_initialized():
        return ray
    kw: dict[str, Any] = {"address": address} if address else {
        "num_cpus": workers or os.cpu_count() or 1}
    # Workers must import the same reasonlab as this process (a checkout on PYTHONPATH).
    src = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    try:
        ray.init(**kw, runtime_env={"env_vars": {"PYTHONPATH": path}} if not address else None,
                 logging_level="ERROR", log_to_driver=False, include_dashboard=False)
    except (ConnectionError, ValueError, RuntimeError, TimeoutError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"cannot connect to Ray at {address or 'a new local instance'} "
                          f"({first}); start a cluster with `ray start --head` and pass its "
                          "address (host:6379), or leave --address out") from None
    return ray


def check_address(address: str, timeout: float = 5.0) -> None:
    """A TCP connection to host:port (or ray://host:port) opens within `timeout` seconds.
    Checked first because ray.init keeps retrying an unreachable address for minutes."""
    import re
    import socket

    if address == "auto":  # the cluster `ray start` recorded on this machine
        return
    m = re.fullmatch(r"(?:ray://)?\[?([^\]\s/]+?)\]?:(\d{1,5})", address)
    if m is None:
        raise ConfigError(f"--address {address!r} is not host:port or ray://host:port (e.g. "
                          "10.0.0.5:6379, the address `ray start --head` prints)")
    host, port = m.group(1), int(m.group(2))
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        raise ConfigError(f"cannot connect to Ray at {address} ({e.strerror or e}); start a "
                          "cluster with `ray start --head` and pass the address it prints, "
                          "or leave --address out for a local Ray") from None


def _ray_get(ray: Any, ref: Any) -> dict[str, Any]:
    from reasonlab.errors import ReasonlabError

    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, ReasonlabError):  # a user error: its one line, no traceback
            raise e.cause from None
        raise


def _ray_execute(config: dict[str, Any], root: str) -> dict[str, Any]:
    return execute(TrainConfig.build(config), Path(root), quiet=True)
