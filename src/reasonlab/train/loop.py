"""The training loop: plain, minGPT-style, resumable to the bit.

Determinism (DESIGN §3): data come from numpy generators seeded by (seed, purpose); the order
of training examples in epoch e is a permutation drawn from a generator seeded by (seed, e);
stochastic-depth draws come from a generator seeded by (seed, step); dropout uses torch's global
RNG, whose state is checkpointed. Checkpoints fall on evaluation steps, so no running statistic
has to be saved, and a resumed run replays exactly the steps an uninterrupted run would take.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from reasonlab.errors import ConfigError
from reasonlab.model import MODELS
from reasonlab.model.transformer import Transformer
from reasonlab.tasks.base import Batch, build_task
from reasonlab.train.checkpoint import has_checkpoint, load_checkpoint, save_checkpoint
from reasonlab.train.config import TrainConfig
from reasonlab.train.metrics import evaluate, slot_loss
from reasonlab.train.optim import lr_at, make_optimizer

# Purposes for seeding independent random streams from one run seed.
_DATA, _INIT, _ORDER, _DEPTH, _MIMIC = 1, 2, 3, 4, 5


def seeds(seed: int, purpose: int, *more: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, purpose, *more])


def torch_generator(seq: np.random.SeedSequence) -> torch.Generator:
    return torch.Generator().manual_seed(int(seq.generate_state(1, dtype=np.uint64)[0] >> 1))


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def make_data(config: TrainConfig) -> tuple[Batch, Batch]:
    task = build_task(config.task)
    return task.splits(np.random.default_rng(seeds(config.seed, _DATA)), config.n_train,
                       config.n_test)


def build_model(config: TrainConfig, root: Path | None = None) -> Transformer:
    """The run's model at step 0. `root`: the run store holding config.pretrain's run."""
    torch.manual_seed(int(seeds(config.seed, _INIT).generate_state(1)[0]))
    model = MODELS[config.model.arch.name](config.model)
    if config.pretrained is not None:  # LEGO §4.2: fine-tune from pretrained weights
        from reasonlab.model.pretrained import load_pretrained

        load_pretrained(model, config.pretrained, build_task(config.task).vocab.tokens)
    if config.pretrain is not None:  # Chiang & Lee: fine-tune a run pretrained on a corpus
        from reasonlab.model.pretrained import load_run
        from reasonlab.runs import run_dir_for

        if root is None:
            raise ConfigError("this config initialises from a pretraining run (pretrain); "
                              "give the run store that holds it")
        load_run(model, run_dir_for(config.pretrain, root), build_task(config.task).vocab.tokens)
    if config.mimic is not None:  # LEGO §4.2.2: heads imitate association / manipulation
        from reasonlab.model.mimic import mimic

        mimic(model, build_task(config.task), config.mimic,
              np.random.default_rng(seeds(config.seed, _MIMIC)))
    if config.train_only is not None:  # frozen parameters never reach the optimizer
        prefixes = tuple(config.train_only)
        for name, p in model.named_parameters():
            p.requires_grad_(name.startswith(prefixes))
        if not any(p.requires_grad for p in model.parameters()):
            tops = sorted({n.split(".")[0] for n, _ in model.named_parameters()})
            raise ConfigError(f"train_only={config.train_only} matches no parameter; "
                              f"parameter names start with one of {tops}")
    return model


def _batch_indices(config: TrainConfig, n: int, step: int) -> torch.Tensor:
    """Example indices of optimiser step `step`: epochs of seeded permutations, no state."""
    per_epoch = max(1, n // config.batch_size)
    epoch, k = divmod(step, per_epoch)
    perm = torch.randperm(n, generator=torch_generator(seeds(config.seed, _ORDER, epoch)))
    return perm[k * config.batch_size : (k + 1) * config.batch_size]


def _depth(config: TrainConfig, step: int) -> int | None:
    """Stochastic depth (LEGO paper §4): uniform in depth_range per training batch."""
    if config.model.depth_range is None:
        return None
    lo, hi = config.model.depth_range
    g = torch_generator(seeds(config.seed, _DEPTH, step))
    return int(torch.randint(lo, hi + 1, (1,), generator=g))


def make_autocast(config: TrainConfig, device: torch.device
                  ) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast for the forward pass when config.dtype is bf16, else a no-op."""
    if config.dtype == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def class_masks(config: TrainConfig, device: torch.device) -> dict[str, torch.Tensor | None]:
    """Per split, the classes a prediction may take ([C] bool; None = all): a task with a
    `class_mask(split)` method restricts them (symbolic template tasks: the split's symbols)."""
    fn = getattr(build_task(config.task), "class_mask", None)
    masks = {s: fn(s) if fn is not None else None for s in ("train", "test")}
    return {s: m.to(device) if m is not None else None for s, m in masks.items()}


