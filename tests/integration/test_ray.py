"""The Ray executor (`--executor ray`) against the local one, on a local Ray with 2 CPUs:
same verdicts and bitwise-same runs; a worker killed with SIGKILL mid-run is retried by Ray
and resumes from its checkpoint to a bitwise-identical result."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

from reasonlab.execution import execute_all
from reasonlab.runs import execute, run_dir_for
from reasonlab.studies import run_study
from reasonlab.train.config import TrainConfig

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'reasonlab[ray]')")

pytestmark = pytest.mark.slow
FILES = ("result.json", "metrics.jsonl", "ckpt/state.safetensors", "ckpt/state.json")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


def same_run_files(a, b):
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_smoke_study_on_ray_matches_local(local_ray, tmp_path):
    study = "lego-extrapolation"
    rep_ray, out_ray = run_study(study, "smoke", out=tmp_path / "ray", quiet=True,
                                 executor="ray")
    rep_loc, out_loc = run_study(study, "smoke", out=tmp_path / "local", workers=1, quiet=True)
    assert [(v.status, v.evidence) for v in rep_ray.verdicts] == [
        (v.status, v.evidence) for v in rep_loc.verdicts]
    assert (out_ray / "verdicts.json").read_text() == (out_loc / "verdicts.json").read_text()
    ids = sorted(p.name for p in (tmp_path / "ray" / "runs").iterdir())
    assert ids == sorted(p.name for p in (tmp_path / "local" / "runs").iterdir()) and ids
    for i in ids:
        same_run_files(tmp_path / "ray" / "runs" / i, tmp_path / "local" / "runs" / i)


def test_killed_ray_worker_is_retried_to_the_same_result(local_ray, tmp_path):
    config = TrainConfig.build({
        "task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 256, "n_test": 64, "batch_size": 16, "steps": 600, "eval_every": 20,
        "ckpt_every": 20})
    run_dir = run_dir_for(config, tmp_path / "ray")
    killed: dict[str, int] = {}

    def kill_after_first_checkpoint():
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            try:
                rec = json.loads((run_dir / "run.json").read_text())
                step = json.loads((run_dir / "ckpt" / "state.json").read_text())["step"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.01)
                continue
            if step >= 20 and rec.get("status") == "running":
                os.kill(rec["pid"], signal.SIGKILL)
                killed.update(pid=rec["pid"], step=step)
            time.sleep(0.01)

    watcher = threading.Thread(target=kill_after_first_checkpoint, daemon=True)
    watcher.start()
    (result,) = execute_all([config], tmp_path / "ray", quiet=True, executor="ray")
    watcher.join()
    assert killed, "the run finished before it could be killed"
    assert not (run_dir / "result.json.tmp").exists()
    starts = json.loads((run_dir / "run.json").read_text())["starts"]
    assert len(starts) == 2 and starts[0]["pid"] == killed["pid"]
    assert starts[1]["step"] >= killed["step"] > 0  # the retry resumed from a checkpoint
    reference = execute(config, tmp_path / "local", quiet=True)
    assert result == reference
    same_run_files(run_dir, run_dir_for(config, tmp_path / "local"))


def test_bad_address_is_one_line(tmp_path, capsys):
    from reasonlab.cli import main

    if ray.is_initialized():
        ray.shutdown()
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"task": {"name": "lego"}, "model": {}}))
    rc = main(["sweep", str(cfg), "steps=4,6", "--executor", "ray", "--address",
               "127.0.0.1:1", "--out", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: cannot connect to Ray") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
