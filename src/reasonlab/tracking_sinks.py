"""The W&B and MLflow sinks of `--tracker` (tracking.py registers them), and what every sink
shares: a metrics line as scalars, a hyperparameter as a tracker stores it.

Both write local files only unless the user configures otherwise, so nothing phones home while
a run trains: W&B runs offline (its `WANDB_MODE`, when set, wins: `online` syncs live), in
`<folder>/wandb/offline-run-*`, uploaded later with `wandb sync` if wanted; MLflow writes its
file store in the folder with its usage telemetry off (`mlflow ui --backend-store-uri
<folder>`). MLflow 3 keeps that store in maintenance mode behind `MLFLOW_ALLOW_FILE_STORE`,
which this sink sets: a database store needs SQLAlchemy and a server's stack, and a run's
tracker is a few local files, as TensorBoard's are.

Like TensorBoard's, each sink replaces its copy of the run whenever the run (re)starts
(tracking.py): an earlier W&B offline run of it is deleted, an earlier MLflow run of it is
deleted in the store (MLflow's own soft delete: `mlflow gc` removes its files), so a reader
sees every step once.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reasonlab.errors import ConfigError

STEP_LOSS = "step_loss"
"""The tag of each optimiser step's training loss (the loss of that step's batch; x: the number
of steps taken, as a metrics line's `step`)."""

Steps = list[tuple[int, float]]
"""(step, loss) of optimiser steps, in order."""

INSTALL = "install it with `pip install 'reasonlab[tracking]'`"


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


def param_text(value: Any) -> Any:
    """A hyperparameter as a tracker stores one: a number, string or bool as it is, anything
    else (None, a list, an empty table) as its JSON."""
    if isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value)


def by_step(rows: list[dict[str, Any]], steps: Steps | None
            ) -> list[tuple[int, dict[str, float]]]:
    """Per-step losses and metrics lines merged into one point per step, in step order (W&B
    takes steps only forwards)."""
    points: dict[int, dict[str, float]] = {}
    for step, loss in steps or []:
        if math.isfinite(loss):
            points.setdefault(step, {})[STEP_LOSS] = loss
    for row in rows:
        points.setdefault(int(row["step"]), {}).update(scalars(row))
    return sorted(points.items())


class PointSink:
    """A tracker that writes points (step -> scalars): a metrics line and a block of step
    losses both go through `_write`, one point per step."""

    def log(self, row: dict[str, Any]) -> None:
        self._write(by_step([row], []))

    def log_steps(self, steps: Steps) -> None:
        self._write(by_step([], steps))

    def _write(self, points: list[tuple[int, dict[str, float]]]) -> None:
        raise NotImplementedError


