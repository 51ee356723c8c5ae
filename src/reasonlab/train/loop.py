"""The training loop: plain, minGPT-style, resumable to the bit.

Determinism (docs/design.md §3 Determinism): data come from numpy generators seeded by
(seed, purpose) (train/seeds.py); the order of training examples in epoch e is a permutation
drawn from a generator seeded by (seed, e); stochastic-depth draws come from a generator seeded
by (seed, step); dropout uses torch's global RNG, whose state is checkpointed. Checkpoints fall
on evaluation steps, so no running statistic has to be saved, and a resumed run replays exactly
the steps an uninterrupted run would take.

`train()` builds the run's task once and passes it down: to the data, to the init stages
(train/init_stages.py: init_from -> mimic -> freeze) and to the class masks.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from reasonlab.errors import CheckpointError, ConfigError
from reasonlab.store import write_text_atomic
from reasonlab.tasks.base import Batch, Task, build_task
from reasonlab.tasks.disjoint import overlap, without_seen
from reasonlab.tracking import Sink
from reasonlab.train.checkpoint import (INIT_DIR, frozen_record, has_checkpoint, kept_weights,
                                       load_checkpoint, save_checkpoint, save_initial)
from reasonlab.train.config import TrainConfig, config_id
from reasonlab.train.device import (autocast_for, cast_frozen_matrices, configure,
                                    resolve_device, resolve_dtype)
from reasonlab.train.diagnostics import PROBE_N, run_diagnostics
from reasonlab.train.init_stages import build_model
from reasonlab.train.metrics import evaluate, headline, model_inputs, param_counts, slot_loss
from reasonlab.train.optim import lr_at, make_optimizer
from reasonlab.train.seeds import DATA, DEPTH, ORDER, seeds, torch_generator

__all__ = ["build_model", "draw_splits", "make_data", "make_splits", "resolve_device",
           "seeds", "train", "train_step"]  # studies


def make_data(config: TrainConfig, task: Task | None = None) -> tuple[Batch, Batch]:
    """The run's training and test sets (the examples it trains on: without the validation
    ones); `task` as in `build_model`."""
    train, _, test = make_splits(config, task)
    return train, test


def make_splits(config: TrainConfig, task: Task | None = None
                ) -> tuple[Batch, Batch | None, Batch]:
    """Training, validation (the last n_val of the training draw; None when n_val is 0) and
    test sets."""
    task = build_task(config.task) if task is None else task
    return draw_splits(task, config.seed, config.n_train, config.n_test, config.n_val)


def draw_splits(task: Task, seed: int, n_train: int, n_test: int, n_val: int = 0
                ) -> tuple[Batch, Batch | None, Batch]:
    """The splits of a run with this seed and these sizes (`make_splits` without the rest of
    the config: what `reasonlab data export` writes)."""
    train, test = task.splits(np.random.default_rng(seeds(seed, DATA)), n_train, n_test)
    val = None
    if n_val:
        cut = n_train - n_val
        train, val = train[:cut], train[cut:]
    if overlap(task) is None:  # no held-out example equals a training one (tasks/disjoint.py)
        test = without_seen(train, test)
        val = None if val is None else without_seen(train, val)
        if len(test) == 0 or (val is not None and len(val) == 0):
            raise ConfigError(f"task {task.config.name}: every held-out example equals a "
                              "training one at these sizes; lower n_train")
    return train, val, test


def epoch_permutation(config: TrainConfig, n: int, epoch: int) -> torch.Tensor:
    """The order of the n training examples in epoch `epoch` (docs/design.md §3 Determinism),
    drawn from a seeded CPU generator, so it is the same on every device."""
    g = torch_generator(seeds(config.seed, ORDER, epoch))
    return torch.randperm(n, generator=g)  # host: seeded CPU generator


def _batch_indices(config: TrainConfig, n: int, step: int) -> torch.Tensor:
    """Example indices of optimiser step `step`: epochs of seeded permutations, no state. The
    definition; `EpochOrder` gives the same indices with one draw per epoch."""
    per_epoch = max(1, n // config.batch_size)
    epoch, k = divmod(step, per_epoch)
    perm = epoch_permutation(config, n, epoch)
    return perm[k * config.batch_size : (k + 1) * config.batch_size]


class EpochOrder:
    """`_batch_indices` with the permutation drawn once per epoch, not once per step, and kept
    on the data's device: a step slices it there, so it neither redraws n numbers on the host
    (30 ms at 3M examples) nor copies its indices to the GPU (a host sync per step). The
    indices are those of `_batch_indices`, so a run's batches, and its bits, are unchanged
    (tests/unit/test_sync_free.py)."""

    def __init__(self, config: TrainConfig, n: int, device: torch.device) -> None:
        self.config, self.n, self.device = config, n, device
        self.per_epoch = max(1, n // config.batch_size)
        self.epoch: int | None = None
        self.perm: torch.Tensor | None = None

    def __call__(self, step: int) -> torch.Tensor:
        epoch, k = divmod(step, self.per_epoch)
        if epoch != self.epoch or self.perm is None:
            perm = epoch_permutation(self.config, self.n, epoch)
            if self.device.type == "cuda":  # pinned: the copy runs behind the queued steps
                perm = perm.pin_memory()
            self.perm, self.epoch = perm.to(self.device, non_blocking=True), epoch
        bs = self.config.batch_size
        return self.perm[k * bs : (k + 1) * bs]


def _depth(config: TrainConfig, step: int) -> int | None:
    """Stochastic depth (LEGO paper §4): uniform in depth_range per training batch."""
    if config.model.depth_range is None:
        return None
    lo, hi = config.model.depth_range
    g = torch_generator(seeds(config.seed, DEPTH, step))
    return int(torch.randint(lo, hi + 1, (1,), generator=g))  # host: a Python int


def make_autocast(config: TrainConfig, device: torch.device
                  ) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast for the forward pass when config.dtype means bf16 on `device` (train/
    device.py), else a no-op."""
    return autocast_for(resolve_dtype(config.dtype, device), device)


