"""reasonlab's tasks as reasoning-gym procedural datasets: importing this module registers
`reasonlab_<task>` for every task with a text view (tasks/text/), so

    import reasoning_gym, reasonlab.gym
    data = reasoning_gym.create_dataset("reasonlab_lego", size=100, seed=1,
                                        task={"n_clauses": 6})
    data.score_answer(answer, entry=data[0])

works as for reasoning-gym's own generators: a dataclass config (`task` overrides, `split`,
`seed`, `size`, with `validate`), items `{"question", "answer", "metadata"}` made afresh from
(seed, index), and `score_answer` (reasonlab's exact scorer, tasks/text/score.py, the one the
lm-eval folder copies). reasoning-gym's default `score_answer` gives partial credit when the
answer is a substring of the reply (`-1` inside `+1 -1`); ours does not, as a symbol answered
among others is not an answer.

Item `idx` is example 0 of `task.sample(numpy.random.default_rng([seed, idx]), 1, split)`:
reproducible from (seed, idx) alone, as reasoning-gym's `Random(seed + idx)` is, without the
collisions of a sum (seed 1 item 0 and seed 0 item 1 differ). These are fresh draws of the
task's distribution, not a run's de-duplicated splits (`reasonlab data lm-eval` writes those).
`split` is what the task's `sample` distinguishes (the anchors' test placement, the templates'
unseen symbol alphabet); tasks whose splits differ only by de-duplication draw both alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from reasoning_gym.dataset import ProceduralDataset
from reasoning_gym.factory import DATASETS, register_dataset

from reasonlab.errors import ConfigError
from reasonlab.tasks.base import Task, build_task
from reasonlab.tasks.text import TEXT_VIEWS, score, view_of

PREFIX = "reasonlab_"


@dataclass
class ReasonlabConfig:
    """A reasonlab task as a reasoning-gym config; each registered name fixes the task."""

    task: dict[str, Any] = field(default_factory=dict)
    """Overrides of the task's config (its `name` is the dataset's)."""
    split: str = "test"
    """Which of the task's distributions `sample` draws from ("train" or "test"; templates
    also "val")."""
    seed: int | None = None
    size: int = 500

    family: ClassVar[str] = "lego"

    def task_config(self) -> dict[str, Any]:
        name = self.task.get("name", self.family)
        if name != self.family:
            raise ConfigError(f"task name {name!r} in {PREFIX}{self.family}'s config; create "
                              f"the dataset {PREFIX}{name} instead")
        task = {**self.task, "name": self.family}
        if self.family == "templates" and not {"preset", "templates"} & set(task):
            # the templates' config has no default set (one of two keys must be given), and
            # reasoning-gym builds every dataset from its config's defaults (its scorer
            # lookup): the paper's own example, variable binding (`a=+1; print(a)` -> +1)
            task["preset"] = "variable_binding"
        return task

    def validate(self) -> None:
        """Builds the task (one ConfigError line on a bad key or value) and checks it has a
        prompt form, the size and the seed."""
        view_of(build_task(self.task_config()))
        if self.size <= 0:
            raise ConfigError(f"size={self.size}: give a positive number of items")
        if self.seed is not None and self.seed < 0:
            raise ConfigError(f"seed={self.seed}: give a seed of 0 or more")


class ReasonlabDataset(ProceduralDataset):
    """Items of a reasonlab task's text view, drawn afresh from (seed, index)."""

    def __init__(self, config: ReasonlabConfig):
        super().__init__(config=config, seed=config.seed, size=config.size)
        self.task: Task = build_task(config.task_config())
        self.view = view_of(self.task)

    def __getitem__(self, idx: int) -> dict[str, Any]:
        if not 0 <= idx < self.size:
            raise IndexError(f"item {idx} of a dataset of {self.size}")
        rng = np.random.default_rng([self.seed, idx])
        batch = self.task.sample(rng, 1, self.config.split)
        item = self.view(self.task, batch, 0, idx)
        return {"question": item.prompt, "answer": item.answer,
                "metadata": {"source_dataset": f"{PREFIX}{self.config.family}",
                             "source_index": idx, "split": self.config.split, **item.meta}}

    def score_answer(self, answer: str | None, entry: dict[str, Any]) -> float:
        return score(answer, entry["answer"])


def register() -> list[str]:
    """Register `reasonlab_<task>` for every task with a text view (again: a no-op); returns
    the names."""
    names = []
    for family in TEXT_VIEWS:
        name = f"{PREFIX}{family}"
        if name not in DATASETS:
            config = dataclass(type(f"{family.title().replace('_', '')}Config",
                                    (ReasonlabConfig,), {"family": family}))
            register_dataset(name, ReasonlabDataset, config)
        names.append(name)
    return names


NAMES = register()
