"""One pool worker of `reasonlab run` killed (SIGKILL: what the kernel's out-of-memory killer
sends the biggest run): the study trains its other runs, then ends in one `error:` line naming
the run and how to resume it, no traceback; the run is marked failed with the cause, and the
same command run again resumes it and finishes the study."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def cli(args: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    return subprocess.Popen([sys.executable, "-m", "reasonlab.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def running(store: Path, main: int) -> tuple[Path, int] | None:
    """A run a worker (not the main process) is training now, and the worker's pid."""
    for rec in (store / "runs").glob("*/run.json"):
        try:
            data = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        if data.get("status") == "running" and data.get("pid") not in (None, main):
            return rec.parent, data["pid"]
    return None


@pytest.mark.slow
def test_a_killed_worker_ends_the_study_in_one_error_line_and_resumes(tmp_path):
    store = tmp_path / "store"
    argv = ["run", "lego-extrapolation", "--scale", "smoke", "--workers", "2", "--quiet",
            "--out", str(store)]
    p = cli(argv, tmp_path)
    deadline = time.time() + 240
    hit = None
    while hit is None:
        assert p.poll() is None, p.communicate()
        assert time.time() < deadline, "no worker started a run"
        hit = running(store, p.pid)
        time.sleep(0.02)
    run_dir, worker = hit
    os.kill(worker, signal.SIGKILL)
    rc = p.wait(300)
    out, err = p.communicate()

    assert rc == 2, err
    assert "Traceback" not in err, err
    assert err.startswith(f"error: run {run_dir.name} (") and err.count("\n") == 1, err
    assert ("did not finish: its worker process was killed by signal 9 (SIGKILL): out of "
            "memory?; the other runs are done; run the same command again to resume it from "
            "its last checkpoint") in err, err
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "failed" and "killed by signal 9" in record["error"], record
    others = [d for d in (store / "runs").iterdir() if d.is_dir() and d != run_dir]
    assert others and all((d / "result.json").is_file() for d in others)  # the study went on
    assert not (run_dir / "result.json").exists()

    again = cli(argv, tmp_path)
    rc, out, err = again.wait(300), *again.communicate()
    assert rc == 0, err
    assert f"report: {store / 'lego-extrapolation' / 'smoke' / 'report.md'}" in out
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "finished" and len(record["starts"]) == 2
    assert not list((store / "runs").glob(".*.lock"))
