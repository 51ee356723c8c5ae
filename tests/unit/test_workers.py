"""The worker pool (workers.py) outlives a dead worker: the job it ran comes back as a
WorkerDied with its cause, every other job runs to the end, and a GPU pin passes to the
worker that replaces the dead one. A job that raises still raises, with its remote traceback."""

import json
import os
import platform
import signal
import time
from multiprocessing import get_context

import pytest

from reasonlab.errors import ConfigError, ReasonlabError
from reasonlab.workers import WorkerDied, run_jobs


def job(x: int) -> tuple[int, int, str | None]:
    """x squared, with the worker's pid and GPU pin; job -1 kills its own worker, -2 raises."""
    if x == -1:
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    if x == -2:
        raise ConfigError("bad job")
    time.sleep(0.05)
    return x * x, os.getpid(), os.environ.get("CUDA_VISIBLE_DEVICES")


def pin_worker(pins) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = pins.get()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_dead_worker_fails_its_job_alone(workers):
    jobs = [1, 2, -1, 3, 4, 5]
    out = run_jobs(job, jobs, workers)
    assert isinstance(out[2], WorkerDied) and out[2].index == 2 and out[2].exitcode == -9
    assert out[2].cause == ("its worker process was killed by signal 9 (SIGKILL): out of "
                            "memory?")
    assert [r[0] for i, r in enumerate(out) if i != 2] == [1, 4, 9, 16, 25]
    if workers == 1:  # the jobs after the kill can only have run in a replacement worker
        before, after = {r[1] for r in out[:2]}, {r[1] for r in out[3:]}
        assert len(before) == len(after) == 1 and before != after


def test_the_replacement_worker_takes_the_dead_ones_gpu():
    pins = get_context("spawn").Queue()
    for g in ("g0", "g1"):
        pins.put(g)
    out = run_jobs(job, [-1, 1, 2, 3, -1, 4, 5, 6], 2, pin_worker, (pins,), pins)
    assert [i for i, r in enumerate(out) if isinstance(r, WorkerDied)] == [0, 4]
    alive = [r for r in out if not isinstance(r, WorkerDied)]
    assert [r[0] for r in alive] == [1, 4, 9, 16, 25, 36]
    assert {r[2] for r in alive} <= {"g0", "g1"}
    pids = {}
    for _, pid, g in alive:
        pids.setdefault(pid, g)
    assert all(g == pids[pid] for _, pid, g in alive)  # one pin per worker


def test_a_job_that_raises_raises_in_the_parent_with_its_traceback():
    with pytest.raises(ConfigError, match="bad job") as e:
        run_jobs(job, [1, -2, 3, 4, 5, 6, 7, 8], 1)
    assert "Traceback" in str(e.value.__cause__)


def test_exit_status_is_named():
    assert WorkerDied(0, 3).cause == "its worker process exited with status 3"
    assert WorkerDied(0, -11).cause == "its worker process was killed by signal 11 (SIGSEGV)"


def test_dead_runs_are_marked_failed_and_named_in_one_error(tmp_path):
    from reasonlab.execution import check_dead_workers
    from reasonlab.runs import run_dir_for
    from reasonlab.train.config import TrainConfig

    cfgs = [TrainConfig.build({"task": {"name": "lego"}, "model": {}, "seed": s})
            for s in range(3)]
    dead = run_dir_for(cfgs[1], tmp_path)
    dead.mkdir(parents=True)
    gone = json.loads('{"status": "running", "pid": 1, "starts": []}')
    (dead / "run.json").write_text(json.dumps(gone))
    lock = dead.parent / f".{dead.name}.lock"  # the dead worker's, left behind
    lock.write_text(json.dumps({"host": platform.node(), "pid": _dead_pid(), "token": "t"}))
    with pytest.raises(ReasonlabError) as e:
        check_dead_workers(cfgs, ["a", "b", "c"], [{}, WorkerDied(1, -9), {}], tmp_path)
    msg = str(e.value)
    assert msg.startswith(f"run {dead.name} (b) did not finish: its worker process was killed "
                          "by signal 9 (SIGKILL): out of memory?;")
    assert "run the same command again to resume it from its last checkpoint" in msg
    record = json.loads((dead / "run.json").read_text())
    assert record["status"] == "failed" and "killed by signal 9" in record["error"]
    assert "pid" not in record and not lock.exists()


def _dead_pid() -> int:
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                       capture_output=True, text=True)
    return int(p.stdout)