def class_masks(task: Task, device: torch.device) -> dict[str, torch.Tensor | None]:
    """Per split, the classes a prediction may take ([C] bool; None = all): the task's
    `class_mask` (symbolic template tasks: the split's symbols)."""
    masks = {s: task.class_mask(s) for s in ("train", "test")}
    return {s: m.to(device) if m is not None else None for s, m in masks.items()}


def train_step(config: TrainConfig, model: nn.Module, optimizer: torch.optim.Optimizer,
               train_set: Batch, step: int, lr: float,
               autocast: contextlib.AbstractContextManager[Any],
               classes: torch.Tensor | None = None, order: EpochOrder | None = None
               ) -> torch.Tensor:
    """One optimiser step (0-based `step`) at learning rate `lr`; returns the detached loss.

    `classes` [C] bool restricts the softmax to the training split's classes (`class_masks`).
    `order`: the run's EpochOrder over `train_set` (train() keeps one); None derives the
    step's indices alone (`_batch_indices`), the same ones.
    No host-device sync happens here on CUDA (docs/design.md §8 Performance): the indices are
    sliced on the device, the loss masks by ignore_index (metrics.slot_loss), and the caller
    decides when to read the loss.
    """
    for group in optimizer.param_groups:
        group["lr"] = lr
    idx = (order(step) if order is not None
           else _batch_indices(config, len(train_set), step).to(train_set.tokens.device))
    batch = train_set[idx]
    with autocast:
        logits = model(batch.tokens, batch.label_pos, batch.pad_mask, depth=_depth(config, step),
                       **model_inputs(batch))
    loss = slot_loss(logits, batch, classes)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if config.optim.grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.optim.grad_clip)
    optimizer.step()
    return loss.detach()


