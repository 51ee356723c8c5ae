"""Runs: content-addressed directories; finished runs are reused, interrupted ones resumed.

A run's id hashes the values of its resolved config that differ from their defaults (plus the
task's name, which is every task config's default), together with RESULTS_VERSION. So adding
a new config field with a default that keeps old behaviour keeps every existing run id; bump
RESULTS_VERSION whenever a code change alters results or a default changes meaning, so that
old run directories are not silently reused.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from reasonlab.train.config import TrainConfig

RESULTS_VERSION = 3  # 3: LEGO root clause fixed as in the paper (task.root)


def config_id(config: TrainConfig) -> str:
    changed = config.model_dump(mode="json", exclude_defaults=True)
    blob = json.dumps({"task": config.task.name, "config": changed, "v": RESULTS_VERSION},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def run_dir_for(config: TrainConfig, root: Path) -> Path:
    return root / "runs" / config_id(config)


def load_result(run_dir: Path) -> dict[str, Any] | None:
    path = run_dir / "result.json"
    return json.loads(path.read_text()) if path.exists() else None


def execute(config: TrainConfig, root: Path, quiet: bool = False, desc: str | None = None,
            position: int | None = None) -> dict[str, Any]:
    """Run `config` under `root/runs/<id>` unless it already finished; return its result."""
    from reasonlab.train.loop import read_metrics, train

    run_dir = run_dir_for(config, root)
    done = load_result(run_dir)
    if done is not None:
        return done
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(config.model_dump(mode="json"), indent=1))
    final = train(config, run_dir, quiet=quiet, desc=desc, position=position)
    result = {"id": run_dir.name, "final": final, "curve": read_metrics(run_dir)}
    tmp = run_dir / "result.json.tmp"
    tmp.write_text(json.dumps(result))
    tmp.replace(run_dir / "result.json")
    return result


def load_run_model(run_dir: Path) -> tuple[TrainConfig, Any]:
    """The config and the latest checkpointed model of a run directory (eval mode)."""
    from safetensors.torch import load_file

    from reasonlab.errors import CheckpointError
    from reasonlab.model.models import MODELS

    try:
        config = TrainConfig.build(json.loads((run_dir / "config.json").read_text()))
        tensors = load_file(str(run_dir / "ckpt" / "state.safetensors"))
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run ({e}); pass "
                              "a directory under <out>/runs/") from None
    model = MODELS[config.model.arch](config.model)
    model.load_state_dict({k.removeprefix("model."): v for k, v in tensors.items()
                           if k.startswith("model.")})
    return config, model.eval()
