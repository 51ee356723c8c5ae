"""Live metrics in a tracker: a sink that mirrors every metrics line a run writes, off by default
(`--tracker tensorboard` on `train`, `run` and `sweep`).

`metrics.jsonl` stays the record of truth; a sink is a mirror of it, rebuilt from it whenever
the run (re)starts: `start` replays the lines the run keeps (a resume has just truncated those
after its checkpoint's step, train/loop.py) into a fresh event file and removes the sink's
earlier ones, then `log` appends each new line as it is written and flushes it, so TensorBoard
shows a run that trains for hours while it trains, and a resumed run shows every step once
(a point logged after the last checkpoint by the killed process is replayed by the resumed
one, never shown twice; TensorBoard's own `purge_step` would only hide such duplicates from
TensorBoard's reader, not from other readers of the files). Every write to a sink follows the
run lock's fence, as every write to the run does (locking.py).

Where: `<run>/tb/` by default, or `<dir>/<run id>/` with `--tracker-dir DIR`, so that one
`tensorboard --logdir DIR` shows every run of a study or sweep side by side. A run a command
reuses (finished before) gets its curve written there too, once.

Why TensorBoard (torch.utils.tensorboard's writer, the `tensorboard` package) rather than
trackio: TensorBoard event files are the format the field's offline tools read (TensorBoard
itself; W&B's `wandb sync --sync-tensorboard`; tbparse for pandas), they live in the run's own
folder as plain files, and the writer is part of torch. trackio is local-first and mirrors W&B's
API, but keeps its runs in its own SQLite store outside the run folder and brings a Gradio
dashboard with it (gradio, pandas, huggingface_hub): more to install for the same curves. A
second tracker is a second TRACKERS entry.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol

from reasonlab.config import StrictModel
from reasonlab.errors import ConfigError
from reasonlab.registry import Registry

TRACKER = "REASONLAB_TRACKER"
"""Environment variable: the tracker of every run a command trains (the CLI's --tracker sets
it, so that it reaches the executors through the study and sweep layers unchanged)."""
TRACKER_DIR = "REASONLAB_TRACKER_DIR"
"""Environment variable: the folder of --tracker-dir."""


class TrackerConfig(StrictModel):
    """Which tracker mirrors a run's metrics, and where. Not part of a run's config: it changes
    no result, so it never enters a run id."""

    name: Literal["tensorboard"]
    """The TRACKERS entry."""
    dir: str | None = None
    """Folder holding one subfolder per run (`<dir>/<run id>`); None: each run's `tb/`."""

    def folder(self, run_dir: Path) -> Path:
        return Path(self.dir) / run_dir.name if self.dir is not None else run_dir / "tb"


class Sink(Protocol):
    """A mirror of a run's metrics.jsonl (see the module docstring)."""

    def start(self, rows: list[dict[str, Any]]) -> None:
        """Begin a session of the run: the sink shows exactly `rows` (the lines it keeps)."""
        ...

    def log(self, row: dict[str, Any]) -> None:
        """One new metrics line, visible at once."""
        ...

    def close(self) -> None: ...


TRACKERS: Registry[type[Sink]] = Registry("tracker")


def scalars(row: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, float]]:
    """The numbers of a metrics line as (tag, value): nested metrics as `val/acc`, a list as
    `acc_by_depth/3`; `step` is the x axis, not a scalar, and non-numbers are skipped."""
    for k, v in row.items():
        tag = f"{prefix}{k}"
        if tag == "step":
            continue
        if isinstance(v, dict):
            yield from scalars(v, f"{tag}/")
        elif isinstance(v, list):
            yield from scalars({str(i): x for i, x in enumerate(v)}, f"{tag}/")
        elif isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            yield tag, float(v)


@TRACKERS.register("tensorboard")
class TensorBoardSink:
    """TensorBoard event files in `folder`, written with torch.utils.tensorboard."""

    SUFFIX = ".reasonlab"
    """Ends the name of every event file a sink writes: the files it may replace, and no
    others (a user's own files in a shared --tracker-dir stay)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.writer: Any = None

    def start(self, rows: list[dict[str, Any]]) -> None:
        writer_cls = summary_writer()
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in own_event_files(self.folder):  # replaced by the replay below
            old.unlink(missing_ok=True)
        self.writer = writer_cls(str(self.folder), filename_suffix=self.SUFFIX)
        for row in rows:
            self._write(row)
        self.writer.flush()

    def log(self, row: dict[str, Any]) -> None:
        self._write(row)
        self.writer.flush()

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


def open_sink(tracker: TrackerConfig, run_dir: Path) -> Sink:
    return TRACKERS[tracker.name](tracker.folder(run_dir))


def backfill(tracker: TrackerConfig, run_dir: Path, rows: list[dict[str, Any]]) -> None:
    """Show a run that finished before this command (reused, not trained) in the tracker too:
    its curve, written once into a fresh folder and moved into place under a fixed name, so two
    commands reusing the run at once leave one file. Nothing happens when the tracker already
    shows the whole run; event files that stop short of its last step (it was killed while
    mirrored and resumed without the tracker) are replaced."""
    folder = tracker.folder(run_dir)
    old = own_event_files(folder) if folder.is_dir() else []
    if old and rows and last_step(old) == int(rows[-1]["step"]):
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".backfill."))
    try:
        sink = TRACKERS[tracker.name](tmp)
        sink.start(rows)
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
    summary_writer()
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
