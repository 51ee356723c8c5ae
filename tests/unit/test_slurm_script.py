"""The sbatch script of `--executor slurm` (slurm.py), run by bash without SLURM: its command's
exit status is the task's, and USR1 (SLURM's warning before the time limit) requeues the array
task through scontrol at most `requeues` times, without stopping the command."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from reasonlab.errors import ConfigError
from reasonlab.slurm import SlurmConfig, script


def run_script(tmp_path: Path, restarts: int, signal_it: bool, requeues: int = 2) -> tuple[
        int, str, str]:
    calls = tmp_path / "calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "scontrol").write_text(f'#!/bin/bash\necho "$*" >> {calls}\n')
    (bin_dir / "scontrol").chmod(0o755)
    text = script(SlurmConfig(array=3, requeues=requeues), "job",
                  ["bash", "-c", "sleep 2; echo done; exit 7"], tmp_path, tmp_path / "logs",
                  {"FOO": "a b"})
    path = tmp_path / "job.sbatch"
    path.write_text(text)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_ARRAY_JOB_ID": "9",
           "SLURM_ARRAY_TASK_ID": "2", "SLURM_RESTART_COUNT": str(restarts)}
    p = subprocess.Popen(["bash", str(path)], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if signal_it:
        time.sleep(0.7)
        p.send_signal(signal.SIGUSR1)
    out, err = p.communicate(timeout=30)
    return p.returncode, out + err, calls.read_text() if calls.exists() else ""


def test_usr1_requeues_the_task_and_the_command_runs_to_its_end(tmp_path):
    rc, log, calls = run_script(tmp_path, restarts=1, signal_it=True)
    assert rc == 7 and "done" in log  # the command's own status, after it finished
    assert calls.split() == ["requeue", "9_2"]
    assert "requeueing array task 9_2" in log


def test_no_requeue_past_the_bound_and_none_without_the_signal(tmp_path):
    rc, log, calls = run_script(tmp_path, restarts=2, signal_it=True)  # 2 of 2 used
    assert rc == 7 and calls == ""
    rc, log, calls = run_script(tmp_path, restarts=0, signal_it=False)
    assert rc == 7 and calls == ""


def test_the_header_says_what_was_asked():
    text = script(SlurmConfig(array=4, partition="gpu", gpus=2, time="1-12:00:00", mem="64G",
                              cpus_per_task=8, sbatch=("--account=lab", "--qos=high")),
                  "reasonlab-x", ["python", "-m", "reasonlab.cli", "run", "x", "k=[1, 2]"],
                  Path("/w"), Path("/logs"), {})
    head = [line for line in text.splitlines() if line.startswith("#SBATCH")]
    assert head == ["#SBATCH --job-name=reasonlab-x", "#SBATCH --array=0-3",
                    "#SBATCH --partition=gpu", "#SBATCH --gres=gpu:2",
                    "#SBATCH --cpus-per-task=8", "#SBATCH --mem=64G",
                    "#SBATCH --time=1-12:00:00", "#SBATCH --output=/logs/%A_%a.log",
                    "#SBATCH --open-mode=append", "#SBATCH --signal=B:USR1@120",
                    "#SBATCH --requeue", "#SBATCH --account=lab", "#SBATCH --qos=high"]
    assert "python -m reasonlab.cli run x 'k=[1, 2]' &" in text  # shell-quoted


@pytest.mark.parametrize("time_", ["30", "30:00", "4:00:00", "2-12", "2-12:30", "2-12:30:00",
                                   "UNLIMITED"])
def test_slurm_time_forms_are_accepted(time_):
    assert SlurmConfig.build({"array": 1, "time": time_}).time == time_


@pytest.mark.parametrize("bad", [{"time": "4h"}, {"time": "1:2:3:4"}, {"array": 0},
                                 {"gpus": -1}, {"partition": "a b"},
                                 {"sbatch": ["account=lab"]}, {"sbatch": ["--a\n--b"]}])
def test_bad_slurm_options_are_config_errors(bad):
    with pytest.raises(ConfigError):
        SlurmConfig.build({"array": 1, **bad})
