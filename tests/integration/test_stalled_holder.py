"""A lock holder paused past its lease (SIGSTOP: Ctrl-Z, a frozen NFS client, a node swapping)
loses the run to a waiting command, which takes it over and finishes it. When the paused
process resumes it stops at its next write with one line saying who took the run over: the
run stays intact (no duplicated metric step, run.json finished, the folder kept) and bitwise
equal to a run nobody contended. Real processes; the lease shortened to 2 s in both."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasonlab.runs import execute, run_dir_for
from reasonlab.train.checkpoint import read_model_weights
from reasonlab.train.config import TrainConfig

CONFIG = {
    "task": {"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
    "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
    "n_train": 256, "n_test": 64, "batch_size": 16, "steps": 600, "eval_every": 10,
    "ckpt_every": 50, "threads": 1,
}

# the lease (STALE_S) of 60 s shortened to 2 s, the heartbeat to match, in this process only
SCRIPT = """
import sys
from reasonlab import locking
locking.STALE_S, locking.HEARTBEAT_S, locking.POLL_S = 2.0, 0.2, 0.1
from reasonlab.cli import main
sys.exit(main(sys.argv[1:]))
"""


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    return subprocess.Popen([sys.executable, "-c", SCRIPT, *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def lines(path: Path) -> list[dict]:
    try:
        return [json.loads(x) for x in path.read_text().splitlines()]
    except (FileNotFoundError, ValueError):
        return []


@pytest.mark.slow
def test_a_stalled_holder_resumes_harmlessly(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(CONFIG))
    store = tmp_path / "store"
    argv = ["train", str(cfg), "--out", str(store), "--quiet"]
    run_dir = run_dir_for(TrainConfig.build(CONFIG), store)

    first = start(argv, tmp_path)
    deadline = time.time() + 180
    # paused once it has a checkpoint and trains on (the second resumes from the checkpoint)
    while not ((run_dir / "ckpt" / "state.json").exists() and len(lines(
            run_dir / "metrics.jsonl")) >= 6):
        assert first.poll() is None, first.communicate()
        assert time.time() < deadline, "the first command never checkpointed"
        time.sleep(0.005)
    os.kill(first.pid, signal.SIGSTOP)
    try:
        assert not (run_dir / "result.json").exists(), "finished before it could be paused"
        second = start(argv, tmp_path)  # waits out the lease, takes the run over, finishes it
        rc2, _, err2 = second.wait(300), *second.communicate()
        assert rc2 == 0, err2
        finished = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    finally:
        os.kill(first.pid, signal.SIGCONT)
    rc1 = first.wait(120)
    out1, err1 = first.communicate()

    # the resumed first command: one clean line naming who took the run over
    assert rc1 == 2, err1
    assert err1.startswith(f"error: run {run_dir.name} was taken over by ") and err1.count(
        "\n") == 1, err1
    assert f"pid {second.pid}" in err1, err1
    assert out1 == ""

    # the second's run: intact, untouched since it finished, bitwise an uncontended run
    assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()} == finished
    steps = [m["step"] for m in lines(run_dir / "metrics.jsonl")]
    assert steps == list(range(10, 601, 10)), f"metric steps {steps}"
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "finished" and len(record["starts"]) == 2
    assert record["starts"][1]["pid"] == second.pid and record["starts"][1]["step"] > 0
    ref_root = tmp_path / "ref"
    ref = execute(TrainConfig.build(CONFIG), ref_root, quiet=True)
    assert json.loads((run_dir / "result.json").read_text()) == ref
    ours, theirs = read_model_weights(run_dir), read_model_weights(run_dir_for(
        TrainConfig.build(CONFIG), ref_root))
    assert ours.keys() == theirs.keys()
    assert all(ours[k].equal(theirs[k]) for k in ours)
    assert not [p.name for p in run_dir.iterdir() if ".tmp" in p.name or ".old" in p.name]
    assert not list((store / "runs").glob(".*.lock*"))
