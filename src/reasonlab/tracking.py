"""Live metrics in a tracker: a sink that mirrors every metrics line a run writes, off by default
(`--tracker tensorboard|wandb|mlflow` on `train`, `run` and `sweep`). Every sink also gets the
run's hyperparameters (the resolved TrainConfig, flattened: `hparams`) and the loss of every
optimiser step (`STEP_LOSS`), which metrics.jsonl only holds as a mean between evaluations
(`train_loss`): the training loop keeps them on the device and hands them over at each
evaluation, where it reads its numbers anyway (train/loop.py), so a tracked run syncs the host
with the GPU no more often than an untracked one, and trains to the same bits.

`metrics.jsonl` stays the record of truth; a sink is a mirror of it, rebuilt from it whenever
the run (re)starts: `start` replays the lines the run keeps (a resume has just truncated those
after its checkpoint's step, train/loop.py) into a fresh event file and removes the sink's
earlier ones, then `log` appends each new line as it is written and flushes it, so TensorBoard
shows a run that trains for hours while it trains, and a resumed run shows every step once
(a point logged after the last checkpoint by the killed process is replayed by the resumed
one, never shown twice; TensorBoard's own `purge_step` would only hide such duplicates from
TensorBoard's reader, not from other readers of the files). Every write to a sink follows the
run lock's fence, as every write to the run does (locking.py).

Per-step losses are not in metrics.jsonl, so a sink's `Mirror` keeps them in the run's
`step_loss.jsonl` (outside the record: no checksum covers it, nothing but a tracker reads it),
cut back to the resume point like metrics.jsonl and replayed from there, and into any tracker
folder that later shows the run; a run resumed after being trained without a tracker has no
per-step losses for the steps it trained untracked (its evaluations are all there).

Where: `<run>/tb/` (`<run>/wandb/`, `<run>/mlflow/`) by default, or `<dir>/<run id>/` with
`--tracker-dir DIR`, so that one `tensorboard --logdir DIR` shows every run of a study or sweep
side by side. A run a command reuses (finished before) gets its curve written there too, once.

Why TensorBoard (torch.utils.tensorboard's writer, the `tensorboard` package) rather than
trackio: TensorBoard event files are the format the field's offline tools read (TensorBoard
itself; W&B's `wandb sync --sync-tensorboard`; tbparse for pandas), they live in the run's own
folder as plain files, and the writer is part of torch. trackio is local-first and mirrors W&B's
API, but keeps its runs in its own SQLite store outside the run folder and brings a Gradio
dashboard with it (gradio, pandas, huggingface_hub): more to install for the same curves. W&B
and MLflow, the other trackers researchers use, are TRACKERS entries too (tracking_sinks.py),
both writing local files only unless the user configures otherwise.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Literal, Protocol

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError
from reasonlab.registry import Registry
from reasonlab.store import write_text_atomic
from reasonlab.tracking_sinks import (STEP_LOSS, MlflowSink, Steps, WandbSink, param_text,
                                      scalars)

TRACKER = "REASONLAB_TRACKER"
"""Environment variable: the tracker of every run a command trains (the CLI's --tracker sets
it, so that it reaches the executors through the study and sweep layers unchanged)."""
TRACKER_DIR = "REASONLAB_TRACKER_DIR"
"""Environment variable: the folder of --tracker-dir."""


class TrackerConfig(StrictModel):
    """Which tracker mirrors a run's metrics, and where. Not part of a run's config: it changes
    no result, so it never enters a run id."""

    name: Literal["tensorboard", "wandb", "mlflow"]
    """The TRACKERS entry."""
    dir: str | None = None
    """Folder holding one subfolder per run (`<dir>/<run id>`); None: each run's `tb/`."""

    def folder(self, run_dir: Path) -> Path:
        default = "tb" if self.name == "tensorboard" else self.name
        return Path(self.dir) / run_dir.name if self.dir is not None else run_dir / default


class Sink(Protocol):
    """A mirror of a run's metrics.jsonl (see the module docstring). Made as
    `cls(folder, params, name)`: its folder, the run's hyperparameters, the run id."""

    def start(self, rows: list[dict[str, Any]], steps: Steps | None = None) -> None:
        """Begin a session of the run: the sink shows exactly `rows` (the lines it keeps) and
        the per-step losses `steps`."""
        ...

    def log(self, row: dict[str, Any]) -> None:
        """One new metrics line, visible at once."""
        ...

    def log_steps(self, steps: Steps) -> None:
        """The losses of the steps since the last evaluation (logged just before its line)."""
        ...

    def close(self) -> None: ...