class WandbSink(PointSink):
    """A W&B run per session of a run, offline by default (the module docstring)."""

    def __init__(self, folder: Path, params: dict[str, Any] | None = None,
                 name: str | None = None):
        self.folder, self.params, self.name = folder, params, name or folder.name
        self.run: Any = None
        self.step: int | None = None

    SHOWN = "shown.json"
    """The last step of the session closed last (`last_step`)."""

    @staticmethod
    def require() -> Any:
        try:
            import wandb
        except ImportError:
            raise ConfigError(f"--tracker wandb needs wandb; {INSTALL}") from None
        return wandb

    def own_runs(self) -> list[Path]:
        """This run's W&B run folders (each session's id starts with the run id)."""
        return sorted((self.folder / "wandb").glob(f"*run-*-{self.name}-*"))

    def start(self, rows: list[dict[str, Any]], steps: Steps | None = None) -> None:
        wandb = self.require()
        for old in self.own_runs():  # replaced by the replay below
            shutil.rmtree(old, ignore_errors=True)
        (self.folder / self.SHOWN).unlink(missing_ok=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        # a fresh id per session: W&B keeps a run's steps only forwards, and a resume goes
        # back to its checkpoint's step
        run_id = f"{self.name}-{time.time_ns()}"
        settings = wandb.Settings(console="off", silent=True, save_code=False,
                                  disable_git=True, x_disable_stats=True, x_disable_meta=True,
                                  x_disable_machine_info=True, x_save_requirements=False)
        self.run = wandb.init(mode=os.environ.get("WANDB_MODE") or "offline",
                              dir=str(self.folder), project=os.environ.get("WANDB_PROJECT")
                              or "reasonlab", name=self.name, id=run_id, group=self.name,
                              config={k: param_text(v) for k, v in (self.params or {}).items()},
                              settings=settings, reinit="create_new")
        self._write(by_step(rows, steps))

    def _write(self, points: list[tuple[int, dict[str, float]]]) -> None:
        for step, point in points:
            self.run.log(point, step=step)
            self.step = step

    def last_step(self) -> int | None:
        """The last step of the run's W&B run, as noted when that session closed (W&B's offline
        files keep it only inside the binary .wandb log); None: no session closed."""
        try:
            return int(json.loads((self.folder / self.SHOWN).read_text())["step"])
        except (OSError, ValueError, KeyError):
            return None

    def close(self) -> None:
        if self.run is not None:
            self.run.finish()
            self.run = None
            (self.folder / self.SHOWN).write_text(json.dumps({"step": self.step}))


class MlflowSink(PointSink):
    """An MLflow run per session of a run, in a file store in `folder` (module docstring)."""

    EXPERIMENT = "reasonlab"
    TAG = "reasonlab.run"
    """The run id, on each MLflow run of it (what a replacement finds)."""

    def __init__(self, folder: Path, params: dict[str, Any] | None = None,
                 name: str | None = None):
        self.folder, self.params, self.name = folder, params, name or folder.name
        self.client: Any = None
        self.run_id: str | None = None

    @staticmethod
    def require() -> Any:
        # before MLflow is imported: it reads these once (telemetry sends usage data home)
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        try:
            from mlflow.tracking import MlflowClient
        except ImportError:
            raise ConfigError(f"--tracker mlflow needs MLflow; {INSTALL}") from None
        return MlflowClient

    def open(self) -> tuple[Any, str]:
        """The store's client and the experiment's id."""
        if self.client is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.client = self.require()(tracking_uri=self.folder.resolve().as_uri())
        exp = self.client.get_experiment_by_name(self.EXPERIMENT)
        return self.client, (exp.experiment_id if exp is not None
                             else self.client.create_experiment(self.EXPERIMENT))

    def own_runs(self) -> list[Any]:
        client, exp = self.open()
        return client.search_runs([exp], f"tags.`{self.TAG}` = '{self.name}'")

    def start(self, rows: list[dict[str, Any]], steps: Steps | None = None) -> None:
        from mlflow.entities import Param

        client, exp = self.open()
        for old in self.own_runs():  # replaced by the replay below
            client.delete_run(old.info.run_id)
        self.run_id = client.create_run(exp, run_name=self.name,
                                        tags={self.TAG: self.name}).info.run_id
        params = [Param(k, str(param_text(v))[:6000])  # MLflow's limit on a value
                  for k, v in (self.params or {}).items()]
        for i in range(0, len(params), 100):  # MLflow's limit per batch
            client.log_batch(self.run_id, params=params[i:i + 100])
        self._write(by_step(rows, steps))

    def _write(self, points: list[tuple[int, dict[str, float]]]) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(tag, value, now, step) for step, point in points
                   for tag, value in point.items()]
        for i in range(0, len(metrics), 1000):  # MLflow's limit per batch
            self.client.log_batch(self.run_id, metrics=metrics[i:i + 1000])

    def last_step(self) -> int | None:
        runs = self.own_runs()
        if not runs:
            return None
        history = self.client.get_metric_history(runs[0].info.run_id, "acc")
        return max((m.step for m in history), default=None)

    def close(self) -> None:
        if self.run_id is not None:
            self.client.set_terminated(self.run_id)
            self.run_id = None
