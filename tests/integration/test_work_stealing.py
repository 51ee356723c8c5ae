"""Several commands on one study and store share its runs (execution.execute_all): each trains
runs no other holds and waits at the end for the rest (here against a lock this test holds;
two real `reasonlab run` commands: tests/integration/test_store_writers.py). The SLURM path
(slurm.py) writes an sbatch array script whose tasks run that command, run here without SLURM:
the script is checked, then run as two array tasks at once; no run trains twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from reasonlab.cli import main
from reasonlab.execution import execute_all
from reasonlab.locking import RunLock, lock_path
from reasonlab.runs import load_result, run_dir_for
from reasonlab.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[2]
STUDY = "lego-extrapolation"
WAIT_S = 600
"""How long a test waits for another thread or process to reach the state it expects: polled,
so an idle machine passes in seconds, and only a hung run reaches it (issue 57: 60 s failed at
a load of 30-46)."""
RUN = ["run", STUDY, "--scale", "smoke", "--seeds", "2"]  # 4 runs: BERT, ALBERT x 2 seeds


def env(**more: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), **more}


def starts(store: Path) -> dict[str, list[int]]:
    """Run id -> pid of every start of the run (run.json)."""
    out = {}
    for path in (store / "runs").glob("*/run.json"):
        rec = json.loads(path.read_text())
        assert rec["status"] == "finished"
        out[rec["id"]] = [s["pid"] for s in rec["starts"]]
    return out


TINY = {"task": {"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32}, "n_train": 128,
        "n_test": 32, "batch_size": 16, "steps": 6, "eval_every": 3, "ckpt_every": 3,
        "threads": 1}


@pytest.mark.parametrize("workers", [1, 2])  # in this process; a pool of workers
def test_a_held_run_is_skipped_and_waited_for_at_the_end(tmp_path, workers):
    configs = [TrainConfig.build({**TINY, "seed": s}) for s in range(3)]
    held = run_dir_for(configs[0], tmp_path)
    held.parent.mkdir(parents=True)
    lock = RunLock(lock_path(held))
    lock.acquire()  # another live command holds the first run
    got: dict = {}
    thread = threading.Thread(target=lambda: got.update(
        results=execute_all(configs, tmp_path, workers=workers, quiet=True)))
    thread.start()
    try:
        # a generous overall limit, polled: the machine may be loaded (CI shares it)
        deadline = time.monotonic() + WAIT_S
        while not all(load_result(run_dir_for(c, tmp_path)) for c in configs[1:]):
            assert thread.is_alive() and time.monotonic() < deadline, "free runs not trained"
            time.sleep(0.1)
        time.sleep(1)
        assert thread.is_alive() and not held.exists()  # waiting, the held run untouched
    finally:
        lock.release()  # its holder stops without finishing it: the waiter trains it
    thread.join(WAIT_S)
    assert not thread.is_alive(), f"the held run was not trained within {WAIT_S} s"
    assert [r["id"] for r in got["results"]] == [run_dir_for(c, tmp_path).name for c in configs]
    for c in configs:
        record = json.loads((run_dir_for(c, tmp_path) / "run.json").read_text())
        assert record["status"] == "finished" and len(record["starts"]) == 1


def fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)


def sbatch_lines(script: str) -> dict[str, str]:
    out = {}
    for line in script.splitlines():
        if line.startswith("#SBATCH --"):
            key, _, value = line.removeprefix("#SBATCH --").partition("=")
            out[key] = value
    return out


@pytest.mark.slow
def test_the_slurm_path_runs_a_smoke_study_locally(tmp_path, capsys, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    fake(bin_dir, "sbatch", f'echo "sbatch $*" >> {calls}; echo "4242;cluster"')
    fake(bin_dir, "scontrol", f'echo "scontrol $*" >> {calls}')
    store = tmp_path / "store"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src"))
    argv = ["run", STUDY, "--scale", "smoke", "--executor", "slurm", "--array", "2",
            "--partition", "debug", "--time", "0:10:00", "--cpus-per-task", "1", "--mem", "4G",
            "--sbatch=--account=lab", "--out", str(store)]  # 2 runs: BERT, ALBERT
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("submitted SLURM job 4242: 2 array task(s)")
    (script_path,) = store.glob(f"{STUDY}/smoke/slurm/*.sbatch")
    assert calls.read_text().split() == ["sbatch", "--parsable", str(script_path)]
    script = script_path.read_text()
    opts = sbatch_lines(script)
    assert opts["array"] == "0-1" and opts["partition"] == "debug"
    assert opts["time"] == "0:10:00" and opts["cpus-per-task"] == "1" and opts["mem"] == "4G"
    assert opts["account"] == "lab" and "gres" not in opts and "requeue" in opts
    assert opts["signal"].startswith("B:USR1@")
    assert opts["output"] == f"{script_path.parent}/%A_%a.log"
    # the task command: the same `run` without --executor, on the absolute store
    assert (f"-m reasonlab.cli run {STUDY} --scale smoke --out {store} --workers 1 &"
            in script) and "--executor" not in script

    # two array tasks at once, as SLURM would start them; the first is told its time limit
    # is near (USR1), requeues itself with scontrol and still finishes its command
    tasks = [subprocess.Popen(["bash", str(script_path)], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=env(SLURM_ARRAY_JOB_ID="4242", SLURM_ARRAY_TASK_ID=str(k)))
             for k in range(2)]
    time.sleep(2)
    tasks[0].send_signal(signal.SIGUSR1)
    logs = [t.communicate(timeout=600)[0] for t in tasks]
    for t, log in zip(tasks, logs):
        assert t.returncode == 0, log[-3000:]
        assert "report: " in log
    assert "time limit near; requeueing array task 4242_0" in logs[0]
    assert "scontrol requeue 4242_0" in calls.read_text()
    runs = starts(store)
    assert len(runs) == 2 and all(len(v) == 1 for v in runs.values())
    assert (script_path.parent.parent / "report.md").exists()
    reports = [[line for line in log.splitlines() if line.startswith("report: ")] for log in logs]
    assert reports[0] == reports[1] == [f"report: {script_path.parent.parent / 'report.md'}"]


def test_slurm_errors_are_one_line_and_write_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nobin"))  # no sbatch
    store = tmp_path / "store"
    for argv, words in [
        ([*RUN, "--executor", "slurm", "--out", str(store)], "sbatch not found"),
        ([*RUN, "--partition", "gpu", "--out", str(store)], "--partition is an option of "
                                                            "--executor slurm"),
        ([*RUN, "--executor", "slurm", "--time", "4 hours", "--out", str(store)],
         "not a SLURM time"),
        ([*RUN, "--executor", "slurm", "--array", "0", "--out", str(store)], "array"),
        ([*RUN, "--executor", "slurm", "--sbatch", "account=lab", "--out", str(store)],
         "not an sbatch option"),
        (["run", "symbols-kernel", "--scale", "smoke", "--executor", "slurm", "--out",
          str(store)], "trains no runs"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and words in err, err
    assert not store.exists()
    # sbatch refuses the job (a partition the cluster lacks): one line, nothing left behind
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake(bin_dir, "sbatch", 'echo "sbatch: error: invalid partition specified: gpu" >&2; exit 1')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert main([*RUN, "--executor", "slurm", "--partition", "gpu", "--out", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: sbatch refused the job (sbatch: error: invalid partition")
    assert err.count("\n") == 1 and not store.exists()