class Tracker(Sink, Protocol):
    """A TRACKERS entry: a Sink of one library."""

    @staticmethod
    def require() -> Any:
        """The library, or ConfigError in one line saying how to install it."""
        ...

    def last_step(self) -> int | None:
        """The last step its files show of the run (None: none)."""
        ...


TRACKERS: Registry[type[Tracker]] = Registry("tracker")


def hparams(config: Any) -> dict[str, Any]:
    """A TrainConfig as the flat {dotted key: value} every sink logs as its hyperparameters,
    defaults filled in (what `reasonlab runs --format csv` lists too)."""
    from reasonlab.store import flatten

    return flatten(config.model_dump(mode="json"))


@TRACKERS.register("tensorboard")
class TensorBoardSink:
    """TensorBoard event files in `folder`, written with torch.utils.tensorboard."""

    SUFFIX = ".reasonlab"
    """Ends the name of every event file a sink writes: the files it may replace, and no
    others (a user's own files in a shared --tracker-dir stay)."""

    def __init__(self, folder: Path, params: dict[str, Any] | None = None,
                 name: str | None = None):
        self.folder, self.params = folder, params
        self.writer: Any = None

    @staticmethod
    def require() -> Any:
        return summary_writer()

    def last_step(self) -> int | None:
        files = own_event_files(self.folder) if self.folder.is_dir() else []
        return last_step(files) if files else None

    def start(self, rows: list[dict[str, Any]], steps: Steps | None = None) -> None:
        writer_cls = summary_writer()
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in own_event_files(self.folder):  # replaced by the replay below
            old.unlink(missing_ok=True)
        self.writer = writer_cls(str(self.folder), filename_suffix=self.SUFFIX)
        if self.params is not None:
            self._write_hparams(self.params)
        self._write_steps(steps or [])
        for row in rows:
            self._write(row)
        self.writer.flush()

    def log(self, row: dict[str, Any]) -> None:
        self._write(row)
        self.writer.flush()

    def log_steps(self, steps: Steps) -> None:
        self._write_steps(steps)  # flushed with the evaluation's line, which follows

    def _write_steps(self, steps: Steps) -> None:
        for step, loss in steps:
            if math.isfinite(loss):
                self.writer.add_scalar(STEP_LOSS, loss, global_step=step)

    def _write_hparams(self, params: dict[str, Any]) -> None:
        """TensorBoard's HParams dashboard record, in this event file (the writer's own
        add_hparams would open a second run folder beside it)."""
        from torch.utils.tensorboard.summary import hparams as hparams_summaries

        metrics = {tag: 0.0 for tag in ("acc", "loss", "train_loss", STEP_LOSS)}
        for summary in hparams_summaries({k: param_text(v) for k, v in params.items()},
                                         metrics):
            self.writer.file_writer.add_summary(summary)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def _write(self, row: dict[str, Any]) -> None:
        for tag, value in scalars(row):
            self.writer.add_scalar(tag, value, global_step=int(row["step"]))


def own_event_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"events.out.tfevents.*{TensorBoardSink.SUFFIX}"))


def summary_writer() -> Any:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise ConfigError("--tracker tensorboard needs TensorBoard; install it with "
                          "`pip install 'reasonlab[tracking]'`") from None
    return SummaryWriter


class Mirror:
    """A sink with the per-step losses it is given kept in the run's `step_loss.jsonl`
    (outside the run's record), so that the session a resume starts replays those up to the
    resume point and no later ones (the module docstring)."""

    FILE = "step_loss.jsonl"

    def __init__(self, sink: Sink, run_dir: Path):
        self.sink, self.path = sink, run_dir / self.FILE

    def start(self, rows: list[dict[str, Any]], steps: Steps | None = None) -> None:
        self.sink.start(rows, self.kept(int(rows[-1]["step"]) if rows else 0))

    def kept(self, upto: int) -> Steps:
        """The stored per-step losses up to step `upto`, the file cut back to them."""
        if not self.path.exists():
            return []
        lines = self.path.read_text().splitlines()
        steps = []
        for line in lines:
            try:
                step, loss = json.loads(line)
            except ValueError:  # a line cut short by a kill
                continue
            if step <= upto:
                steps.append((int(step), float(loss)))
        if len(steps) < len(lines):  # a finished run's file is left as it is
            write_text_atomic(self.path, "".join(json.dumps(s) + "\n" for s in steps))
        return steps

    def log(self, row: dict[str, Any]) -> None:
        self.sink.log(row)

    def log_steps(self, steps: Steps) -> None:
        with self.path.open("a") as f:
            f.write("".join(json.dumps(s) + "\n" for s in steps))
        self.sink.log_steps(steps)

    def close(self) -> None:
        self.sink.close()


