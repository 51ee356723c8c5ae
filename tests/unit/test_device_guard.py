"""A CUDA device, simulated on the CPU: smoke trainings and analyses run under a guard that
knows which tensors a GPU run would hold on the GPU, and fails where CUDA would.

The run's device is `cpu:0` (train() is made to resolve to it): the same memory as `cpu`, but
a different torch.device, so `DeviceGuard` (a TorchFunctionMode) can colour tensors.
"device": what `.to(cpu:0)` moved (the run's Batches, its model), what a factory made with
`device=cpu:0`, and what ops compute from such tensors; the guard reports their `.device` as
cpu:0, so `device=x.device` follows x as it would on CUDA. "host": what a factory made without
a device (`torch.zeros(n)`, `torch.from_numpy`) or with `device="cpu"`, what `.cpu()` returned,
and what ops compute from host tensors only. Then, as CUDA does:

- an op mixing a device tensor with a host tensor of one or more dimensions fails (a 0-dim host
  tensor is a scalar CUDA accepts; indexing with CPU indices and copies are allowed);
- `.numpy()` of a device tensor fails (CUDA tensors must come back with `.cpu()` first);
- while training (`strict_compute`), a matmul, linear map, attention or convolution on host
  tensors only fails: on a GPU machine it would silently compute on the CPU (mimicking that
  ran before the model moved to the device).

The AST check in test_device_discipline.py reads every factory call; this guard sees what
actually runs, the studies' analyses included. Both fail on the old `accuracy_by`, whose
accumulator `torch.zeros(n, dtype=torch.float64)` met CUDA indices in `index_add_`.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten
from torch.utils.weak import WeakTensorKeyDictionary

from reasonlab.studies import STUDIES, run_study

FACTORIES = {torch.zeros, torch.ones, torch.empty, torch.full, torch.arange, torch.eye,
             torch.tensor, torch.as_tensor, torch.randn, torch.rand, torch.randint,
             torch.randperm, torch.linspace, torch.logspace}
MOVES = {torch.Tensor.to, torch.Tensor.cuda}
FREE = {torch.Tensor.__getitem__, torch.Tensor.__setitem__, torch.Tensor.copy_,
        torch.Tensor.cpu, torch.Tensor.index_put_, torch._has_compatible_shallow_copy_type,
        torch._C.TensorBase.data.__set__}
"""Ops CUDA runs across devices: indexing with CPU indices, copies, explicit moves, and
Module.to's own swap of a parameter's tensor (a type test and `param.data = moved`; a CPU
"move" to cpu:0 keeps the tensor, so a shared one, e.g. a frozen backbone's, looks moved)."""
COMPUTE = {torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.bmm,
           torch.nn.functional.linear, torch.nn.functional.scaled_dot_product_attention,
           torch.nn.functional.conv1d, torch.einsum}


RUN_DEVICE = torch.device("cpu", 0)
DEVICE_GET = torch.Tensor.device.__get__


class DeviceMismatch(AssertionError):
    pass


class DeviceGuard(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.colours = WeakTensorKeyDictionary()  # tensor -> "device" | "host"
        self.strict_compute = False

    def _colour(self, t: torch.Tensor) -> str | None:
        return self.colours.get(t)

    def _moved_to(self, args: tuple, kwargs: dict) -> str | None:
        """Where `.to(...)` sends a tensor: a device argument, or the tensor it follows;
        None for a cast only."""
        for a in (*args[1:], kwargs.get("device"), kwargs.get("other")):
            if isinstance(a, torch.Tensor):
                return self._colour(a)
            if isinstance(a, (str, torch.device)):
                return _where(a)
        return None

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        colours = [self._colour(t) for t in tensors]
        name = getattr(func, "__qualname__", getattr(func, "__name__", str(func)))
        if func not in FREE and func not in MOVES and "device" in colours and any(
                c == "host" and t.dim() > 0 for t, c in zip(tensors, colours, strict=True)):
            raise DeviceMismatch(f"{name} mixes tensors on the run's device with a CPU "
                                 "tensor (on CUDA: 'Expected all tensors to be on the same "
                                 "device')")
        if func == DEVICE_GET:  # x.device: cpu:0 for a tensor on the run's device
            return RUN_DEVICE if colours[0] == "device" else torch.device("cpu")
        if func is torch.Tensor.numpy and colours and colours[0] == "device":
            raise DeviceMismatch(".numpy() of a tensor on the run's device (CUDA needs "
                                 ".cpu() first)")
        if (self.strict_compute and func in COMPUTE and tensors
                and all(c != "device" for c in colours)):
            raise DeviceMismatch(f"{name} computes on CPU tensors while training: on a GPU "
                                 "machine it would run on the CPU")
        out = func(*args, **kwargs)
        if func in FACTORIES or func is torch.from_numpy:
            colour = _where(kwargs.get("device")) or "host"
        elif func is torch.Tensor.cuda:
            colour = "device"
        elif func is torch.Tensor.cpu:
            colour = "host"
        elif func is torch.Tensor.to and (moved := self._moved_to(args, kwargs)) is not None:
            colour = moved
        else:
            colour = "device" if "device" in colours else "host" if "host" in colours else None
        if colour is not None:
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor):
                    self.colours[t] = colour
        return out


def _where(device: Any) -> str | None:
    """The colour a device argument means: the run's (cpu:0), the host (cpu), or None."""
    if device is None:
        return None
    return "device" if torch.device(device) == RUN_DEVICE else "host"


@pytest.fixture
def guard(monkeypatch):
    """The guard around a test; strict about host compute inside train()."""
    from reasonlab.train import loop

    g = DeviceGuard()
    train = loop.train

    def strict_train(*a: Any, **k: Any) -> Any:
        g.strict_compute = True
        try:
            return train(*a, **k)
        finally:
            g.strict_compute = False

    monkeypatch.setattr(loop, "train", strict_train)
    monkeypatch.setattr(loop, "resolve_device", lambda name: RUN_DEVICE)
    module_to = torch.nn.Module.to

    def to(module: torch.nn.Module, *a: Any, **k: Any) -> torch.nn.Module:
        # a CPU-to-CPU move swaps no tensor, so the guard never sees the parameters: colour
        # them as CUDA would place them
        out = module_to(module, *a, **k)
        where = g._moved_to((None, *a), k)
        if where is not None:
            for t in (*module.parameters(), *module.buffers()):
                g.colours[t] = where
        return out

    monkeypatch.setattr(torch.nn.Module, "to", to)
    with g:
        yield g


def test_the_guard_catches_the_old_accuracy_by(guard):
    """The accumulator of the old `accuracy_by`, as it was, fails under the guard; today's
    passes."""
    from reasonlab.train.metrics import accuracy_by

    correct = torch.tensor([[1.0, 0.0], [1.0, 1.0]], device=RUN_DEVICE)
    key = torch.tensor([[0, 1], [0, 1]], device=RUN_DEVICE)
    assert accuracy_by(correct, key) == [1.0, 0.5]
    k = key.flatten()
    with pytest.raises(DeviceMismatch, match="index_add_"):
        torch.zeros(2, dtype=torch.float64).index_add_(0, k, correct.flatten().double())


def test_the_guard_catches_host_compute_and_numpy(guard):
    x = torch.ones(3, 3).to(RUN_DEVICE)
    with pytest.raises(DeviceMismatch, match="numpy"):
        x.numpy()
    guard.strict_compute = True
    with pytest.raises(DeviceMismatch, match="computes on CPU"):
        torch.ones(2, 2) @ torch.ones(2, 2)
    x @ x  # on the device: fine


GUARDED = ("lego-extrapolation", "lego-probes", "lego-shortcut", "anchors-mechanism",
           "symbols-readout-vs-full", "symbols-copy-embedding-dim", "fpt-universal", "fpt-lstm",
           "artificial-pretraining-lego", "artificial-pretraining")
"""Smoke studies covering the loop, every init stage (pretraining run, shipped checkpoint,
mimicking, freezing), the metrics and the analyses (probes, read-out fit, anchors' solutions,
head scores)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", GUARDED)
def test_smoke_study_under_the_device_guard(name, tmp_path, guard):
    if why := STUDIES[name].missing():
        pytest.skip(why)
    report, _ = run_study(name, "smoke", out=tmp_path, workers=1, quiet=True)
    assert report.verdicts


def test_the_kernel_study_computes_on_its_device(tmp_path, guard, monkeypatch):
    """symbols-kernel trains nothing, so train() never moves its models: it moves them itself,
    with its examples, to the device its recipe resolves to, and computes nothing on the host."""
    from reasonlab.train import device

    monkeypatch.setattr(device, "resolve_device", lambda name: RUN_DEVICE)
    guard.strict_compute = True
    report, _ = run_study("symbols-kernel", "smoke", out=tmp_path, quiet=True,
                          overrides={"n_inits": 1, "n_per_template": 4})
    assert report.verdicts


def test_analyses_compute_on_the_models_device_and_answer_on_the_hosts(tmp_path, guard):
    """A run loaded on its device (load_run_model(device=...)) and examples drawn on the
    host: the analysis helpers send each batch to the model, compute nothing on the host, and
    hand back host tensors (.numpy() works, as the studies' code needs)."""
    import numpy as np

    from reasonlab.analysis.attention import attention_patterns
    from reasonlab.analysis.probes import slot_features
    from reasonlab.analysis.readout import readout_features
    from reasonlab.runs import execute, load_run_model, run_dir_for
    from reasonlab.tasks.base import build_task
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.metrics import evaluate

    cfg = TrainConfig.build({"task": {"name": "lego", "n_clauses": 4, "n_train_vars": 2},
                             "model": {"d_model": 16, "n_layers": 2, "n_heads": 2,
                                       "d_mlp": 32},
                             "n_train": 64, "n_test": 32, "batch_size": 8, "steps": 2,
                             "eval_every": 2, "device": "cpu"})
    execute(cfg, tmp_path, quiet=True)
    _, model = load_run_model(run_dir_for(cfg, tmp_path), device=RUN_DEVICE)
    assert all(guard.colours.get(p) == "device" for p in model.parameters())
    batch = build_task(cfg.task).sample(np.random.default_rng(0), 10)  # on the host
    guard.strict_compute = True  # a matmul on host tensors would mean the host computed
    try:
        features = slot_features(model, batch, batch_size=4)
        finals = readout_features(model, batch, batch_size=4)
        patterns = attention_patterns(model, batch.tokens, batch.pad_mask, batch_size=3)
        whole = attention_patterns(model, batch.tokens, batch.pad_mask)
        metrics = evaluate(model, batch, 4)
    finally:
        guard.strict_compute = False
    assert features.numpy().shape[:2] == (3, 10) and finals.numpy().shape == (10, 16)
    assert patterns.numpy().shape == (2, 10, 2, batch.tokens.shape[1], batch.tokens.shape[1])
    assert torch.equal(patterns, whole)  # batched: the same patterns
    assert 0 <= metrics["acc"] <= 1
