"""`reasonlab run STUDY --dry-run`: what the command would train, read from the store; it
trains and writes nothing.

A study's runs resume by id (store.py), so a `long` study of several hours can be finished by
several commands (an interrupted one, a queue across sessions, array tasks). Before starting one
a researcher wants to know which runs are finished, which resume from a checkpoint and at what
step, which another process trains right now, and what the rest costs. The rest is counted in
training FLOPs (plan.run_flops, the count of `reasonlab studies --scale`) and turned into time by
the seconds per FLOP that this study's finished runs took on this host (run.json's wall_s), the
machine's own measurement; plan.py's CPU rate only where none finished here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

from reasonlab import plan
from reasonlab.locking import held
from reasonlab.report import table
from reasonlab.runs import check_runs, load_result, run_dir_for
from reasonlab.store import RUN_JSON, CorruptRunError, checkpoint_meta, provenance
from reasonlab.studies.kit.base import prepare_study
from reasonlab.studies.kit.core import Scale
from reasonlab.train.config import TrainConfig


State = Literal["finished", "training now", "to resume", "to train"]
STATES: tuple[State, ...] = ("finished", "training now", "to resume", "to train")


@dataclass(frozen=True)
class PlannedRun:
    """One distinct run a study needs (a pretraining run several arms start from, once)."""

    label: str
    """The arm and seed that need it first; "pretraining for <arm> seed <s>" for an init run."""
    run_id: str
    steps: int
    state: State
    done_steps: int
    """Steps already trained: all for a finished run, the checkpoint's step for one to resume
    (one training now counts from its last checkpoint: that is what would be kept if it
    stopped)."""
    flops: float
    wall_s: float | None = None
    """Seconds a finished run trained, every start of it on this host; None otherwise."""
    pid: int | None = None
    """The process training it now."""

    @property
    def flops_left(self) -> float:
        return self.flops * (1 - self.done_steps / self.steps) if self.steps else 0.0

    @property
    def text(self) -> str:
        """The state as the table prints it."""
        at = f"checkpoint at step {self.done_steps}"
        return {"finished": "finished", "to train": "to train",
                "to resume": f"resumes at step {self.done_steps}",
                "training now": f"training now (pid {self.pid}"
                                + (f"; {at})" if self.done_steps else ")")}[self.state]


def _wall_here(run_dir: Path) -> float | None:
    """A finished run's training seconds when every start of it was on this host."""
    try:
        rec = json.loads((run_dir / RUN_JSON).read_text())
    except (OSError, ValueError):
        return None
    host = provenance()["host"]
    starts = rec.get("starts")
    if not isinstance(starts, list) or not starts or not isinstance(rec.get("wall_s"), float):
        return None
    return rec["wall_s"] if all(isinstance(s, dict) and s.get("host") == host
                                for s in starts) else None


def _planned(label: str, config: TrainConfig, run_dir: Path) -> PlannedRun:
    run = partial(PlannedRun, label, run_dir.name, config.steps, flops=plan.run_flops(config))
    if load_result(run_dir) is not None:
        return run("finished", config.steps, wall_s=_wall_here(run_dir))
    if (holder := held(run_dir)) is not None:
        # its trainer may be writing the checkpoint this instant (check_runs skips held runs
        # too): its step if the checkpoint reads, else none
        try:
            meta = checkpoint_meta(run_dir)
        except CorruptRunError:
            meta = None
        return run("training now", int(meta["step"]) if meta else 0, pid=holder.get("pid"))
    meta = checkpoint_meta(run_dir) if run_dir.is_dir() else None  # check_runs checked it
    step = int(meta["step"]) if meta else 0
    return run("to resume", step) if step else run("to train", 0)


def planned_runs(name: str, scale: Scale, seeds: int | None, root: Path,
                 overrides: Mapping[str, Any] | None = None,
                 executor: str = "local") -> list[PlannedRun]:
    """Every distinct run `reasonlab run NAME` would need, init (pretraining) runs first, each
    with its state in the store at `root`. Checks what the command checks first (scale, assets,
    damaged run folders: prepare_study, check_runs) and fails the same way."""
    _, specs, _, _ = prepare_study(name, scale, seeds, overrides, quiet=True)
    check_runs([s.config for s in specs], root, executor)
    needed: dict[Path, tuple[str, TrainConfig]] = {}
    for s in specs:
        if s.config.init_run is not None:
            d = run_dir_for(s.config.init_run, root)
            needed.setdefault(d, (f"pretraining for {s.arm} seed {s.seed}", s.config.init_run))
    for s in specs:
        needed.setdefault(run_dir_for(s.config, root), (f"{s.arm} seed {s.seed}", s.config))
    return [_planned(label, config, d) for d, (label, config) in needed.items()]


def describe(name: str, scale: Scale, rows: list[PlannedRun], workers: int = 1) -> str:
    """The dry run's printout: one row per run, then what is left and its estimated cost."""
    lines = [table(["run", "id", "steps", "state"],
                   [[r.label, r.run_id, str(r.steps), r.text] for r in rows])]
    total = sum(r.flops for r in rows)
    left = sum(r.flops_left for r in rows)
    share = left / total if total else 0.0
    counts = {k: sum(r.state == k for r in rows) for k in STATES}
    lines.append(f"\n{name} at scale {scale}: {len(rows)} runs; {counts['finished']} finished, "
                 f"{counts['training now']} training now in another process, "
                 f"{counts['to resume']} to resume from a checkpoint, {counts['to train']} to "
                 f"train from step 0.")
    if left == 0:
        lines.append("Nothing left to train: the command would only analyse the runs and "
                     "write the report.")
        return "\n".join(lines)
    timed = [r for r in rows if r.wall_s is not None]
    if timed:  # this machine's own rate on this study's runs
        per_flop = sum(r.wall_s or 0.0 for r in timed) / sum(r.flops for r in timed)
        how = f"at the seconds per FLOP of its {len(timed)} runs finished on this host"
    else:
        per_flop = 1 / plan.CPU_FLOPS
        how = ("at plan.py's CPU rate (no run of it finished on this host; that rate was "
               "0.06x to 1.3x the measured time at the cpu scales)")
    hours = left * per_flop / 3600
    side = (f", about {plan.fmt_hours(hours / workers)} with {workers} side by side"
            if workers > 1 else "")
    lines.append(f"Left: {share:.0%} of the study's training FLOPs ({left:.2e} of {total:.2e}): "
                 f"about {plan.fmt_hours(hours)} of run time {how}{side}.")
    return "\n".join(lines)
