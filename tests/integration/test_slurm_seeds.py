"""The SLURM array tasks run the submitted command's study with its --seeds (issue 57: a
mutant dropping --seeds from the tasks' command survived: each task would then train the
study's default seeds and write a report of other runs than the array was sized for)."""

from __future__ import annotations

import os
import shlex

from reasonlab.cli import main

STUDY = "lego-extrapolation"


def test_the_array_tasks_command_keeps_the_seeds(tmp_path, capsys, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sbatch = bin_dir / "sbatch"
    sbatch.write_text('#!/bin/sh\necho "4242;cluster"\n')  # submits nothing
    sbatch.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    store = tmp_path / "store"
    for seeds, runs in ((2, 4), (3, 6)):  # BERT and ALBERT per seed
        assert main(["run", STUDY, "--scale", "smoke", "--seeds", str(seeds), "--executor",
                     "slurm", "--cpus-per-task", "1", "--out", str(store)]) == 0
        assert capsys.readouterr().out.startswith(f"submitted SLURM job 4242: {runs} array")
        (script,) = store.glob(f"{STUDY}/smoke/slurm/*.sbatch")
        command = next(line for line in script.read_text().splitlines()
                       if "-m reasonlab.cli run" in line)
        words = shlex.split(command.rstrip(" &"))
        assert words[words.index("--seeds") + 1] == str(seeds), command
