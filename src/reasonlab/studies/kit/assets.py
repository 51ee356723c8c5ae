"""What a study's runs need from outside the lab -- pretrained weights and data sets -- and
whether this machine has each, said before anything trains (`reasonlab run`, `reasonlab studies
--scale paper`). Nothing is downloaded: an absent asset is named with where it was looked for
and how to put it there.

Read from the runs' configs, so no study declares them twice: each run's `init_from` checkpoint
(a shipped package, a Hugging Face folder or cache entry: model/hf.py), the checkpoints of its
pretraining run's own config, and each task that reads a user's files (a task class with
`data_source()`: CIFAR-10, MNIST, WikiText-103, GLUE; tasks/hf_data.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reasonlab.errors import AssetError, ConfigError
from reasonlab.train.config import TrainConfig


@dataclass(frozen=True)
class Asset:
    what: str
    """e.g. "backbone gpt2", "data cifar10"."""
    found: bool
    where: str
    """Where it was found, or where it was looked for and how to put it there."""

    def line(self) -> str:
        return f"{self.what}: {'found' if self.found else 'NOT FOUND'} ({self.where})"


def _checkpoint_asset(name: str) -> Asset:
    from reasonlab.model.pretrained import StatisticsOnly, checkpoint

    ckpt = checkpoint(name)
    base = ckpt._base() if isinstance(ckpt, StatisticsOnly) else ckpt
    try:
        where = str(base.path())
        return Asset(f"backbone {name}", True, where)
    except (AssetError, ConfigError) as e:
        return Asset(f"backbone {name}", False, str(e))


def _task_asset(config: TrainConfig) -> Asset | None:
    from reasonlab.tasks.base import TASKS

    probe = getattr(TASKS[config.task.name], "data_source", None)
    if probe is None:
        return None
    found, where = probe(config.task)
    return Asset(f"data {config.task.name}", found, where)


def needed(configs: Iterable[TrainConfig]) -> list[Asset]:
    """Every outside asset the configs (and their pretraining runs) read, each once."""
    seen: dict[str, Asset] = {}

    def visit(c: TrainConfig) -> None:
        if c.init_checkpoint is not None and f"backbone {c.init_checkpoint}" not in seen:
            a = _checkpoint_asset(c.init_checkpoint)
            seen[a.what] = a
        task = _task_asset(c)
        if task is not None:
            seen.setdefault(f"{task.what} {task.where}", task)
        if c.init_run is not None:
            visit(c.init_run)

    for c in configs:
        visit(c)
    return list(seen.values())


def check_assets(assets: list[Asset], study: str, scale: str, quiet: bool) -> None:
    """Print what the study needs (unless quiet); one AssetError line if anything is absent."""
    if assets and not quiet:
        print(f"{study} ({scale}) needs:\n" + "\n".join(f"  {a.line()}" for a in assets))
    missing = [a for a in assets if not a.found]
    if missing:
        raise AssetError(f"study {study} at scale {scale} needs what this machine lacks: "
                         + "; ".join(a.line() for a in missing))