def train(config: TrainConfig, run_dir: Path, quiet: bool = False,
          desc: str | None = None, position: int | None = None,
          fence: Callable[[], None] = lambda: None, sink: Sink | None = None) -> dict[str, Any]:
    """Train (or resume) the run in `run_dir`; returns the final evaluation. `fence` is called
    immediately before every write to the folder (runs.execute: the run lock's check, which
    raises once another process has taken the run over). `sink` (tracking.py) mirrors every
    metrics line: it starts from the lines the run keeps, then gets each new one, after the
    losses of the steps since the evaluation before it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if config.threads:
        torch.set_num_threads(config.threads)
    device = resolve_device(config.device)
    precision = resolve_dtype(config.dtype, device)
    configure(device, precision, config.deterministic)
    chash = config_id(config)  # a checkpoint belongs to one run
    task = build_task(config.task)
    train_set, val_set, test_set = make_splits(config, task)
    train_set, test_set = train_set.to(device), test_set.to(device)
    val_set = None if val_set is None else val_set.to(device)
    # on the device before the init stages: mimicking trains there too
    model = build_model(config, task, root=run_dir.parent.parent,  # <root>/runs/<id>
                        device=device)
    classes = class_masks(task, device)
    frozen = frozen_record(model, config)  # left out of checkpoints, recorded instead
    if config.mimic is not None and not (run_dir / INIT_DIR).exists():
        save_initial(run_dir, model)  # the mimicked heads, for the analyses
    optimizer = make_optimizer(model, config.optim, fused=device.type == "cuda")
    # torch.compile traces on the first call; the plain module keeps the weights, so
    # checkpoints and analyses see the same state_dict either way. compile_mode
    # "reduce-overhead" adds CUDA graphs: a launch-bound step (FPT) replays as one launch
    forward = torch.compile(model, mode=config.compile_mode) if config.compile else model
    torch.manual_seed(int(seeds(config.seed, ORDER, 2**31).generate_state(1)[0]))  # dropout

    metrics_path = run_dir / "metrics.jsonl"
    start = 0
    if has_checkpoint(run_dir):
        start = load_checkpoint(run_dir, chash, model, optimizer, config.steps)
        if not kept_weights(run_dir) and start != config.steps and not stopped(
                config, run_dir, start):  # a record without weights is only ever a run's end
            raise CheckpointError(f"checkpoint {run_dir / 'ckpt'} holds no weights but the run "
                                  f"has steps left after step {start}; delete {run_dir} to "
                                  "train it again")
    _truncate_metrics(metrics_path, start, fence)
    if sink is not None:
        fence()
        sink.start(read_metrics(run_dir))
    if frozen is not None and device.type == "cuda" and precision == "bf16":
        cast_frozen_matrices(model)  # once, not at every forward (never saved: frozen)

    autocast = autocast_for(precision, device)
    bar = tqdm(total=config.steps, initial=start, disable=quiet, desc=desc, position=position,
               leave=position is None, dynamic_ncols=True)
    model.train()
    loss_sum = torch.zeros((), device=device)
    order = EpochOrder(config, len(train_set), device)
    last: dict[str, Any] = {}
    # a run that stopped at its level (config.stop_at) and was killed before its result was
    # written resumes to nothing more: its last metrics line is the stop
    end = start if stopped(config, run_dir, start) else config.steps
    # variants whose maths follow the training step (heat treatment's temperature schedule)
    scheduled = [m for m in model.modules() if hasattr(m, "set_step")]
    probe = train_set[:PROBE_N] if config.diagnostics else None
    # each step's loss for the sink, kept on the device until the evaluation that reads
    # loss_sum reads them too: a read per step would wait for the GPU at every step
    step_losses = torch.zeros(config.eval_every, device=device) if sink is not None else None
    for step in range(start, end):
        for m in scheduled:
            m.set_step(step)
        lr = lr_at(step, config.steps, config.optim)
        loss = train_step(config, forward, optimizer, train_set, step, lr, autocast,
                          classes["train"], order)
        loss_sum += loss
        if step_losses is not None:  # evaluations fall on multiples of eval_every (or the end)
            step_losses[step % config.eval_every] = loss
        bar.update(1)

        done = step + 1
        if done % config.eval_every == 0 or done == config.steps:
            since = done - (done - 1) // config.eval_every * config.eval_every
            last = {"step": done, "lr": lr, "train_loss": loss_sum.item() / since,
                    **param_counts(model),
                    **evaluate(forward, test_set, config.eval_batch_size, autocast,
                               classes["test"])}
            if val_set is not None:
                last["val"] = evaluate(forward, val_set, config.eval_batch_size, autocast,
                                       classes["train"])
            if probe is not None:  # after the evaluations: they need not see its graph
                last["diag"] = run_diagnostics(config.diagnostics, model, probe, autocast,
                                               classes["train"])
            if config.eval_train:
                last["train_acc"] = evaluate(forward, train_set[: config.n_test],
                                             config.eval_batch_size, autocast,
                                             classes["train"])["acc"]
            loss_sum.zero_()
            line = json.dumps(last) + "\n"
            fence()
            with metrics_path.open("a") as f:
                f.write(line)
            if sink is not None and step_losses is not None:
                fence()
                sink.log_steps(list(zip(range(done - since + 1, done + 1),
                                        step_losses[:since].tolist(), strict=True)))
                fence()
                sink.log(last)
            bar.set_postfix(loss=f"{last['train_loss']:.3f}", acc=f"{last['acc']:.3f}")
            stop = config.stop_at is not None and headline(last) >= config.stop_at
            if done % config.ckpt_every == 0 or done == config.steps or stop:
                # the last holds no optimizer state: nothing resumes a finished run; with
                # keep_checkpoints="none" no weights either, so the run keeps none
                end_record = config.keep_checkpoints == "none" and (done == config.steps
                                                                     or stop)
                save_checkpoint(run_dir, done, chash, model,
                                None if done == config.steps or end_record else optimizer,
                                frozen, fence=fence, weights=not end_record)
            if stop:  # the level is reached: what the run is for is measured
                break
    bar.close()
    if not last:  # resumed a finished run: the final evaluation is the last metrics line
        rows = read_metrics(run_dir)
        if not rows or rows[-1]["step"] != start:
            raise CheckpointError(f"{run_dir}/metrics.jsonl lacks the line of step {start}, "
                                  f"which the checkpoint holds; delete {run_dir} to train "
                                  "the run again")
        last = rows[-1]
    return last


def stopped(config: TrainConfig, run_dir: Path, step: int) -> bool:
    """Whether the run already stopped at its level (config.stop_at) at checkpoint `step`."""
    if config.stop_at is None or step == 0:
        return False
    rows = read_metrics(run_dir)
    return bool(rows) and rows[-1]["step"] == step and headline(rows[-1]) >= config.stop_at


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _truncate_metrics(path: Path, step: int, fence: Callable[[], None] | None = None) -> None:
    """Drop metric lines logged after the checkpoint we resume from (they will be replayed)."""
    if not path.exists():
        return
    keep = [line for line in path.read_text().splitlines()
            if line.strip() and _is_complete(line) and json.loads(line)["step"] <= step]
    write_text_atomic(path, "".join(line + "\n" for line in keep), fence)


def _is_complete(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:  # killed mid-write
        return False
    return True

