"""The trackers (tracking.py, tracking_sinks.py) read back through each library's own reader:
TensorBoard's EventAccumulator, W&B's offline run file decoded with W&B's own record schema,
MLflow's client. Each holds the run's hyperparameters (the resolved config), every evaluation
of metrics.jsonl and the loss of every optimiser step; a tracked run trains to the same bits as
an untracked one; a resumed run shows every step once, per-step losses included."""

from __future__ import annotations

import json
import struct
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("tensorboard")
pytest.importorskip("wandb")
pytest.importorskip("mlflow")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402

from reasonlab.cli import main  # noqa: E402
from reasonlab.runs import execute, run_dir_for  # noqa: E402
from reasonlab.tracking import (STEP_LOSS, TrackerConfig, hparams, open_sink,  # noqa: E402
                                param_text, scalars)
from reasonlab.train.config import TrainConfig  # noqa: E402
from reasonlab.train.loop import read_metrics, train  # noqa: E402

CONFIG = dict(
    task={"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
    model=dict(d_model=16, n_layers=1, n_heads=2, d_mlp=32),
    n_train=256, n_test=64, n_val=32, batch_size=32, steps=40, eval_every=5, ckpt_every=10,
)
TRACKERS = ["tensorboard", "wandb", "mlflow"]


@pytest.fixture(autouse=True)
def local_wandb(tmp_path, monkeypatch):
    """W&B offline, its settings and caches in the test's folder, not the home directory."""
    monkeypatch.setenv("WANDB_MODE", "offline")
    for key in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(key, str(tmp_path / "wandb-home"))


def config(**over) -> TrainConfig:
    return TrainConfig.build({**CONFIG, **over})


# -- each library's reader: {tag: {step: value}} and the hyperparameters as it stores them --

def read_tensorboard(folder: Path) -> tuple[dict, dict]:
    acc = EventAccumulator(str(folder))
    acc.Reload()
    curves = {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}
    content = acc.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    start = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    params = {k: json.loads(json.dumps(getattr(v, v.WhichOneof("kind"))))
              for k, v in start.hparams.items()}
    return curves, params


def wandb_records(path: Path):
    """The records of a .wandb file: W&B's own protobuf Record, in the LevelDB log framing the
    file uses (W&B ships no Python reader for it today)."""
    from wandb.proto import wandb_internal_pb2

    data, pos, buf = path.read_bytes(), 7, b""
    assert data[:4] == b":W&B"
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        _, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if left < 7 or (length == 0 and kind == 0):  # the rest of a block is padding
            pos += left
            continue
        if pos + 7 + length > len(data):  # still being written
            return
        buf += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a whole record, or the last piece of one
            yield wandb_internal_pb2.Record.FromString(buf)
            buf = b""


def read_wandb(folder: Path) -> tuple[dict, dict]:
    (run,) = folder.glob("wandb/offline-run-*/run-*.wandb")  # one W&B run per reasonlab run
    # W&B's own process writes the file, and may still be at it when finish() has returned:
    # its run is whole once the exit record is there
    deadline = time.monotonic() + 60
    while not any(r.WhichOneof("record_type") == "exit" for r in wandb_records(run)):
        assert time.monotonic() < deadline, f"{run} has no exit record"
        time.sleep(0.2)
    curves: dict = {}
    params = {}
    for record in wandb_records(run):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            params |= {u.key: json.loads(u.value_json) for u in record.run.config.update}
        elif kind == "history":
            items = {"/".join(i.nested_key) or i.key: json.loads(i.value_json)
                     for i in record.history.item}
            for tag, value in items.items():
                if not tag.startswith("_"):
                    curves.setdefault(tag, {})[items["_step"]] = value
    params.pop("_wandb", None)
    return curves, params


def read_mlflow(folder: Path) -> tuple[dict, dict]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=folder.resolve().as_uri())
    (run,) = client.search_runs([client.get_experiment_by_name("reasonlab").experiment_id])
    curves = {tag: {m.step: m.value for m in client.get_metric_history(run.info.run_id, tag)}
              for tag in run.data.metrics}
    return curves, run.data.params


READERS = {"tensorboard": read_tensorboard, "wandb": read_wandb, "mlflow": read_mlflow}


def assert_tracked(name: str, folder: Path, run_dir: Path, c: TrainConfig) -> None:
    """The tracker holds every evaluation of metrics.jsonl, each step's loss (their mean over
    each evaluation interval is its train_loss) and the resolved config."""
    curves, params = READERS[name](folder)
    rows = read_metrics(run_dir)
    want: dict = {}
    for row in rows:
        for tag, value in scalars(row):
            want.setdefault(tag, {})[row["step"]] = value
    assert set(curves) == set(want) | {STEP_LOSS}
    tol = 1e-6 if name == "tensorboard" else 0  # TensorBoard stores float32
    for tag, points in want.items():
        assert curves[tag].keys() == points.keys(), tag
        assert all(abs(curves[tag][s] - v) <= tol * abs(v) for s, v in points.items()), tag
    losses = curves[STEP_LOSS]
    assert sorted(losses) == list(range(1, c.steps + 1))  # every step, once
    for row in rows:
        window = [losses[s] for s in range(row["step"] - c.eval_every + 1, row["step"] + 1)]
        assert sum(window) / len(window) == pytest.approx(row["train_loss"], rel=1e-5)
    assert len(set(losses.values())) > c.steps // 2  # per-step values, not a mean repeated
    expected = {k: param_text(v) for k, v in hparams(c).items()}
    if name == "mlflow":  # MLflow stores every parameter as a string
        expected = {k: str(v) for k, v in expected.items()}
    assert params == expected
    assert params["n_train"] in (256, "256") and "optim.lr" in params  # defaults filled in


