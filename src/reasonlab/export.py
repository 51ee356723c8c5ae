"""`reasonlab export RUN --format hf|transformer-lens --out DIR`: a trained run of the store
written as a folder other tools load, with a model card (task, config, run id, final metrics,
how to load it). The tensors and config.json come from model/export.py; this module reads the
run and writes the folder whole, or nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from reasonlab import tokenizer
from reasonlab.errors import CheckpointError, ConfigError
from reasonlab.model.export import hf_state, tl_state


def write_folder(out: Path, config: dict[str, Any], tensors: dict[str, torch.Tensor],
                 tokens: list[str], card: str) -> None:
    """config.json, model.safetensors, tokens.json, the task's tokenizer (tokenizer.json,
    tokenizer_config.json: `AutoTokenizer.from_pretrained(out)`) and README.md into `out` (a
    new folder)."""
    from safetensors.torch import save_file

    out.mkdir(parents=True)
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "tokens.json").write_text(json.dumps(tokens) + "\n")
    tokenizer.save(tuple(tokens), out)
    (out / "README.md").write_text(card)


def hf_labels(cfg: dict[str, Any], task: Any) -> dict[str, Any]:
    """config.json's token and label names for the task: pad / bos / eos ids that name its
    tokens (transformers' own defaults name none of them: GPT-2's 50256, Llama's 1 and 2), and
    a classifier's id2label from the task's class names, which pipelines print."""
    out = dict(cfg, **tokenizer.special_ids(tuple(task.vocab.tokens)))
    names = task.class_names()
    if "num_labels" in cfg and len(names) == cfg["num_labels"]:
        out["id2label"] = {str(i): n for i, n in enumerate(names)}
        out["label2id"] = {n: i for i, n in enumerate(names)}
    return out


FORMATS = ("hf", "transformer-lens")

LOAD = {
    "hf": "from transformers import AutoTokenizer, {cls}\n"
          "tokenizer = AutoTokenizer.from_pretrained('{out}')\n"
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
               result: dict[str, Any] | None, step: int | None = None,
               example: str = "") -> str:
    """README.md of an exported run: task, config, run id, final metrics, how to load it;
    `step`: an unfinished run's checkpoint, exported with --last-checkpoint; `example`: an
    input written out (tokenizer.input_text). The load lines name the folder relative to
    where it lies (a card never shows a path of the exporting machine)."""
    final = (result or {}).get("final", {})
    metrics = "\n".join(f"- {k}: {v:.4f}" if isinstance(v, float) else f"- {k}: {v}"
                        for k, v in final.items() if not isinstance(v, (list, dict)))
    partial = ("" if result is not None else
               f"**Unfinished run**: the weights of its last verified checkpoint, step {step} "
               f"of {config.steps} (exported with `--last-checkpoint`).\n\n")
    return (f"# reasonlab run {run_dir.name}\n\n{partial}"
            f"Exported by `reasonlab export` ({fmt}) as `{cls}`.\n\n"
            f"- run id: `{run_dir.name}`\n- task: `{config.task.name}`\n"
            f"- the task's tokens, in id order: tokens.json; its tokenizer: tokenizer.json "
            f"(`AutoTokenizer.from_pretrained`: an input written out as words, "
            f"`{example}`, to its ids and back)\n\n"
            f"## Final metrics\n\n{metrics or '- (none recorded)'}\n\n"
            f"## Load it\n\nFrom the folder that holds `{out.name}`:\n\n"
            f"```python\n{LOAD[fmt].format(cls=cls, out=out.name)}\n```\n\n"
            f"## Run config\n\nResolved: every field, defaults included (the task's too).\n\n"
            f"```json\n{json.dumps(config.model_dump(mode='json'), indent=2)}\n"
            "```\n")


def export_run(run_dir: Path, fmt: str, out: Path, last_checkpoint: bool = False
               ) -> tuple[str, Path]:
    """Write the finished run in `run_dir` (with `last_checkpoint`, also an unfinished one:
    its last checkpoint) to the new folder `out` in format `fmt`; returns the class that loads
    it and `out`. Every file it reads is verified first (result.json's checksums, or the
    checkpoint's: its tensors, the metrics lines up to it and config.json), so a damaged run
    fails in one line naming the file. Nothing is written when the run has no counterpart, and
    `out` must not exist or be empty (nothing of the user's is overwritten); the folder appears
    whole (written beside, then renamed)."""
    import shutil
    import tempfile

    from reasonlab.runs import load_result
    from reasonlab.store import check_partial
    from reasonlab.tasks.base import build_task
    from reasonlab.train.init_stages import load_run_model

    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out} exists and is not an empty folder; give a new one")
    if not (run_dir / "config.json").is_file():
        raise CheckpointError(f"{run_dir} is not a finished or checkpointed run (no "
                              "config.json); pass a directory under <out>/runs/")
    result = load_result(run_dir)  # a finished run, verified whole
    step = None
    if result is None:
        step = check_partial(run_dir)  # its checkpoint, metrics and config.json verified
        if not step:
            raise CheckpointError(f"run {run_dir.name} has no checkpoint yet; train it first")
        if not last_checkpoint:
            raise CheckpointError(f"run {run_dir.name} has not finished (its last checkpoint "
                                  f"is at step {step}); finish it, or export that checkpoint "
                                  "with --last-checkpoint")
    config, model = load_run_model(run_dir)
    task = build_task(config.task)
    if fmt == "hf":
        cfg, tensors = hf_state(model)
        cfg = hf_labels(cfg, task)
        cls = cfg["architectures"][0]
    else:
        cfg, tensors = tl_state(model)
        cls = "TransformerBridge (native)"
    batch = task.sample(np.random.default_rng(0), 1)
    example = tokenizer.input_text(tuple(task.vocab.tokens), batch.tokens[0].tolist())
    card = model_card(run_dir, config, fmt, cls, out, result, step, example)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        write_folder(tmp / "x", cfg, tensors, list(task.vocab.tokens), card)
        if out.exists():
            out.rmdir()  # empty, checked above
        (tmp / "x").rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return cls, out
