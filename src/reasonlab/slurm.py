"""SLURM: one job array whose tasks all run the same `reasonlab run` command on a shared store
(`reasonlab run STUDY --executor slurm --partition P --gpus G --time T --array N`).

Each array task is an ordinary `reasonlab run` against the store every node mounts. The runs'
locks split the work (execution.execute_all): a task trains the runs no other task holds,
then waits for the rest and writes the report, as two commands started by hand on one study
would. So nothing coordinates the tasks but the store, a task may start late or on any node,
and a task that dies leaves a run the others take over from its checkpoint.

Why a plain sbatch script and not submitit. submitit is the usual library for sending Python
work to SLURM, but it pickles the submitted callable and its arguments into the job folder and
unpickles them on the node: the lab's files stay pickle-free (docs/design.md §4), and a pickle
ties the job to the exact code that wrote it. The script written here is the whole job, in
plain text: its #SBATCH lines and the one command, which a user can read, edit, submit again
with `sbatch`, or run on a laptop (the tests run it locally, without SLURM). What submitit
adds beyond that (requeue at the time limit, logs per task) is a few lines of the script.

Time limits. SLURM signals the script USR1 `SIGNAL_S` seconds before a task's limit
(`--signal=B:USR1@...`); the script then requeues its own array task (`scontrol requeue`, at
most `requeues` times: SLURM_RESTART_COUNT counts them) and goes on until SLURM stops it. The
requeued task runs the same command: finished runs are reused, and the run that was cut off is
resumed from its last checkpoint, ending bitwise equal to an uninterrupted run on the same
hardware (docs/design.md §3), once its lock is judged stale (at once on the same node, after
60 s without a heartbeat from another; locking.py). Work done since the last checkpoint
(`ckpt_every` steps) is what a limit costs.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

from pydantic import Field, field_validator

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError

SIGNAL_S = 120
"""Seconds before a task's time limit at which SLURM signals the script to requeue itself."""
TIME_RE = re.compile(r"(\d+-)?\d+(:\d{1,2}){0,2}|UNLIMITED|INFINITE")
"""SLURM's --time forms: minutes, minutes:seconds, hours:minutes:seconds, days-hours,
days-hours:minutes, days-hours:minutes:seconds."""


class SlurmConfig(StrictModel):
    """The job array of `reasonlab run --executor slurm`."""

    array: int = Field(ge=1, le=10_000)
    """Array tasks: commands that share the study's runs (at most one run each at a time on a
    GPU task unless --runs-per-gpu, so more tasks than runs left only wait)."""
    partition: str | None = None
    """SLURM partition; None: the cluster's default."""
    gpus: int = Field(0, ge=0)
    """GPUs per array task (--gres=gpu:G); 0 trains on CPUs."""
    cpus_per_task: int | None = Field(None, ge=1)
    """CPUs per array task; None: the cluster's default."""
    mem: str | None = None
    """Memory per array task in SLURM's form (32G); None: the cluster's default."""
    time: str | None = None
    """Time limit per array task in SLURM's form (4:00:00, 1-12:00:00); None: the
    partition's default."""
    requeues: int = Field(3, ge=0)
    """Times an array task requeues itself at its time limit."""
    sbatch: tuple[str, ...] = ()
    """More #SBATCH options, as written after `#SBATCH ` (--account=lab, --qos=high)."""

    @field_validator("time")
    @classmethod
    def _time(cls, v: str | None) -> str | None:
        if v is not None and TIME_RE.fullmatch(v) is None:
            raise ValueError(f"{v!r} is not a SLURM time (minutes, HH:MM:SS or D-HH:MM:SS)")
        return v

    @field_validator("partition", "mem")
    @classmethod
    def _word(cls, v: str | None) -> str | None:
        if v is not None and (not v or any(c.isspace() for c in v)):
            raise ValueError(f"{v!r} must be one word")
        return v

    @field_validator("sbatch")
    @classmethod
    def _options(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for o in v:
            if not o.startswith("-") or "\n" in o:
                raise ValueError(f"{o!r} is not an sbatch option (write e.g. --account=lab)")
        return v


def script(config: SlurmConfig, name: str, command: list[str], workdir: Path, logs: Path,
           env: dict[str, str]) -> str:
    """The sbatch script: #SBATCH lines, then `command` run from `workdir` with `env`, under a
    USR1 trap that requeues the array task near its time limit."""
    lines = ["#!/bin/bash", f"#SBATCH --job-name={name}",
             f"#SBATCH --array=0-{config.array - 1}"]
    if config.partition is not None:
        lines.append(f"#SBATCH --partition={config.partition}")
    if config.gpus:
        lines.append(f"#SBATCH --gres=gpu:{config.gpus}")
    if config.cpus_per_task is not None:
        lines.append(f"#SBATCH --cpus-per-task={config.cpus_per_task}")
    if config.mem is not None:
        lines.append(f"#SBATCH --mem={config.mem}")
    if config.time is not None:
        lines.append(f"#SBATCH --time={config.time}")
    lines += [f"#SBATCH --output={logs}/%A_%a.log", "#SBATCH --open-mode=append",
              f"#SBATCH --signal=B:USR1@{SIGNAL_S}", "#SBATCH --requeue"]
    lines += [f"#SBATCH {o}" for o in config.sbatch]
    run = " ".join(shlex.quote(c) for c in command)
    exports = [f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items())]
    return "\n".join([*lines, f"""
# Written by reasonlab (slurm.py). Every array task runs the command below against the same
# store: each trains the runs no other task holds, then waits for the rest and writes the
# report. Near the time limit a task requeues itself (at most {config.requeues} times); the
# requeued task resumes its run from the last checkpoint. Resubmit with `sbatch` this file;
# run it without SLURM with `SLURM_ARRAY_TASK_ID=0 bash` this file.
set -u
cd {shlex.quote(str(workdir))}
{chr(10).join(exports)}
requeue() {{
  if [ "${{SLURM_RESTART_COUNT:-0}}" -lt {config.requeues} ]; then
    echo "reasonlab: time limit near; requeueing array task \\
${{SLURM_ARRAY_JOB_ID:-?}}_${{SLURM_ARRAY_TASK_ID:-?}} (its run resumes from its checkpoint)" >&2
    scontrol requeue "${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"
  fi
}}
trap requeue USR1
{run} &
child=$!
while true; do  # a trapped signal ends `wait` early: wait again until the command ends
  wait "$child"
  status=$?
  kill -0 "$child" 2>/dev/null || exit "$status"
done
"""])


def sbatch_path() -> str:
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise ConfigError("sbatch not found on PATH: --executor slurm submits from a machine "
                          "of the SLURM cluster (a login node)")
    return sbatch


def submit(path: Path) -> str:
    """`sbatch --parsable path`; the job id."""
    sbatch = sbatch_path()
    p = subprocess.run([sbatch, "--parsable", str(path)], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        first = (p.stderr.strip() or p.stdout.strip() or f"exit status {p.returncode}"
                 ).splitlines()[0]
        raise ConfigError(f"sbatch refused the job ({first}); check --partition, --gpus, "
                          "--time and the --sbatch options")
    return p.stdout.strip().split(";")[0]
