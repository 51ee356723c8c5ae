"""`reasonlab export RUN --format hf|transformer-lens --out DIR`: a trained run of the store
written as a folder other tools load, with a model card (task, config, run id, final metrics,
how to load it). The tensors and config.json come from model/export.py; this module reads the
run and writes the folder whole, or nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from reasonlab.errors import ConfigError
from reasonlab.model.export import hf_state, kind, tl_state


def write_folder(out: Path, config: dict[str, Any], tensors: dict[str, torch.Tensor],
                 tokens: list[str], card: str) -> None:
    """config.json, model.safetensors, tokens.json and README.md into `out` (a new folder)."""
    from safetensors.torch import save_file

    out.mkdir(parents=True)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "tokens.json").write_text(json.dumps(tokens) + "\n")
    (out / "README.md").write_text(card)


FORMATS = ("hf", "transformer-lens")

LOAD = {
    "hf": "from transformers import {cls}\n"
          "model = {cls}.from_pretrained('{out}')",
    "transformer-lens": "import json, safetensors.torch\n"
                        "from transformer_lens.model_bridge.sources.native import boot\n"
                        "from transformer_lens.utilities.tl_checkpoint_conversion import "
                        "convert_tl_checkpoint\n"
                        "from transformer_lens.config import TransformerBridgeConfig\n"
                        "cfg = TransformerBridgeConfig.from_dict(json.load(open("
                        "'{out}/config.json')))\n"
                        "bridge = boot(cfg)\n"
                        "bridge.load_state_dict(convert_tl_checkpoint(safetensors.torch.load_file("
                        "'{out}/model.safetensors'), cfg))",
}


def model_card(run_dir: Path, config: Any, fmt: str, cls: str, out: Path,
               result: dict[str, Any] | None) -> str:
    """README.md of an exported run: task, config, run id, final metrics, how to load it."""
    final = (result or {}).get("final", {})
    metrics = "\n".join(f"- {k}: {v:.4f}" if isinstance(v, float) else f"- {k}: {v}"
                        for k, v in final.items() if not isinstance(v, (list, dict)))
    return (f"# reasonlab run {run_dir.name}\n\n"
            f"Exported by `reasonlab export` ({fmt}) as `{cls}`.\n\n"
            f"- run id: `{run_dir.name}`\n- task: `{config.task.name}`\n"
            f"- the task's tokens, in id order: tokens.json (every input is a sequence of "
            f"their ids; no tokenizer)\n\n"
            f"## Final metrics\n\n{metrics or '- (none recorded)'}\n\n"
            f"## Load it\n\n```python\n{LOAD[fmt].format(cls=cls, out=out)}\n```\n\n"
            f"## Run config\n\n```json\n"
            f"{json.dumps(config.model_dump(mode='json', exclude_defaults=True), indent=2)}\n"
            "```\n")


def export_run(run_dir: Path, fmt: str, out: Path) -> tuple[str, Path]:
    """Write the finished or checkpointed run in `run_dir` to the new folder `out` in format
    `fmt`; returns the class that loads it and `out`. Nothing is written when the run has no
    counterpart, and `out` must not exist or be empty (nothing of the user's is overwritten);
    the folder appears whole (written beside, then renamed)."""
    import shutil
    import tempfile

    from reasonlab.runs import load_result
    from reasonlab.tasks.base import build_task
    from reasonlab.train.init_stages import load_run_model

    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out} exists and is not an empty folder; give a new one")
    config, model = load_run_model(run_dir)
    k = kind(model)
    if fmt == "hf" or k in ("bert", "albert"):
        cfg, tensors = hf_state(model)
        cls = cfg["architectures"][0]
    else:
        cfg, tensors = tl_state(model)
        cls = "TransformerBridge (native)"
    card = model_card(run_dir, config, fmt, cls, out, load_result(run_dir))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        write_folder(tmp / "x", cfg, tensors, list(build_task(config.task).vocab.tokens), card)
        if out.exists():
            out.rmdir()  # empty, checked above
        (tmp / "x").rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return cls, out