def train_step(config: TrainConfig, model: Transformer, optimizer: torch.optim.Optimizer,
               train_set: Batch, step: int, lr: float,
               autocast: contextlib.AbstractContextManager[Any],
               classes: torch.Tensor | None = None) -> torch.Tensor:
    """One optimiser step (0-based `step`) at learning rate `lr`; returns the detached loss.

    `classes` [C] bool restricts the softmax to the training split's classes (`class_masks`).
    No host-device sync happens here (DESIGN §5): the caller decides when to read the loss.
    """
    for group in optimizer.param_groups:
        group["lr"] = lr
    batch = train_set[_batch_indices(config, len(train_set), step).to(train_set.tokens.device)]
    with autocast:
        logits = model(batch.tokens, batch.label_pos, batch.pad_mask, depth=_depth(config, step))
    loss = slot_loss(logits, batch, classes)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if config.optim.grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.grad_clip)
    optimizer.step()
    return loss.detach()


def config_hash(config: TrainConfig) -> str:
    from reasonlab.runs import config_id

    return config_id(config)


def train(config: TrainConfig, run_dir: Path, quiet: bool = False,
          desc: str | None = None, position: int | None = None) -> dict[str, Any]:
    """Train (or resume) the run in `run_dir`; returns the final evaluation."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if config.threads:
        torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    chash = config_hash(config)
    train_set, test_set = make_data(config)
    train_set, test_set = train_set.to(device), test_set.to(device)
    model = build_model(config, run_dir.parent.parent).to(device)  # <root>/runs/<id>
    classes = class_masks(config, device)
    optimizer = make_optimizer(model, config.optim)
    torch.manual_seed(int(seeds(config.seed, _ORDER, 2**31).generate_state(1)[0]))  # dropout

    metrics_path = run_dir / "metrics.jsonl"
    start = 0
    if has_checkpoint(run_dir):
        start = load_checkpoint(run_dir, chash, model, optimizer)
    _truncate_metrics(metrics_path, start)

    autocast = make_autocast(config, device)
    bar = tqdm(total=config.steps, initial=start, disable=quiet, desc=desc, position=position,
               leave=position is None, dynamic_ncols=True)
    model.train()
    loss_sum = torch.zeros((), device=device)
    last: dict[str, Any] = {}
    for step in range(start, config.steps):
        lr = lr_at(step, config.steps, config.optim)
        loss_sum += train_step(config, model, optimizer, train_set, step, lr, autocast,
                               classes["train"])
        bar.update(1)

        done = step + 1
        if done % config.eval_every == 0 or done == config.steps:
            since = done - (done - 1) // config.eval_every * config.eval_every
            last = {"step": done, "lr": lr, "train_loss": loss_sum.item() / since,
                    **evaluate(model, test_set, config.eval_batch_size, autocast,
                               classes["test"])}
            if config.eval_train:
                last["train_acc"] = evaluate(model, train_set[: config.n_test],
                                             config.eval_batch_size, autocast,
                                             classes["train"])["acc"]
            loss_sum.zero_()
            with metrics_path.open("a") as f:
                f.write(json.dumps(last) + "\n")
            bar.set_postfix(loss=f"{last['train_loss']:.3f}", acc=f"{last['acc']:.3f}")
            if done % config.ckpt_every == 0 or done == config.steps:
                save_checkpoint(run_dir, done, chash, model, optimizer)
    bar.close()
    if not last:  # resumed a finished run: the final evaluation is the last metrics line
        last = read_metrics(run_dir)[-1]
    return last


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _truncate_metrics(path: Path, step: int) -> None:
    """Drop metric lines logged after the checkpoint we resume from (they will be replayed)."""
    if not path.exists():
        return
    keep = [line for line in path.read_text().splitlines()
            if line.strip() and _is_complete(line) and json.loads(line)["step"] <= step]
    path.write_text("".join(line + "\n" for line in keep))


def _is_complete(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:  # killed mid-write
        return False
    return True

