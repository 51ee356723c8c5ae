"""Sync-free training steps (README, "Running at paper scale on a GPU"): the epoch order drawn
once per epoch gives the batches of the per-step derivation; the CUDA loss path reads nothing
back to the host (no boolean-mask indexing: a TorchFunctionMode guard); a run trained with the
once-per-epoch order is bitwise the run trained with the per-step one, so CPU bits and run ids
are unchanged."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from torch.overrides import TorchFunctionMode

from reasonlab.tasks.base import Batch
from reasonlab.train import loop
from reasonlab.train.config import TrainConfig
from reasonlab.train.metrics import slot_loss
from reasonlab.train.optim import make_optimizer
from reasonlab.train.seeds import ORDER, seeds


def config(**over: Any) -> TrainConfig:
    base = dict(task={"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
                model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32, dropout=0.1,
                           depth_range=[1, 2]),
                n_train=100, n_test=32, batch_size=16, steps=30, eval_every=5, ckpt_every=10)
    return TrainConfig.build({**base, **over})


def per_step_reference(seed: int, n: int, batch_size: int, step: int) -> torch.Tensor:
    """The batch of `step` as the loop derived it before EpochOrder, written out here: the
    whole epoch permutation redrawn at every step, then sliced."""
    per_epoch = max(1, n // batch_size)
    epoch = step // per_epoch
    k = step - epoch * per_epoch
    g = torch.Generator().manual_seed(
        int(seeds(seed, ORDER, epoch).generate_state(1, dtype=np.uint64)[0] >> 1))
    perm = torch.randperm(n, generator=g)
    return perm[k * batch_size:(k + 1) * batch_size]


@pytest.mark.parametrize("n,batch_size", [(100, 16), (64, 16), (10, 16), (1000, 7)])
def test_epoch_order_gives_the_per_step_batches(n, batch_size):
    cfg = config(n_train=max(n, 40), batch_size=batch_size)
    order = loop.EpochOrder(cfg, n, torch.device("cpu"))
    for step in range(0, 60):  # several epochs, the leftover examples of each dropped
        want = per_step_reference(cfg.seed, n, batch_size, step)
        assert torch.equal(order(step), want), step
        assert torch.equal(loop._batch_indices(cfg, n, step), want), step
    # a resumed run starts mid-epoch with a fresh order: the same batches
    resumed = loop.EpochOrder(cfg, n, torch.device("cpu"))
    for step in (37, 38, 59, 13):
        assert torch.equal(resumed(step), per_step_reference(cfg.seed, n, batch_size, step))


def test_epoch_order_draws_once_per_epoch(monkeypatch):
    cfg = config()
    draws = []
    real = loop.epoch_permutation
    monkeypatch.setattr(loop, "epoch_permutation",
                        lambda c, n, e: draws.append(e) or real(c, n, e))
    order = loop.EpochOrder(cfg, 100, torch.device("cpu"))  # 6 steps an epoch
    for step in range(30):
        order(step)
    assert draws == [0, 1, 2, 3, 4]


class HostReadGuard(TorchFunctionMode):
    """Fails on every op that makes CUDA wait for the host to read a result: boolean-mask
    indexing (its output size), nonzero / masked_select, and reading values (.item(),
    .tolist(), bool / int / float of a tensor)."""

    READS = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.__bool__,
             torch.Tensor.__int__, torch.Tensor.__float__, torch.nonzero, torch.Tensor.nonzero,
             torch.masked_select, torch.Tensor.masked_select, torch.Tensor.numpy}

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in self.READS:
            raise AssertionError(f"{func.__name__} reads a value back to the host")
        if func is torch.Tensor.__getitem__:
            index = args[1] if isinstance(args[1], tuple) else (args[1],)
            if any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in index):
                raise AssertionError("boolean-mask indexing: its size is read back")
        return func(*args, **kwargs)


def batch_and_logits(seed: int = 0) -> tuple[Batch, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    B, P, C = 6, 4, 5
    mask = torch.rand(B, P, generator=g) < 0.6
    mask[0, 0] = True
    labels = torch.randint(0, C, (B, P), generator=g)
    labels[~mask] = -1  # as padded slots carry
    batch = Batch(tokens=torch.zeros(B, 3, dtype=torch.long), label_pos=torch.zeros(B, P,
                  dtype=torch.long), labels=labels, loss_mask=mask)
    return batch, torch.randn(B, P, C, generator=g, requires_grad=True)


@pytest.mark.parametrize("with_classes", [False, True])
def test_the_sync_free_loss_equals_the_masked_one_and_reads_nothing(with_classes):
    batch, logits = batch_and_logits()
    classes = torch.tensor([True, False, True, True, False]) if with_classes else None
    want = slot_loss(logits, batch, classes, sync_free=False)
    (g_want,) = torch.autograd.grad(want, logits)
    with HostReadGuard():
        got = slot_loss(logits, batch, classes, sync_free=True)
        (g_got,) = torch.autograd.grad(got, logits)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(g_got, g_want, rtol=1e-6, atol=1e-7)
    with pytest.raises(AssertionError, match="boolean-mask"):  # the CPU path, as it is
        with HostReadGuard():
            slot_loss(logits, batch, classes, sync_free=False)


def test_the_loss_is_sync_free_by_default_on_cuda_only():
    batch, logits = batch_and_logits()
    with HostReadGuard(), pytest.raises(AssertionError):
        slot_loss(logits, batch)  # CPU: the boolean indexing, bits as before

    class Cuda(torch.Tensor):  # a CPU tensor reporting a CUDA device: the path taken
        @property
        def device(self) -> torch.device:  # type: ignore[override]
            return torch.device("cuda", 0)

    with HostReadGuard():
        slot_loss(logits.detach().as_subclass(Cuda), batch)


def test_a_whole_training_step_reads_nothing_back(monkeypatch):
    """train_step with the CUDA loss path and the run's EpochOrder: forward, loss, backward,
    clipping and AdamW, none waiting on the host (the model included). Stochastic depth is
    off here: its draw reads a CPU generator's tensor (`_depth`), host work that never waits
    for the GPU, which this guard cannot tell from a device read."""
    cfg = config(model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32, dropout=0.1))
    model = loop.build_model(cfg)
    train_set, _ = loop.make_data(cfg)
    opt = make_optimizer(model, cfg.optim, fused=True)  # what train() asks for on CUDA
    order = loop.EpochOrder(cfg, len(train_set), torch.device("cpu"))
    monkeypatch.setattr(loop, "slot_loss", functools.partial(slot_loss, sync_free=True))
    order(0)  # the epoch's draw happens on the host, once, before the steps (pinned copy)
    with HostReadGuard():
        for step in range(3):
            loop.train_step(cfg, model, opt, train_set, step, 1e-3, loop.make_autocast(
                cfg, torch.device("cpu")), None, order)


def _files(run_dir) -> tuple[str, dict[str, torch.Tensor]]:
    return ((run_dir / "metrics.jsonl").read_text(),
            load_file(str(run_dir / "ckpt" / "state.safetensors")))


class Killed(Exception):
    pass


def _train(cfg: TrainConfig, run_dir, monkeypatch, kill_at: int | None = None) -> None:
    real, calls = slot_loss, {"n": 0}

    def counted(*a: Any) -> torch.Tensor:
        calls["n"] += 1
        if calls["n"] == kill_at:
            raise Killed
        return real(*a)

    monkeypatch.setattr(loop, "slot_loss", counted)
    try:
        loop.train(cfg, run_dir, quiet=True)
    except Killed:
        pass


def test_a_run_is_bitwise_the_run_with_per_step_batches(tmp_path, monkeypatch):
    """The whole run, trained with EpochOrder, against the same run whose every step
    redraws its epoch's permutation (per_step_reference): metrics and every checkpointed
    tensor equal, at the end (weights) and mid-run (weights, Adam moments, RNG states)."""
    cfg = config(steps=24)
    _train(cfg, tmp_path / "epoch", monkeypatch)
    _train(cfg, tmp_path / "epoch-mid", monkeypatch, kill_at=22)  # after step 20's checkpoint

    class PerStep:
        def __init__(self, c: TrainConfig, n: int, device: torch.device) -> None:
            self.c, self.n = c, n

        def __call__(self, step: int) -> torch.Tensor:
            return per_step_reference(self.c.seed, self.n, self.c.batch_size, step)

    monkeypatch.setattr(loop, "EpochOrder", PerStep)
    _train(cfg, tmp_path / "step", monkeypatch)
    _train(cfg, tmp_path / "step-mid", monkeypatch, kill_at=22)
    for a, b in (("epoch", "step"), ("epoch-mid", "step-mid")):
        (ma, ta), (mb, tb) = _files(tmp_path / a), _files(tmp_path / b)
        assert ma == mb
        assert ta.keys() == tb.keys()
        for k in ta:
            assert torch.equal(ta[k], tb[k]), (a, k)
    assert any(k.startswith("optim.") for k in _files(tmp_path / "epoch-mid")[1])
