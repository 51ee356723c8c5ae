"""What a study's runs need from outside the lab -- pretrained weights and data sets -- and
whether this machine has each, said before anything trains (`reasonlab run`, `reasonlab studies
--scale paper`). Nothing is downloaded: an absent asset is named with where it was looked for
and how to put it there. A library module (the studies use it through studies/kit/assets.py):
`reasonlab studies --scale` looks the assets up again without importing a study.

Read from the runs' configs, so no study declares them twice: each run's `init_from` checkpoint
(a shipped package, a Hugging Face folder or cache entry: model/hf.py), the checkpoints of its
pretraining run's own config, and each task that reads a user's files (a task class with
`data_source()`: CIFAR-10, MNIST, WikiText-103, GLUE; tasks/hf_data.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reasonlab.errors import AssetError, ConfigError

if TYPE_CHECKING:  # a type only: `studies --scale` imports this module to look assets up
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


def needed(configs: Iterable[TrainConfig]) -> list[Asset]:
    """Every outside asset the configs (and their pretraining runs) read, each once."""
    return look_for(asset_specs(configs))


Spec = tuple[str, str]
"""An asset as data: ("backbone", checkpoint name) or ("data", the task config as JSON)."""


def asset_specs(configs: Iterable[TrainConfig]) -> list[Spec]:
    """What `needed` looks for, as data, each once, in the order the configs name them: what
    the configs ask for is fixed by the code, where it is found is not, so `reasonlab studies
    --scale` can remember these between commands and look again each time (`look_for`)."""
    from reasonlab.tasks.base import TASKS

    seen: dict[Spec, None] = {}

    def visit(c: TrainConfig) -> None:
        if c.init_checkpoint is not None:
            seen.setdefault(("backbone", c.init_checkpoint))
        if getattr(TASKS[c.task.name], "data_source", None) is not None:
            seen.setdefault(("data", c.task.model_dump_json()))
        if c.init_run is not None:
            visit(c.init_run)

    for c in configs:
        visit(c)
    return list(seen)


def look_for(specs: Iterable[Spec]) -> list[Asset]:
    """Each asset of `specs` looked for on this machine now; a data set two task configs read
    from the same place is listed once."""
    from reasonlab.tasks.base import TASKS

    seen: dict[str, Asset] = {}
    for kind, value in specs:
        if kind == "backbone":
            seen.setdefault(f"backbone {value}", _checkpoint_asset(value))
            continue
        data = json.loads(value)
        task = TASKS[data["name"]].Config.build(data, where="task")
        found, where = TASKS[task.name].data_source(task)  # type: ignore[attr-defined]
        a = Asset(f"data {task.name}", found, where)
        seen.setdefault(f"{a.what} {a.where}", a)
    return list(seen.values())


def check_assets(assets: list[Asset], study: str, scale: str, quiet: bool) -> None:
    """Print what the study needs (unless quiet); one AssetError line if anything is absent."""
    if assets and not quiet:
        print(f"{study} ({scale}) needs:\n" + "\n".join(f"  {a.line()}" for a in assets))
    missing = [a for a in assets if not a.found]
    if missing:
        raise AssetError(f"study {study} at scale {scale} needs what this machine lacks: "
                         + "; ".join(a.line() for a in missing))
