"""A run folder's model: its path in the run store, its config and checkpointed weights, and
loading those weights as another run's initialisation (`TrainConfig.init_from`, Chiang & Lee's
pretraining on artificial corpora, docs/papers.md §4).

It sits below `runs` and `train.loop` (and imports neither), so the init stages can load a
pretraining run without an import cycle (docs/design.md §1 Layout).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from reasonlab.errors import CheckpointError, ConfigError
from reasonlab.model.pretrained import map_tokens
from reasonlab.store import CorruptRunError, check_checkpoint, read_result
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig, config_id


def run_dir_for(config: TrainConfig, root: Path) -> Path:
    return root / "runs" / config_id(config)


def load_run_model(run_dir: Path) -> tuple[TrainConfig, Any]:
    """The config and the latest checkpointed model of a run directory (eval mode)."""
    from safetensors.torch import load_file

    from reasonlab.model import MODELS

    if not (run_dir / "config.json").is_file():
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "config.json); pass a directory under <out>/runs/")
    data = _config_json(run_dir)
    config = TrainConfig.build(data, where=f"{run_dir}/config.json")
    if not (run_dir / "ckpt" / "state.safetensors").is_file():
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "ckpt/state.safetensors); train it first")
    check_checkpoint(run_dir)  # state.json, the header, and the checksum when it has one
    try:
        tensors = load_file(str(run_dir / "ckpt" / "state.safetensors"))
    except Exception as e:  # noqa: BLE001 - safetensors raises several types for bad data
        raise CorruptRunError(run_dir, "ckpt/state.safetensors", f"is unreadable ({e})") from None
    model = MODELS[config.model.arch.name](config.model)
    try:
        model.load_state_dict({k.removeprefix("model."): v for k, v in tensors.items()
                               if k.startswith("model.")})
    except RuntimeError as e:
        raise CorruptRunError(run_dir, "ckpt/state.safetensors", "does not match config.json "
                              f"({str(e).splitlines()[0]})") from None
    return config, model.eval()


def _config_json(run_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((run_dir / "config.json").read_text())
    except (OSError, ValueError) as e:
        raise CorruptRunError(run_dir, "config.json", f"is unreadable ({e})") from None
    if not isinstance(data, dict):
        raise CorruptRunError(run_dir, "config.json", "is not a JSON object")
    return data


@torch.no_grad()
def load_run(model: nn.Module, run_dir: Path, tokens: list[str] | tuple[str, ...],
             seed: int = 0) -> list[int]:
    """Overwrite every parameter of `model` except the head with the final weights of the
    finished run in `run_dir` (TrainConfig.init_from: a masked-LM run on an artificial or English
    corpus, Chiang & Lee, docs/papers.md §4). As for a shipped checkpoint, W_E is re-indexed to
    the task's tokens through `map_tokens` against the run's vocabulary (a word-vocabulary task
    keeps every id; LEGO's tokens take their words or arbitrary ones), and W_pos keeps the
    first max_seq_len positions. Returns the run's token id of every task token."""
    if read_result(run_dir) is None:
        raise CheckpointError(f"pretraining run {run_dir} has not finished; train it first "
                              "(runs.execute does, for a config naming it in `init_from`)")
    source, pre = load_run_model(run_dir)
    cfg = model.config  # type: ignore[attr-defined]
    token_ids = map_tokens(tokens, list(build_task(source.task).vocab.tokens), seed)
    sd = {k: v for k, v in pre.state_dict().items() if not k.startswith("head.")}
    sd["W_E"] = sd["W_E"][torch.as_tensor(token_ids, device=sd["W_E"].device)]
    if "W_pos" in sd:
        sd["W_pos"] = sd["W_pos"][: cfg.max_seq_len]
    missing, unexpected = model.load_state_dict(sd, strict=False)
    left = [k for k in missing if not k.startswith("head.")]
    if left or unexpected:
        raise ConfigError(f"pretraining run {run_dir.name} does not fit this model (missing "
                          f"{left[:3]}, unexpected {unexpected[:3]})")
    return token_ids
