"""The edges of issue 57's "Why 3": each ended in a traceback (or exited 0) and ends in one
`error:` line with exit status 2, having left nothing half-written; and a resume leaves no
`.ckpt.old` beside the checkpoint it verified."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest

import reasonlab.execution as execution
import reasonlab.train.checkpoint as checkpoint
from reasonlab.cli import main
from reasonlab.runs import execute, load_result, run_dir_for
from reasonlab.train.config import TrainConfig
from reasonlab.workers import WorkerDied

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 4, "eval_every": 2,
        "ckpt_every": 2}


def one_error_line(capsys: pytest.CaptureFixture[str], code: int) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


def files(folder: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(folder)), p.read_bytes()) for p in folder.rglob("*")
                  if p.is_file())


def test_a_worker_killed_after_its_result_gives_the_result(tmp_path, monkeypatch):
    """The worker wrote result.json, then died: the run is finished and its result is used
    (was: TypeError 'WorkerDied' object does not support item assignment)."""
    config = TrainConfig.build(TINY)

    def trains_then_dies(jobs, root, *a, **kw):
        out = []
        for k, c in enumerate(jobs):
            execute(c, root, quiet=True)
            out.append(WorkerDied(index=k, exitcode=-9))
        return out

    monkeypatch.setattr(execution, "_local", trains_then_dies)
    (result,) = execution.execute_all([config], tmp_path, quiet=True)
    assert isinstance(result, dict)
    assert result == load_result(run_dir_for(config, tmp_path))


def test_a_full_disk_at_a_checkpoint_is_one_line_with_the_path_and_size(tmp_path, monkeypatch,
                                                                       capsys):
    """ENOSPC while the checkpoint of step 4 is written: one line naming the folder and the
    bytes it needs; the checkpoint of step 2 stays whole and the same command resumes from it
    to the uninterrupted run's result."""
    config_file = tmp_path / "tiny.json"
    config_file.write_text(json.dumps(TINY))
    real_open = open
    need = {}

    def full(path, mode="r", *a, **kw):
        if str(path).endswith("state.safetensors") and "w" in mode and "/.ckpt.tmp." in str(
                path) and need.setdefault("armed", 0) >= 1:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        if str(path).endswith("state.safetensors") and "w" in mode:
            need["armed"] = need.get("armed", 0) + 1
        return real_open(path, mode, *a, **kw)

    monkeypatch.setattr(checkpoint, "open", full, raising=False)
    store = tmp_path / "store"
    code = main(["train", str(config_file), "--out", str(store), "--quiet"])
    line = one_error_line(capsys, code)
    run = run_dir_for(TrainConfig.build(TINY), store)
    assert f"no space left to write the checkpoint of step 4 into {run / 'ckpt'}" in line, line
    assert "needs " in line and " MB" in line and "run the same command again" in line
    assert json.loads((run / "ckpt" / "state.json").read_text())["step"] == 2
    assert not list(run.glob(".ckpt.tmp*")) and not (run / "result.json").exists()
    monkeypatch.undo()

    assert main(["train", str(config_file), "--out", str(store), "--quiet"]) == 0
    whole = tmp_path / "whole"
    want = execute(TrainConfig.build(TINY), whole, quiet=True)
    assert load_result(run)["curve"] == want["curve"]


def test_a_resume_leaves_no_ckpt_old(tmp_path):
    """Killed after the last checkpoint's renames, before `.ckpt.old` went; or between them
    (only `.ckpt.old` holds it): the resume verifies it, and `.ckpt.old` is gone after."""
    config = TrainConfig.build(TINY)
    done = tmp_path / "done"
    want = execute(config, done, quiet=True)
    for case in ("after-renames", "between-renames"):
        store = tmp_path / case
        shutil.copytree(done, store)
        run = run_dir_for(config, store)
        (run / "result.json").unlink()
        if case == "after-renames":
            shutil.copytree(run / "ckpt", run / ".ckpt.old")
        else:
            (run / "ckpt").rename(run / ".ckpt.old")
        result = execute(config, store, quiet=True)
        assert result["curve"] == want["curve"], case
        assert not (run / ".ckpt.old").exists() and (run / "ckpt" / "state.json").is_file()


def test_an_impossible_model_size_is_refused_before_anything_is_built(tmp_path, capsys):
    """d_model=2**40 overflowed torch's storage size in the free-disk check (meta device)."""
    code = main(["run", "lego-probes", "--scale", "smoke", "--out", str(tmp_path / "s"),
                 f"model.d_model={2**40}", "--quiet"])
    assert "is beyond any machine's memory" in one_error_line(capsys, code)
    assert not (tmp_path / "s" / "runs").exists()


def test_a_data_export_too_large_for_memory_is_refused_before_drawing(tmp_path, capsys):
    pytest.importorskip("datasets")
    code = main(["data", "export", "lego", "--n-train", str(10**12), "--n-test", "10",
                 "--out", str(tmp_path / "d"), "--quiet"])
    line = one_error_line(capsys, code)
    assert "need about" in line and "lower --n-train" in line, line
    assert not (tmp_path / "d").exists()


def test_new_family_into_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "afile").write_text("mine")
    for out in (tmp_path / "afile", tmp_path / "afile" / "deeper"):
        code = main(["new", "family", "zzz", "--out", str(out)])
        assert "a file, not a folder" in one_error_line(capsys, code)
    assert files(tmp_path) == [("afile", b"mine")]


def test_a_bad_slurm_time_is_refused_by_a_dry_run_too(tmp_path, capsys):
    code = main(["run", "lego-probes", "--scale", "smoke", "--executor", "slurm", "--time",
                 "99:99:99x", "--dry-run", "--out", str(tmp_path / "s")])
    assert "is not a SLURM time" in one_error_line(capsys, code)
