"""A run folder: its path in the run store and its config.json.

It sits below `runs`, `train.loop` and `train.init_stages` (and imports none of them); loading
a run's model (`init_stages.load_run_model`) lives with the init stages, which rebuild the
frozen weights a checkpoint leaves out (train/checkpoint.py, Frozen).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reasonlab.store import CorruptRunError
from reasonlab.train.config import TrainConfig, config_id


def run_dir_for(config: TrainConfig, root: Path) -> Path:
    return root / "runs" / config_id(config)


def _config_json(run_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((run_dir / "config.json").read_text())
    except (OSError, ValueError) as e:
        raise CorruptRunError(run_dir, "config.json", f"is unreadable ({e})") from None
    if not isinstance(data, dict):
        raise CorruptRunError(run_dir, "config.json", "is not a JSON object")
    return data
