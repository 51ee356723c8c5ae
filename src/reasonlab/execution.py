"""Executing many runs into one run store: a local process pool (default) or a Ray cluster.

Both executors call `runs.execute` for every config, so they share everything that makes runs
safe to repeat: the content-addressed folder, reuse of finished runs, and resume of interrupted
ones from their last checkpoint. Results are bitwise the same whichever executor trains a run.

Devices: a run whose `device` resolves to CUDA (`cuda`, or `auto` where a GPU is present)
takes one GPU. Locally such runs go one per visible GPU, each worker process pinned to its own
with CUDA_VISIBLE_DEVICES (`--workers N` more than the GPUs shares them round-robin); CPU runs
go side by side, one per core. Under Ray a CUDA run asks for 1 GPU; on a cluster without GPUs an
`auto` run takes a CPU instead, and the executor says so.

Several runs per GPU (`--runs-per-gpu K`, REASONLAB_RUNS_PER_GPU): for launch-bound runs (small
kernels: `reasonlab studies --scale paper` says which studies are), K worker processes share each
GPU locally, and under Ray a CUDA run asks for 1/K of a GPU. Each run is still the same
deterministic computation: sharing a GPU changes its speed, not its bits.

Disk: before training, `check_disk` compares what the runs left to train will write (their
final checkpoints, and one mid-run checkpoint with Adam moments per worker) with the free space
under the store, and stops in one line when it is short.
"""

from __future__ import annotations

import os
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any, Literal

from tqdm.auto import tqdm

from reasonlab.errors import ConfigError
from reasonlab.runs import execute, execute_if_free, load_result, run_dir_for
from reasonlab.tracking import TrackerConfig, backfill, from_env, hparams
from reasonlab.train.config import TrainConfig
from reasonlab.workers import WorkerDied, run_jobs

Executor = Literal["local", "ray"]
EXECUTORS: tuple[Executor, ...] = ("local", "ray")
RUNS_PER_GPU = "REASONLAB_RUNS_PER_GPU"
"""Environment variable: runs sharing one GPU (default 1; the CLI's --runs-per-gpu sets it)."""

RAY_RETRIES = 3
"""Times Ray reruns a run whose worker died (killed, out of memory, node lost); each retry
resumes from the run's last checkpoint."""


def execute_all(configs: list[TrainConfig], root: Path, descs: list[str] | None = None,
                workers: int | None = None, quiet: bool = False, executor: Executor = "local",
                address: str | None = None, desc: str = "runs") -> list[dict[str, Any]]:
    """Results of `configs` (trained, resumed or reused under `root/runs`), in order.
    Finished runs are read here, so a sweep or study run again starts no worker at all.

    Work stealing over the run locks: the pretraining runs the configs need, then the configs,
    are first tried without waiting (runs.execute_if_free), so a run another command holds
    (another `reasonlab run` of the same study on the same store, another SLURM array task) is
    skipped and the next free one trained; only then are the skipped ones waited for (and
    reused when their holder finishes them, or taken over if it died). N commands on one study
    train different runs side by side, and each has every result for its report at the end.
    The tracker the command chose (tracking.from_env) mirrors the metrics of every run."""
    descs = descs or [f"run {i}" for i in range(len(configs))]
    if executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {executor!r}; choose one of: {', '.join(EXECUTORS)}")
    if address is not None and executor != "ray":
        raise ConfigError("--address names a Ray cluster; use it with --executor ray")
    tracker = from_env()
    before = prerequisites(configs, root)
    if executor == "local":  # a Ray cluster writes on its own nodes' view of the store
        check_disk([c for c in configs if load_result(run_dir_for(c, root)) is None] + before,
                   root, workers)
    results: list[dict[str, Any] | None] = [load_result(run_dir_for(c, root)) for c in configs]
    todo = [i for i, r in enumerate(results) if r is None]
    # pretraining runs first, each once (a run needing one another worker or command holds is
    # skipped like a held run: it is waited for at the end)
    jobs = before + [configs[i] for i in todo]
    names = [f"pretraining {i}" for i in range(len(before))] + [descs[i] for i in todo]
    if jobs:
        run = _ray if executor == "ray" else _local
        done = run(jobs, root, names, workers, quiet, address, desc, tracker, False)
        held = [k for k, r in enumerate(done) if r is None]
        if held:
            if not quiet:
                print(f"{desc}: {len(held)} run(s) are held by other processes; waiting for "
                      "them", file=sys.stderr)
            again = run([jobs[k] for k in held], root, [names[k] for k in held], workers, quiet,
                        address, f"{desc}: waiting", tracker, True)
            for k, r in zip(held, again, strict=True):
                done[k] = r
        check_dead_workers(jobs, names, done, root)
        for i, r in zip(todo, done[len(before):], strict=True):
            # a worker killed after it wrote result.json finished its run (check_dead_workers
            # let it pass): its result is the run's, read back and verified
            results[i] = load_result(run_dir_for(configs[i], root)) if isinstance(
                r, WorkerDied) else r
    if tracker is not None:  # runs finished before this command: their curves, once
        for c, r in zip(configs, results, strict=True):
            if isinstance(r, dict):
                backfill(tracker, run_dir_for(c, root), r["curve"], hparams(c))
    return results  # type: ignore[return-value]


