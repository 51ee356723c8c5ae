"""The tracker sink (tracking.py): every metrics line a run writes, mirrored live into
TensorBoard event files that TensorBoard's own reader parses; a resumed run shows every step
once; metrics.jsonl stays the record."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader  # noqa: E402

from reasonlab import tracking  # noqa: E402
from reasonlab.cli import main  # noqa: E402
from reasonlab.runs import execute, run_dir_for  # noqa: E402
from reasonlab.tracking import TensorBoardSink, TrackerConfig  # noqa: E402
from reasonlab.train.config import TrainConfig  # noqa: E402
from reasonlab.train.loop import read_metrics, train  # noqa: E402

CONFIG = dict(
    task={"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
    model=dict(d_model=16, n_layers=1, n_heads=2, d_mlp=32),
    n_train=256, n_test=64, n_val=32, batch_size=32, steps=40, eval_every=5, ckpt_every=10,
)


def config(**over) -> TrainConfig:
    return TrainConfig.build({**CONFIG, **over})


def raw_points(folder: Path) -> Counter:
    """(tag, step) of every scalar in every event file of the folder, read record by record
    (no reader's de-duplication)."""
    seen: Counter = Counter()
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for event in EventFileLoader(str(path)).Load():
            for v in event.summary.value:
                seen[(v.tag, event.step)] += 1
    return seen


def assert_mirrors(folder: Path, rows: list[dict]) -> None:
    """TensorBoard's reader finds every logged step of every metric, with its value (float32:
    what an event file stores), and each point once in the files themselves."""
    acc = EventAccumulator(str(folder))
    acc.Reload()
    tags = set(acc.Tags()["scalars"]) - {tracking.STEP_LOSS}  # per step (test_trackers.py)
    expected = dict(tracking.scalars(rows[-1]))
    assert {"acc", "loss", "train_loss", "lr", "acc_by_depth/0"} <= tags
    assert ("val/acc" in tags) == ("val" in rows[-1])
    assert tags == set(expected)
    steps = [r["step"] for r in rows]
    for tag in tags:
        events = acc.Scalars(tag)
        assert [e.step for e in events] == steps, tag
        want = [dict(tracking.scalars(r))[tag] for r in rows]
        assert np.array_equal(np.float32([e.value for e in events]), np.float32(want)), tag
    points = raw_points(folder)
    assert set(points.values()) == {1}
    metrics = [p for p in points  # not the per-step losses nor the hyperparameters' record
               if p[0] != tracking.STEP_LOSS and not p[0].startswith("_hparams_/")]
    assert len(metrics) == len(tags) * len(steps)


def test_a_run_with_the_sink_leaves_every_step_in_tensorboard(tmp_path):
    tracker = TrackerConfig(name="tensorboard")
    result = execute(config(), tmp_path, quiet=True, tracker=tracker)
    run = run_dir_for(config(), tmp_path)
    assert_mirrors(run / "tb", read_metrics(run))
    assert [r["step"] for r in result["curve"]] == list(range(5, 41, 5))
    # off by default: a run without a tracker writes no event file
    other = config(seed=1)
    execute(other, tmp_path, quiet=True)
    assert not (run_dir_for(other, tmp_path) / "tb").exists()


class Killed(Exception):
    pass


class DiesAfter(TensorBoardSink):
    """A sink whose process is killed right after it mirrored the line of step `at` (a step
    after the last checkpoint, so the resumed run logs it again)."""

    def __init__(self, folder: Path, at: int):
        super().__init__(folder)
        self.at = at

    def log(self, row):
        super().log(row)
        if row["step"] == self.at:
            raise Killed


def test_a_resumed_run_shows_every_step_once(tmp_path):
    c = config()
    full = train(c, tmp_path / "full", quiet=True)
    run = tmp_path / "resumed"
    with pytest.raises(Killed):  # checkpoint at 20, lines of 25 in metrics.jsonl and events
        train(c, run, quiet=True, sink=DiesAfter(run / "tb", at=25))
    assert raw_points(run / "tb")[("acc", 25)] == 1
    assert [r["step"] for r in read_metrics(run)] == [5, 10, 15, 20, 25]
    sink = TensorBoardSink(run / "tb")
    final = train(c, run, quiet=True, sink=sink)
    sink.close()
    assert final == full
    rows = read_metrics(run)
    assert rows == read_metrics(tmp_path / "full")  # the record of truth, bitwise
    assert_mirrors(run / "tb", rows)  # 25 once (not 25 of the killed process and 25 again)


def test_a_curve_cut_short_is_rebuilt_when_the_run_is_reused(tmp_path):
    c = config()
    run = run_dir_for(c, tmp_path)
    with pytest.raises(Killed):  # mirrored up to step 25, then killed
        train(c, run, quiet=True, sink=DiesAfter(run / "tb", at=25))
    execute(c, tmp_path, quiet=True)  # resumed to the end without the tracker
    assert max(step for _, step in raw_points(run / "tb")) == 25
    execute(c, tmp_path, quiet=True, tracker=TrackerConfig(name="tensorboard"))  # reused
    assert_mirrors(run / "tb", read_metrics(run))


def test_tracker_dir_holds_one_folder_per_run_and_reused_runs_are_backfilled(
        tmp_path, capsys, monkeypatch):
    for k in (tracking.TRACKER, tracking.TRACKER_DIR):  # what the CLI sets, undone after
        monkeypatch.setenv(k, "")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(CONFIG))
    store, tb = tmp_path / "store", tmp_path / "tb"
    argv = ["train", str(cfg), "--out", str(store), "--quiet", "--tracker", "tensorboard",
            "--tracker-dir", str(tb)]
    assert main(argv) == 0
    run = run_dir_for(config(), store)
    assert not (run / "tb").exists()  # the named folder instead
    files = sorted((tb / run.name).glob("events.*"))
    assert len(files) == 1
    assert_mirrors(tb / run.name, read_metrics(run))
    assert main(argv) == 0  # reused: nothing written twice
    assert sorted((tb / run.name).glob("events.*")) == files
    # a tracker folder that never saw the run gets its curve when a command reuses it
    assert main(argv[:-1] + [str(tmp_path / "tb2")]) == 0
    assert_mirrors(tmp_path / "tb2" / run.name, read_metrics(run))
    # the next command in this process without --tracker mirrors nothing (the executors of
    # `run` and `sweep` read the choice from the environment)
    assert tracking.from_env() is not None
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**CONFIG, "seed": 1}))
    assert main(["train", str(other), "--out", str(store), "--quiet"]) == 0
    assert not (run_dir_for(config(seed=1), store) / "tb").exists()
    assert tracking.from_env() is None
    capsys.readouterr()
    assert main(["train", str(cfg), "--out", str(store), "--tracker-dir", str(tb)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --tracker-dir needs --tracker") and err.count("\n") == 1
    (tmp_path / "file").write_text("x")
    assert main(argv[:-1] + [str(tmp_path / "file" / "tb")]) == 2
    assert "is a file" in capsys.readouterr().err


@pytest.mark.slow
def test_a_study_mirrors_every_run_it_trains(tmp_path, monkeypatch):
    for k in (tracking.TRACKER, tracking.TRACKER_DIR):  # what the CLI sets, undone after
        monkeypatch.setenv(k, "")
    tb = tmp_path / "tb"
    assert main(["run", "lego-extrapolation", "--scale", "smoke", "--out", str(tmp_path),
                 "--quiet", "--workers", "2", "--tracker", "tensorboard", "--tracker-dir",
                 str(tb)]) == 0
    study = json.loads((tmp_path / "lego-extrapolation" / "smoke" / "study.json").read_text())
    ids = {r["id"] for r in study["runs"]}
    assert {p.name for p in tb.iterdir()} == ids  # spawned pool workers got the tracker too
    for run_id in ids:
        assert_mirrors(tb / run_id, read_metrics(tmp_path / "runs" / run_id))
