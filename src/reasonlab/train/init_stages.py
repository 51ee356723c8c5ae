"""The model a run starts from: a random init, then the init stages in order.

    random init     MODELS[arch] built under the run's init seed (INITS scheme of the config)
    1. init_from    load a shipped checkpoint's weights into everything but the head
                    (LEGO §4.2), or those of a pretraining run of the store (Chiang & Lee's
                    artificial corpora, docs/papers.md §4)
    2. mimic        chosen heads imitate target attention patterns (LEGO §4.2.2; train/mimic.py)
    3. freeze       only the parameters `trainable` names stay trainable: parameter groups
                    (FPT freeze policy, model/freeze.py) or name prefixes

Each stage reads one TrainConfig field and does nothing when it is unset. Mimicking starts from
the pretrained weights when both are set (LEGO §4.2.2 mimics from random init; this order lets
the two combine), and freezing comes last so that mimicking may move every weight. Every random
draw comes from a stream seeded by (seed, purpose) (docs/design.md §3 Determinism).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from reasonlab.errors import ConfigError
from reasonlab.model import MODELS
from reasonlab.tasks.base import Task, build_task
from reasonlab.train.config import TrainConfig
from reasonlab.train.mimic import mimic
from reasonlab.train.run_files import load_run, run_dir_for
from reasonlab.train.seeds import INIT, MIMIC, seeds

Stage = Callable[[nn.Module, TrainConfig, Task, Path | None], None]
"""(model, config, task, root): root is the run store holding the run (for `init_from`)."""


def load_pretrained_stage(model: nn.Module, config: TrainConfig, task: Task,
                          root: Path | None) -> None:
    """LEGO §4.2: fine-tune from pretrained weights, task tokens mapped to the checkpoint's
    vocabulary; `init_from` names a shipped checkpoint or gives a run of the store (trained
    first by the executor)."""
    if config.init_checkpoint is not None:
        from reasonlab.model.pretrained import load_pretrained  # reads files: only when asked

        # FPT (docs/papers.md §4) loads its backbone; its own input and read-out stay fresh
        load_pretrained(getattr(model, "backbone", model), config.init_checkpoint,
                        task.vocab.tokens)
    if config.init_run is not None:  # Chiang & Lee: fine-tune a run pretrained on a corpus
        if root is None:
            raise ConfigError("this config initialises from a pretraining run (init_from); "
                              "give the run store that holds it")
        load_run(model, run_dir_for(config.init_run, root), task.vocab.tokens)


def mimic_stage(model: nn.Module, config: TrainConfig, task: Task, root: Path | None) -> None:
    """LEGO §4.2.2: heads imitate association / manipulation patterns on fresh sentences."""
    if config.mimic is not None:
        mimic(model, task, config.mimic, np.random.default_rng(seeds(config.seed, MIMIC)))


def freeze_stage(model: nn.Module, config: TrainConfig, task: Task, root: Path | None) -> None:
    """Frozen parameters never reach the optimizer (the `trainable` policy)."""
    if config.trainable is not None:
        config.trainable.apply(model)


INIT_STAGES: tuple[Stage, ...] = (load_pretrained_stage, mimic_stage, freeze_stage)


def build_model(config: TrainConfig, task: Task | None = None, root: Path | None = None,
                device: torch.device | str = "cpu") -> nn.Module:
    """The run's model before its first step: random init, then INIT_STAGES, on `device`.
    `task` is the run's task (train() builds it once); None builds it from the config (a study
    rebuilding a run's initial model). `root`: the run store holding `config.init_from`'s run,
    if any. The random init is drawn on the CPU (the same weights on every device), then the
    model moves to `device` before the stages, so mimicking trains where the run does."""
    task = build_task(config.task) if task is None else task
    # The global RNG, not a generator: the mimic stage's dropout draws from it too.
    torch.manual_seed(int(seeds(config.seed, INIT).generate_state(1)[0]))
    model = MODELS[config.model.arch.name](config.model).to(device)
    for stage in INIT_STAGES:
        stage(model, config, task, root)
    return model