def prerequisites(configs: list[TrainConfig], root: Path) -> list[TrainConfig]:
    """The unfinished runs that `configs` initialise from (TrainConfig.init_from), each once."""
    out: dict[Path, TrainConfig] = {}
    for c in configs:
        pre = c.init_run
        if pre is not None and load_result(run_dir_for(c, root)) is None:
            d = run_dir_for(pre, root)
            if d not in out and load_result(d) is None:
                out[d] = pre
    return list(out.values())


def check_disk(configs: list[TrainConfig], root: Path, workers: int | None = None) -> None:
    """Stop in one line before training when the free disk under `root` cannot hold what the
    unfinished `configs` will write: their final checkpoints (train/checkpoint.py
    checkpoint_bytes) and, while they train, a mid-run checkpoint (Adam moments included, old
    and new side by side) for each run training at once. A GPU box with 64-200 GB would
    otherwise fill up mid-study (the FPT family alone once needed ~240 GB)."""
    from reasonlab.train.checkpoint import checkpoint_bytes

    if not configs:
        return
    sizes = [checkpoint_bytes(c) for c in configs]
    at_once = min(len(configs), workers or os.cpu_count() or 1)
    final = sum(f for f, _ in sizes)
    during = sorted((peak for _, peak in sizes), reverse=True)[:at_once]
    need = final + sum(during)
    where = Path(root).resolve()
    while not where.exists():
        where = where.parent
    free = shutil.disk_usage(where).free
    if need > free:
        raise ConfigError(f"the {len(configs)} runs left to train need about "
                          f"{need / 1e9:.1f} GB of disk under {root} ({final / 1e9:.1f} GB of "
                          f"final checkpoints, {sum(during) / 1e9:.1f} GB more while they "
                          f"train) but {free / 1e9:.1f} GB are free; free some space or give "
                          "--out a larger disk")


def runs_per_gpu() -> int:
    """Runs sharing one GPU: REASONLAB_RUNS_PER_GPU (the CLI's --runs-per-gpu), default 1."""
    value = os.environ.get(RUNS_PER_GPU, "1")
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{RUNS_PER_GPU}={value!r} must be a whole number >= 1")
    return int(value)


def uses_cuda(config: TrainConfig) -> bool:
    """Whether the run trains on a GPU on this machine (`auto` resolves here, as train() will
    in a worker that sees the same GPUs)."""
    import torch

    return config.device == "cuda" or (config.device == "auto" and torch.cuda.is_available())


def visible_gpus() -> list[str]:
    """The GPUs this process may use, as CUDA_VISIBLE_DEVICES entries: the ones it already
    names (a scheduler's choice is kept), else 0..device_count-1."""
    import torch

    named = os.environ.get("CUDA_VISIBLE_DEVICES")
    if named is not None and named.strip():
        return [g.strip() for g in named.split(",") if g.strip()][:torch.cuda.device_count()]
    return [str(i) for i in range(torch.cuda.device_count())]


def local_workers(configs: list[TrainConfig], workers: int | None) -> tuple[int, list[str]]:
    """(worker processes, the GPU each worker is pinned to, in turn) for runs of one kind:
    GPU runs runs_per_gpu() per visible GPU (or `workers`, sharing the GPUs round-robin), CPU
    runs one per core (or `workers`); never more workers than runs. The GPU list is empty for
    CPU runs."""
    n = max(1, len(configs))
    if configs and uses_cuda(configs[0]):
        gpus = visible_gpus() or ["0"]
        return min(workers or len(gpus) * runs_per_gpu(), n), gpus
    return min(workers or os.cpu_count() or 1, n), []


