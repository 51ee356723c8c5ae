"""Several commands on one study and store share its runs (execution.execute_all): each trains
runs no other holds, waits at the end for the rest, and writes the report; no run trains
twice. The SLURM path (slurm.py) writes an sbatch array script whose tasks run that command,
run here without SLURM: the script is checked, then run as two array tasks at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasonlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
STUDY = "lego-extrapolation"
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


@pytest.mark.slow
def test_two_commands_on_one_study_train_different_runs_and_both_write_the_report(tmp_path):
    # runs long enough (150 steps) that neither command finishes all four before the other
    # has started
    argv = [sys.executable, "-m", "reasonlab.cli", *RUN, "--workers", "1", "--out",
            str(tmp_path), "steps=150"]
    procs = [subprocess.Popen(argv, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
        assert "report:" in out  # each wrote the report (in turn: the report lock)
    # ... from the same results: the same verdicts, evidence and report path
    assert outs[0][0] == outs[1][0] and outs[0][0].count("\n") >= 3  # verdicts, report:
    runs = starts(tmp_path)
    assert len(runs) == 4
    assert all(len(v) == 1 for v in runs.values()), runs  # no run trained twice
    trained = {pid for v in runs.values() for pid in v}
    assert trained == {p.pid for p in procs}, (runs, [p.pid for p in procs])  # both trained
    folder = tmp_path / STUDY
    (report,) = folder.glob("*/report.md")
    study = json.loads((report.parent / "study.json").read_text())
    assert {r["id"] for r in study["runs"]} == set(runs)
    assert not list(folder.glob("*/.report.lock"))


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
    argv = [*RUN, "--executor", "slurm", "--array", "2", "--partition", "debug", "--time",
            "0:10:00", "--cpus-per-task", "1", "--mem", "4G", "--sbatch=--account=lab",
            "--out", str(store)]
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
    assert (f"-m reasonlab.cli run {STUDY} --scale smoke --out {store} --seeds 2 --workers 1 "
            "&") in script and "--executor" not in script

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
    assert len(runs) == 4 and all(len(v) == 1 for v in runs.values())
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