def open_sink(tracker: TrackerConfig, run_dir: Path, params: dict[str, Any] | None = None
              ) -> Sink:
    sink = TRACKERS[tracker.name](tracker.folder(run_dir), params, run_dir.name)
    return Mirror(sink, run_dir)


def backfill(tracker: TrackerConfig, run_dir: Path, rows: list[dict[str, Any]],
             params: dict[str, Any] | None = None) -> None:
    """Show a run that finished before this command (reused, not trained) in the tracker too:
    its curve, written once into a fresh folder and moved into place under a fixed name, so two
    commands reusing the run at once leave one file. Nothing happens when the tracker already
    shows the whole run; event files that stop short of its last step (it was killed while
    mirrored and resumed without the tracker) are replaced. Other trackers than TensorBoard
    replace their copy of the run in place (tracking_sinks.py)."""
    folder = tracker.folder(run_dir)
    if tracker.name != "tensorboard":
        sink = TRACKERS[tracker.name](folder, params, run_dir.name)
        if not rows or sink.last_step() != int(rows[-1]["step"]):
            mirror = Mirror(sink, run_dir)
            mirror.start(rows)
            mirror.close()
        return
    old = own_event_files(folder) if folder.is_dir() else []
    if old and rows and last_step(old) == int(rows[-1]["step"]):
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".backfill."))
    try:
        sink = TensorBoardSink(tmp, params)
        sink.start(rows, Mirror(sink, run_dir).kept(int(rows[-1]["step"]) if rows else 0))
        sink.close()
        names = []
        for k, path in enumerate(own_event_files(tmp)):
            names.append(f"events.out.tfevents.0000000000.finished.{k}{TensorBoardSink.SUFFIX}")
            os.replace(path, folder / names[-1])
        for path in old:  # the partial curve, unless a fixed name was just written over it
            if path.name not in names:
                path.unlink(missing_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def last_step(files: list[Path]) -> int | None:
    """The last step any of these event files holds a scalar for (None: none)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    steps = [e.step for p in files for e in EventFileLoader(str(p)).Load() if e.summary.value]
    return max(steps, default=None)


def from_env() -> TrackerConfig | None:
    """The tracker the CLI chose for this command (TRACKER, TRACKER_DIR), or None."""
    name = os.environ.get(TRACKER)
    if not name:
        return None
    return TrackerConfig.build({"name": name, "dir": os.environ.get(TRACKER_DIR) or None},
                               where="--tracker")


def choose(name: str | None, folder: Path | None) -> TrackerConfig | None:
    """--tracker NAME [--tracker-dir DIR]: checked (the library installed, the folder
    writable), and set in the environment for the executors (from_env); None without
    --tracker."""
    if name is None:
        if folder is not None:
            raise ConfigError("--tracker-dir needs --tracker (e.g. --tracker tensorboard)")
        for key in (TRACKER, TRACKER_DIR):  # an earlier command in this process chose one
            os.environ.pop(key, None)
        return None
    tracker = TrackerConfig.build({"name": name, "dir": None if folder is None
                                   else str(folder.resolve())}, where="--tracker")
    TRACKERS[tracker.name].require()
    if folder is not None:
        check_writable(folder)
    os.environ[TRACKER] = tracker.name
    if tracker.dir is not None:
        os.environ[TRACKER_DIR] = tracker.dir
    else:
        os.environ.pop(TRACKER_DIR, None)
    return tracker


def check_writable(folder: Path) -> None:
    """--tracker-dir can be made (the sink makes it when a run first logs): one line if not."""
    probe = folder
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError(f"--tracker-dir {folder}: {probe} is a file, not a folder; choose "
                          "another folder")
    if not os.access(probe, os.W_OK):
        raise ConfigError(f"--tracker-dir {folder} is not writable; choose a writable place")


TRACKERS.register("wandb")(WandbSink)
TRACKERS.register("mlflow")(MlflowSink)