def _local(configs: list[TrainConfig], root: Path, descs: list[str], workers: int | None,
           quiet: bool, address: str | None, desc: str, tracker: TrackerConfig | None,
           wait: bool) -> list[dict[str, Any] | None]:
    """GPU runs first, then CPU runs, each group with its own workers; results in order (None
    for a run another process holds, when not `wait`: runs.execute_if_free)."""
    out: list[dict[str, Any] | None] = [None] * len(configs)
    on_gpu = [uses_cuda(c) for c in configs]
    for gpu in (True, False):
        idx = [i for i, g in enumerate(on_gpu) if g == gpu]
        if idx:
            done = _local_group([configs[i] for i in idx], root, [descs[i] for i in idx],
                                workers, quiet, desc, tracker, wait)
            for i, r in zip(idx, done, strict=True):
                out[i] = r
    return out  # type: ignore[return-value]


def _local_group(configs: list[TrainConfig], root: Path, descs: list[str], workers: int | None,
                 quiet: bool, desc: str, tracker: TrackerConfig | None, wait: bool
                 ) -> list[dict[str, Any] | None]:
    # Independent runs side by side beat one multi-threaded run on small CPU models
    # (docs/design.md §8 Performance); on GPUs, one run per device.
    n, gpus = local_workers(configs, workers)
    if n == 1 and len(gpus) <= 1:  # in this process: it sees the one GPU, or runs on the CPU
        run = execute if wait else execute_if_free
        return [run(c, root, quiet=quiet, desc=d, tracker=tracker)
                for c, d in tqdm(list(zip(configs, descs, strict=True)), desc=desc,
                                 disable=quiet or len(configs) <= 1)]
    sink = None if tracker is None else tracker.model_dump()
    jobs = [(c.model_dump(mode="json"), str(root), d, -1 if quiet else i % n + 1, sink, wait)
            for i, (c, d) in enumerate(zip(configs, descs, strict=True))]
    return list(tqdm(pool_map(_quiet_or_not, jobs, n, gpus), total=len(jobs), desc=desc,
                     position=0, disable=quiet))


def pool_map(fn: Any, jobs: list[Any], workers: int, gpus: list[str]) -> list[Any]:
    """fn over jobs in `workers` spawned processes (process_pool); with `gpus`, worker k sees
    only gpus[k % len(gpus)] (CUDA_VISIBLE_DEVICES, set before the worker touches CUDA)."""
    pins: Queue[str] | None = None
    if gpus:
        pins = get_context("spawn").Queue()
        for k in range(workers):
            pins.put(gpus[k % len(gpus)])
    # a pool that survives a dead worker: its job's result is a WorkerDied (workers.py)
    return run_jobs(fn, jobs, workers, _start_worker, (os.getpid(), pins), pins)


def check_dead_workers(configs: list[TrainConfig], descs: list[str], results: list[Any],
                       root: Path) -> None:
    """After every other run has finished: the runs whose worker process died (killed by a
    signal: the out-of-memory killer's SIGKILL, say) are marked failed in their run.json, with
    the cause, and named in one error that says how to resume them."""
    from reasonlab.errors import ReasonlabError
    from reasonlab.store import mark_failed

    # a dead worker's run that another worker resumed and finished since is no failure
    dead = [(c, d, r) for c, d, r in zip(configs, descs, results, strict=True)
            if isinstance(r, WorkerDied) and load_result(run_dir_for(c, root)) is None]
    if not dead:
        return
    named = []
    for config, d, r in dead:
        run_dir = run_dir_for(config, root)
        mark_failed(run_dir, r.cause)
        named.append((f"{run_dir.name} ({d})", r.cause))
    what = (f"run {named[0][0]} did not finish: {named[0][1]}" if len(named) == 1 else
            f"{len(named)} runs did not finish: " + "; ".join(f"{n}: {c}" for n, c in named))
    them = "it from its last checkpoint" if len(named) == 1 else "them from their checkpoints"
    raise ReasonlabError(f"{what}; the other runs are done; run the same command again to "
                         f"resume {them}")


