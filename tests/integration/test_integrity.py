"""Every byte a verdict rests on is verified (issue 57): a finished run's result.json records
the SHA-256 of config.json, metrics.jsonl and its checkpoint's state.json (which records that of
state.safetensors, and its own); a checkpoint's state.json records config.json and the metrics
lines up to its step. Each file is damaged here in each state, finished and partial, and every
reader (reuse, resume, `runs`, `runs verify`, `export`) names it in one line and uses nothing."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

import reasonlab.train.loop as loop
from reasonlab.cli import main
from reasonlab.errors import CheckpointError
from reasonlab.runs import execute, load_result
from reasonlab.store import scan
from reasonlab.train.config import TrainConfig

TINY = {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
        "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32},
        "n_train": 64, "n_test": 32, "batch_size": 16, "steps": 4, "eval_every": 2,
        "ckpt_every": 2}


class Killed(BaseException):
    """A kill after the checkpoint of step 2 (not an Exception: nothing records it)."""


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    """A store holding the run finished, and one holding it partial at step 2 of 4."""
    finished = tmp_path_factory.mktemp("finished")
    execute(TrainConfig.build(TINY), finished, quiet=True)
    partial = tmp_path_factory.mktemp("partial")
    real = loop.save_checkpoint

    def dying(run_dir, step, *a, **kw):
        real(run_dir, step, *a, **kw)
        raise Killed

    mp = pytest.MonkeyPatch()
    mp.setattr(loop, "save_checkpoint", dying)
    with pytest.raises(Killed):
        execute(TrainConfig.build(TINY), partial, quiet=True)
    mp.undo()
    return {"finished": finished, "partial": partial}


def the_run(store: Path) -> Path:
    return next(p for p in (store / "runs").iterdir() if p.is_dir())


def edit_json(name: str, fn: Callable[[dict], None]) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        data = json.loads((run / name).read_text())
        fn(data)
        (run / name).write_text(json.dumps(data, indent=1))
    return damage


def edit_metrics(fn: Callable[[list[str]], list[str]]) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        lines = (run / "metrics.jsonl").read_text().splitlines()
        (run / "metrics.jsonl").write_text("".join(x + "\n" for x in fn(lines)))
    return damage


def alter_first_acc(lines: list[str]) -> list[str]:
    row = json.loads(lines[0])
    row["acc"] = row["acc"] + 0.25  # a plausible value, still valid JSON
    return [json.dumps(row), *lines[1:]]


def flip_tensor_byte(run: Path) -> None:
    path = run / "ckpt" / "state.safetensors"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01  # in the tensor data: the header still parses
    path.write_bytes(bytes(data))


# (damage, the file the error must name); each applies to both states unless marked
DAMAGE = {
    "metrics-garbage-line": (edit_metrics(lambda ls: [ls[0], '{"step": 2, "acc": 0.9}',
                                                      *ls[1:]]), "metrics.jsonl"),
    "metrics-altered-value": (edit_metrics(alter_first_acc), "metrics.jsonl"),
    "metrics-truncated": (lambda run: (run / "metrics.jsonl").write_text(""),
                          "metrics.jsonl"),
    "config-edited": (edit_json("config.json", lambda c: c.update(n_test=33)), "config.json"),
    "state-json-edited": (edit_json("ckpt/state.json", lambda m: m.update(config_hash="0" * 12)),
                          "ckpt/state.json"),
    "tensors-byte-flipped": (flip_tensor_byte, "ckpt/state.safetensors"),
}
FINISHED_ONLY = {
    "result-value-altered": (edit_json("result.json", lambda r: r["final"].update(acc=0.99)),
                             "result.json"),
}
CASES = [(state, name) for state in ("finished", "partial") for name in DAMAGE] + [
    ("finished", name) for name in FINISHED_ONLY]


def one_error_line(capsys: pytest.CaptureFixture[str], code: int) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.mark.parametrize("state,name", CASES)
def test_a_damaged_file_is_named_in_one_line_and_never_used(state, name, stores, tmp_path,
                                                            capsys):
    damage, file = {**DAMAGE, **FINISHED_ONLY}[name]
    store = tmp_path / "store"
    shutil.copytree(stores[state], store)
    run = the_run(store)
    damage(run)
    before = sorted((p.relative_to(run), p.read_bytes()) for p in run.rglob("*")
                    if p.is_file())

    (listed,) = scan(store)  # `reasonlab runs`
    assert listed.status == "corrupt" and listed.problem.startswith(file), listed
    code = main(["runs", "verify", "--store", str(store)])
    out = capsys.readouterr()
    assert code == 2 and out.out.splitlines() == [f"{run.name}: {listed.problem}"], out
    assert "1 of 1 runs are damaged" in out.err

    # never reused, never resumed (a resume would rebuild result.json from the metrics)
    with pytest.raises(CheckpointError, match=f"damaged: {file} ") as e:
        load_result(run)
        execute(TrainConfig.build(TINY), store, quiet=True)
    assert "\n" not in str(e.value)

    # never exported, whatever is asked for
    flag = ["--last-checkpoint"] if state == "partial" else []
    code = main(["export", str(run), "--out", str(tmp_path / "hf"), *flag])
    assert f"damaged: {file} " in one_error_line(capsys, code)
    assert not (tmp_path / "hf").exists()
    after = sorted((p.relative_to(run), p.read_bytes()) for p in run.rglob("*") if p.is_file())
    assert after == before  # nothing was touched


def test_whole_runs_verify_and_a_partial_run_exports_only_when_asked(stores, tmp_path, capsys):
    for state in ("finished", "partial"):
        assert main(["runs", "verify", "--store", str(stores[state])]) == 0
        assert "1 run(s) verified: none is damaged" in capsys.readouterr().out
    run = the_run(stores["partial"])
    code = main(["export", str(run), "--out", str(tmp_path / "a")])
    line = one_error_line(capsys, code)
    assert "has not finished (its last checkpoint is at step 2)" in line, line
    assert "--last-checkpoint" in line and not (tmp_path / "a").exists()
    assert main(["export", str(run), "--out", str(tmp_path / "b"), "--last-checkpoint"]) == 0
    card = (tmp_path / "b" / "README.md").read_text()
    assert "Unfinished run**: the weights of its last verified checkpoint, step 2 of 4" in card


def test_the_recorded_checksums_are_those_of_the_files(stores):
    """What result.json and state.json record, against hashes taken here independently."""
    import hashlib

    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    run = the_run(stores["finished"])
    sums = json.loads((run / "result.json").read_text())["sha256"]
    for name in ("config.json", "metrics.jsonl", "ckpt/state.json"):
        assert sums[name] == sha((run / name).read_bytes()), name
    part = the_run(stores["partial"])
    meta = json.loads((part / "ckpt" / "state.json").read_text())
    metrics = (part / "metrics.jsonl").read_bytes()
    assert meta["metrics_sha256"] == [len(metrics), sha(metrics)]
    assert meta["config_sha256"] == sha((part / "config.json").read_bytes())
    assert meta["sha256"] == sha((part / "ckpt" / "state.safetensors").read_bytes())


def test_a_resume_keeps_the_verified_lines_and_drops_later_ones(stores, tmp_path):
    """Lines written after the checkpoint (then killed) are replayed, not verified; the result
    is the uninterrupted run's, bit for bit, and result.json records its checksums."""
    store = tmp_path / "store"
    shutil.copytree(stores["partial"], store)
    run = the_run(store)
    with (run / "metrics.jsonl").open("a") as f:
        f.write('{"step": 3, "acc": 0.5}\n{"step": 4, "ac')  # after the checkpoint, then cut
    result = execute(TrainConfig.build(TINY), store, quiet=True)
    want = json.loads((the_run(stores["finished"]) / "result.json").read_text())
    assert result["final"] == want["final"] and result["curve"] == want["curve"]
    assert result["sha256"]["metrics.jsonl"] == want["sha256"]["metrics.jsonl"]
    assert load_result(run) is not None
