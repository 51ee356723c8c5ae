"""Runs: content-addressed directories; finished runs are reused, interrupted ones resumed.

A run's id hashes its resolved config together with RESULTS_VERSION, which is bumped whenever
a code change alters results (so old run directories are not silently reused).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from reasonlab.train.config import TrainConfig

RESULTS_VERSION = 1


def config_id(config: TrainConfig) -> str:
    blob = json.dumps({"config": config.model_dump(mode="json"), "v": RESULTS_VERSION},
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


def load_model(run_dir: Path):  # -> Transformer (imported lazily: runs is imported early)
    """The trained model of a finished run, from its config.json and last checkpoint."""
    from safetensors.torch import load_file

    from reasonlab.errors import CheckpointError
    from reasonlab.model.transformer import Transformer

    config = TrainConfig.build(json.loads((run_dir / "config.json").read_text()))
    path = run_dir / "ckpt" / "state.safetensors"
    if not path.exists():
        raise CheckpointError(f"{run_dir} has no checkpoint; run it first")
    tensors = load_file(str(path))
    model = Transformer(config.model)
    model.load_state_dict({k.removeprefix("model."): v for k, v in tensors.items()
                           if k.startswith("model.")})
    return model.eval()