@pytest.mark.parametrize("name", TRACKERS)
def test_each_tracker_holds_hparams_evaluations_and_every_step_loss(tmp_path, name):
    c = config()
    execute(c, tmp_path, quiet=True, tracker=TrackerConfig(name=name))
    run = run_dir_for(c, tmp_path)
    assert_tracked(name, TrackerConfig(name=name).folder(run), run, c)


@pytest.mark.parametrize("name", TRACKERS)
def test_a_tracked_run_trains_to_the_bits_of_an_untracked_one(tmp_path, name):
    c = config()
    execute(c, tmp_path / "plain", quiet=True)
    execute(c, tmp_path / "tracked", quiet=True, tracker=TrackerConfig(name=name))
    a, b = run_dir_for(c, tmp_path / "plain"), run_dir_for(c, tmp_path / "tracked")
    assert a.name == b.name  # the tracker is not in the run id
    for rel in ("metrics.jsonl", "ckpt/state.safetensors"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


class Killed(Exception):
    pass


class DiesAfter:
    """A tracker whose process is killed right after it mirrored the line of step `at` (after
    the last checkpoint: the resumed run trains those steps again)."""

    def __init__(self, sink, at: int):
        self.sink, self.at = sink, at

    def __getattr__(self, name):
        return getattr(self.sink, name)

    def log(self, row):
        self.sink.log(row)
        if row["step"] == self.at:
            self.sink.close()
            raise Killed


@pytest.mark.parametrize("name", ["wandb", "mlflow", "tensorboard"])
def test_a_resumed_run_shows_every_step_once_with_its_step_losses(tmp_path, name):
    c = config()
    tracker = TrackerConfig(name=name)
    run = tmp_path / "run"
    with pytest.raises(Killed):  # checkpoint at 20; steps up to 25 mirrored
        train(c, run, quiet=True, sink=DiesAfter(open_sink(tracker, run, hparams(c)), at=25))
    assert READERS[name](tracker.folder(run))[0]["acc"].keys() == {5, 10, 15, 20, 25}
    sink = open_sink(tracker, run, hparams(c))
    train(c, run, quiet=True, sink=sink)
    sink.close()
    # steps 1-20 replayed from before the kill, 21-40 from the resumed process, each once
    assert_tracked(name, tracker.folder(run), run, c)


@pytest.mark.parametrize("name", ["wandb", "mlflow"])
def test_a_reused_run_is_backfilled_into_a_tracker_folder_once(tmp_path, monkeypatch, name):
    from reasonlab import tracking

    for k in (tracking.TRACKER, tracking.TRACKER_DIR):  # what the CLI sets, undone after
        monkeypatch.setenv(k, "")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(CONFIG))
    store, dirs = tmp_path / "store", tmp_path / "trackers"
    argv = ["train", str(cfg), "--out", str(store), "--quiet", "--tracker", name]
    assert main(argv + ["--tracker-dir", str(dirs / "live")]) == 0
    run = run_dir_for(config(), store)
    assert not (run / name).exists()  # the named folder instead
    assert_tracked(name, dirs / "live" / run.name, run, config())
    # reused: a folder that never saw the run gets its curve and step losses, once
    for _ in range(2):
        assert main(argv + ["--tracker-dir", str(dirs / "later")]) == 0
        assert_tracked(name, dirs / "later" / run.name, run, config())


@pytest.mark.parametrize("name,module", [("wandb", "wandb"), ("mlflow", "mlflow.tracking")])
def test_a_tracker_that_is_not_installed_is_one_line(tmp_path, monkeypatch, capsys, name,
                                                     module):
    monkeypatch.setitem(sys.modules, module, None)  # what `import` sees without the package
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(CONFIG))
    assert main(["train", str(cfg), "--out", str(tmp_path), "--tracker", name]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --tracker {name} needs ") and err.count("\n") == 1
    assert "pip install" in err and not (tmp_path / "runs").exists()


def test_wandb_stays_offline_unless_the_user_says_otherwise(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE")
    c = config(steps=5)
    execute(c, tmp_path, quiet=True, tracker=TrackerConfig(name="wandb"))
    run = run_dir_for(c, tmp_path)
    (offline,) = (run / "wandb" / "wandb").glob("offline-run-*")
    assert not list((run / "wandb" / "wandb").glob("run-*"))  # no online run was started
    kinds = {r.WhichOneof("record_type") for r in wandb_records(next(offline.glob("*.wandb")))}
    assert "history" in kinds
