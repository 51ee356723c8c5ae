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
from reasonlab.store import CorruptRunError, read_result
from reasonlab.tasks.base import build_task
from reasonlab.train.config import TrainConfig, config_id


def run_dir_for(config: TrainConfig, root: Path) -> Path:
    return root / "runs" / config_id(config)


def load_run_model(run_dir: Path) -> tuple[TrainConfig, Any]:
    """The config and the latest checkpointed model of a run directory (eval mode, on the CPU).
    Reads the model weights alone, checked against their checksum (read_model_weights), never
    the optimizer state that resuming needs."""
    from reasonlab.model import MODELS
    from reasonlab.train.checkpoint import read_model_weights

    if not (run_dir / "config.json").is_file():
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "config.json); pass a directory under <out>/runs/")
    data = _config_json(run_dir)
    config = TrainConfig.build(data, where=f"{run_dir}/config.json")
    if not (run_dir / "ckpt" / "state.safetensors").is_file():
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "ckpt/state.safetensors); train it first")
    weights = read_model_weights(run_dir)
    model = MODELS[config.model.arch.name](config.model)
    try:
        model.load_state_dict(weights)
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
