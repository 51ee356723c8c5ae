"""The model a run starts from: a random init, then the init stages in order.

    random init     MODELS[arch] built under the run's init seed (INITS scheme of the config)
    1. init_from    load a shipped checkpoint's weights into everything but the head
                    (LEGO §4.2), or those of a pretraining run of the store (Chiang & Lee's
                    artificial corpora, docs/papers.md §4)
    2. mimic        chosen heads imitate target attention patterns (LEGO §4.2.2; train/mimic.py)
    3. freeze       only the parameters `trainable` names stay trainable: parameter groups
                    (FPT freeze policy, model/freeze.py) or name prefixes

`load_run_model` loads a finished or checkpointed run's model (analyses, `init_from` a run):
its checkpointed weights, and where the checkpoint leaves frozen ones out (train/checkpoint.py,
Frozen) the run's initial model rebuilt here from its config, checked against their checksum.

Each stage reads one TrainConfig field and does nothing when it is unset. Mimicking starts from
the pretrained weights when both are set (LEGO §4.2.2 mimics from random init; this order lets
the two combine), and freezing comes last so that mimicking may move every weight. Every random
draw comes from a stream seeded by (seed, purpose) (docs/design.md §3 Determinism).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from reasonlab.errors import CheckpointError, ConfigError
from reasonlab.model import MODELS
from reasonlab.model.pretrained import map_tokens
from reasonlab.store import (CorruptRunError, check_checkpointed_files, checkpoint_meta,
                             read_result)
from reasonlab.tasks.base import Task, build_task
from reasonlab.train.checkpoint import frozen_meta, load_weights, read_model_weights
from reasonlab.train.config import TrainConfig
from reasonlab.train.mimic import mimic
from reasonlab.train.run_files import _config_json, run_dir_for
from reasonlab.train.seeds import INIT, MIMIC, seeds

Stage = Callable[[nn.Module, TrainConfig, Task, Path | None], None]
"""(model, config, task, root): root is the run store holding the run (for `init_from`)."""


def load_pretrained_stage(model: nn.Module, config: TrainConfig, task: Task,
                          root: Path | None) -> None:
    """LEGO §4.2: fine-tune from pretrained weights, task tokens mapped to the checkpoint's
    vocabulary; `init_from` names a shipped checkpoint or gives a run of the store (trained
    first by the executor)."""
    if config.init_checkpoint is not None:
        from reasonlab.model.pretrained import from_hugging_face, load_pretrained  # reads files

        # FPT (docs/papers.md §4) loads its backbone; its own input and read-out stay fresh.
        # FPT never reads the backbone's token table: a Hugging Face backbone needs no
        # tokenizer files (the shipped ones keep mapping the task's tokens, as their stored
        # runs' frozen-weight checksums record)
        target = getattr(model, "backbone", model)
        load_pretrained(target, config.init_checkpoint, task.vocab.tokens,
                        embeddings=target is model or not from_hugging_face(
                            config.init_checkpoint))
    if config.init_run is not None:  # Chiang & Lee: fine-tune a run pretrained on a corpus
        if root is None:
            raise ConfigError("this config initialises from a pretraining run (init_from); "
                              "give the run store that holds it")
        backbone = getattr(model, "backbone", None)
        if backbone is None:
            load_run(model, run_dir_for(config.init_run, root), task.vocab.tokens)
        else:  # FPT (Lu et al. 2021, Bit row): the run's backbone into ours; its token table
            # never enters FPT's forward pass, so no task token is mapped onto it
            load_run(backbone, run_dir_for(config.init_run, root), None)


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


def load_run_model(run_dir: Path | str, device: torch.device | str | None = None
                   ) -> tuple[TrainConfig, Any]:
    """The config and the latest checkpointed model of a run directory, in eval mode, on
    `device`: None (the default) the CPU; "run" the device the run's own config resolves to
    here (`device=auto`: the GPU when there is one), so an analysis computes where the run
    trained; or a torch device. Reads the model weights alone, checked against their checksum
    (read_model_weights), never the optimizer state that resuming needs; frozen weights the
    checkpoint leaves out are rebuilt from the config (the run's initial model) and checked
    against theirs."""
    from reasonlab.train.device import resolve_device

    run_dir = Path(run_dir)
    if not (run_dir / "config.json").is_file():
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "config.json); pass a directory under <out>/runs/")
    # what config.json and the metrics say is what the run recorded: result.json's checksums
    # (a finished run), or its checkpoint's (one that has not finished)
    if read_result(run_dir) is None:
        check_checkpointed_files(run_dir, checkpoint_meta(run_dir) or {})
    data = _config_json(run_dir)
    config = TrainConfig.build(data, where=f"{run_dir}/config.json")
    if not (run_dir / "ckpt" / "state.safetensors").is_file():
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "ckpt/state.safetensors); train it first")
    weights = read_model_weights(run_dir)
    frozen = frozen_meta(run_dir)
    model = MODELS[config.model.arch.name](config.model)  # draws on the global RNG, as always
    if frozen is not None:  # the frozen weights: the run's initialisation, rebuilt (root:
        with torch.random.fork_rng(devices=[]):  # <root>/runs/<id>), the global RNG untouched
            initial = build_model(config, root=run_dir.parent.parent)
        model.load_state_dict(initial.state_dict())
        del initial
    try:
        load_weights(model, weights, frozen)
    except (RuntimeError, ValueError) as e:
        raise CorruptRunError(run_dir, "ckpt/state.safetensors", "does not match config.json "
                              f"({str(e).splitlines()[0]})") from None
    if device is not None:
        model = model.to(resolve_device(config.device) if device == "run" else device)
    return config, model.eval()


def load_initial_model(run_dir: Path, device: torch.device | str | None = None
                       ) -> tuple[TrainConfig, Any] | None:
    """The config and the model a run started training from, as train() kept it (its
    mimicking runs: checkpoint.save_initial), in eval mode on `device` (as load_run_model);
    None when the run kept none (no mimicking, or trained before it was kept)."""
    from reasonlab.train.checkpoint import read_initial
    from reasonlab.train.device import resolve_device

    weights = read_initial(run_dir)
    if weights is None:
        return None
    config = TrainConfig.build(_config_json(run_dir), where=f"{run_dir}/config.json")
    model = MODELS[config.model.arch.name](config.model)
    try:
        model.load_state_dict(weights)
    except RuntimeError as e:
        raise CorruptRunError(run_dir, "init/state.safetensors", "does not match config.json "
                              f"({str(e).splitlines()[0]})") from None
    if device is not None:
        model = model.to(resolve_device(config.device) if device == "run" else device)
    return config, model.eval()


@torch.no_grad()
def load_run(model: nn.Module, run_dir: Path, tokens: list[str] | tuple[str, ...] | None,
             seed: int = 0) -> list[int]:
    """Overwrite every parameter of `model` except the head with the final weights of the
    finished run in `run_dir` (TrainConfig.init_from: a masked-LM run on an artificial or English
    corpus, Chiang & Lee, docs/papers.md §4). As for a shipped checkpoint, W_E is re-indexed to
    the task's tokens through `map_tokens` against the run's vocabulary (a word-vocabulary task
    keeps every id; LEGO's tokens take their words or arbitrary ones), and W_pos keeps the
    first max_seq_len positions. Returns the run's token id of every task token.

    An FPT run's weights are its backbone's (FPT's input layer and read-out are its task's);
    tokens=None leaves W_E as it is (FPT's backbone, whose token table its forward pass never
    reads) and returns []."""
    if read_result(run_dir) is None:
        raise CheckpointError(f"pretraining run {run_dir} has not finished; train it first "
                              "(runs.execute does, for a config naming it in `init_from`)")
    source, pre = load_run_model(run_dir)
    pre = getattr(pre, "backbone", pre)  # model/fpt.py: the Transformer inside
    cfg = model.config  # type: ignore[attr-defined]
    sd = {k: v for k, v in pre.state_dict().items() if not k.startswith("head.")}
    token_ids: list[int] = []
    if tokens is None:
        del sd["W_E"]
    else:
        token_ids = map_tokens(tokens, list(build_task(source.task).vocab.tokens), seed)
        sd["W_E"] = sd["W_E"][torch.as_tensor(token_ids, device=sd["W_E"].device)]
    if "W_pos" in sd:
        sd["W_pos"] = sd["W_pos"][: cfg.max_seq_len]
    missing, unexpected = model.load_state_dict(sd, strict=False)
    left = [k for k in missing if not k.startswith("head.") and (tokens or k != "W_E")]
    if left or unexpected:
        raise ConfigError(f"pretraining run {run_dir.name} does not fit this model (missing "
                          f"{left[:3]}, unexpected {unexpected[:3]})")
    return token_ids