def process_pool(workers: int, pins: Queue[str] | None = None) -> ProcessPoolExecutor:
    """Spawned workers that exit when the process that started them dies (a kill -9 of the
    main process would otherwise leave them training on, a second writer for the next
    command; their run locks then go stale at once, their pids being gone); with `pins`, each
    worker takes one GPU from the queue."""
    return ProcessPoolExecutor(workers, mp_context=get_context("spawn"),
                               initializer=_start_worker, initargs=(os.getpid(), pins))


def _start_worker(parent: int, pins: Queue[str] | None) -> None:
    if pins is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = pins.get()
    _exit_with_parent(parent)


def _exit_with_parent(parent: int, every: float = 1.0) -> None:
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(1)  # no cleanup to wait for: the run resumes from its last checkpoint

    threading.Thread(target=watch, daemon=True, name="exit with parent").start()


def _quiet_or_not(job: tuple[dict[str, Any], str, str, int, dict[str, Any] | None, bool]
                  ) -> dict[str, Any] | None:
    config, root, desc, position, tracker, wait = job
    run = execute if wait else execute_if_free
    return run(TrainConfig.build(config), Path(root), quiet=position < 0, desc=desc,
               position=max(position, 0),
               tracker=None if tracker is None else TrackerConfig.build(tracker))


# ----------------------------------------------------------------------------- Ray


def _ray(configs: list[TrainConfig], root: Path, descs: list[str], workers: int | None,
         quiet: bool, address: str | None, desc: str, tracker: TrackerConfig | None,
         wait: bool) -> list[dict[str, Any] | None]:
    """One Ray task per run (`ray_resources`: 1 GPU for a CUDA run, else 1 CPU); Ray retries
    a task whose worker dies and the retry resumes from the checkpoint. `root` must be on a
    filesystem every node sees (the run store is shared, not copied)."""
    ray = connect_ray(address, workers)
    cluster_gpus = int(ray.cluster_resources().get("GPU", 0))
    asks = [ray_resources(c, cluster_gpus) for c in configs]
    on_cpu = sum(1 for c, a in zip(configs, asks, strict=True)
                 if c.device == "auto" and not a["num_gpus"])
    if on_cpu and not quiet:
        print(f"note: the Ray cluster has no GPU; {on_cpu} run(s) with device=auto train on "
              "the CPU", file=sys.stderr)
    remote = ray.remote(max_retries=RAY_RETRIES, retry_exceptions=False)(_ray_execute)
    root_s = str(Path(root).resolve())
    sink = None if tracker is None else tracker.model_dump()
    refs = [remote.options(**a).remote(c.model_dump(mode="json"), root_s, sink, wait)
            for c, a in zip(configs, asks, strict=True)]
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


def ray_resources(config: TrainConfig, cluster_gpus: int) -> dict[str, float]:
    """What a run's Ray task asks for (a CUDA run: 1/runs_per_gpu() of a GPU). `auto` is
    resolved against the cluster, not this machine: a GPU where the cluster has one (Ray then
    shows the task that GPU alone, and train() resolves `auto` to it), a CPU where it has none
    (Ray hides every GPU, so `auto` resolves to the CPU in the task)."""
    if config.device == "cuda" and not cluster_gpus:
        raise ConfigError("device='cuda' but the Ray cluster has no GPU; add GPU nodes "
                          "(ray start --num-gpus N) or use device=auto or device=cpu")
    if config.device == "cuda" or (config.device == "auto" and cluster_gpus):
        return {"num_cpus": 0, "num_gpus": 1 / runs_per_gpu()}  # type: ignore[dict-item]
    return {"num_cpus": 1, "num_gpus": 0}


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
    if not address:  # a local instance: its processes end with this one, even a killed one
        from reasonlab.orphans import reap_with_driver

        reap_with_driver(os.path.dirname(ray.__file__))
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


def _ray_get(ray: Any, ref: Any) -> dict[str, Any] | None:
    from reasonlab.errors import ReasonlabError

    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        if isinstance(e.cause, ReasonlabError):  # a user error: its one line, no traceback
            raise e.cause from None
        raise


def _ray_execute(config: dict[str, Any], root: str, tracker: dict[str, Any] | None,
                 wait: bool) -> dict[str, Any] | None:
    run = execute if wait else execute_if_free
    return run(TrainConfig.build(config), Path(root), quiet=True,
               tracker=None if tracker is None else TrackerConfig.build(tracker))
