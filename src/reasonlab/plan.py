"""What a study costs before it runs: runs, training FLOPs from the shapes, estimated time, the
kernel-launch floor, and disk.

`reasonlab studies --scale paper` prints, per study, the runs it trains (its pretraining runs
included), their FLOPs and the time they would take on one H100 in bf16 and on this kind of
CPU, the GPU time's launch floor and which bound applies, and the disk its finished runs take.
FLOPs come from the configs, not from running anything: the model is built on PyTorch's
meta device (sizes.py) and

    training FLOPs = steps x batch x seq_len x flops_per_token            (6 N + attention)
                   + evaluations x n_test x seq_len x flops_per_token / 3 (forward only)

with `flops_per_token` the Transformer's (model/transformer.py: 6 x parameters applied per
token + the attention variant's q k^T and pattern @ v), or 6 x non-embedding parameters for the
other architectures (LSTM, MLP, FPT; an upper bound for FPT, whose frozen weights need no
weight gradients). Mimicking warm-ups and the analyses' own forward passes are left out (each
under 1% of a study's training at paper scale).

Launch floor. A small model's step is many small kernels: FPT's batch of 4 through 30 SmolLM2
layers is ~3,900 kernel-launching ops for under 1 ms of math, and eager PyTorch spends about
PER_OP_SECONDS of host time on each (Python, dispatch, launch), a floor the GPU cannot beat
however fast its math. `ops_per_step` counts them from the shapes: one training step (the
batch's indexing, forward, the CUDA loss path, backward) run on the meta device under a
dispatch mode that counts the ops that launch a kernel (not views or allocations), plus the
fused optimizer's; and one evaluation batch's forward. The ops do not depend on the widths, so
they are counted on the CPU on a narrowed copy of the model (d_head 4, ...: milliseconds), and a
stack of L identical blocks costs c(1) + (L - 1)(c(2) - c(1)), so two shallow copies are
counted, never the deep one. A run's GPU time is max(FLOP time + optimizer time, launch floor),
the optimizer's time being its memory traffic (OPTIMIZER_BYTES per trained parameter and step),
and a study says which bound dominates. Some CUDA ops launch two or three kernels and bf16 autocast adds casts:
the count is an estimate, which scripts/gpu-check compares with the profiler's on a GPU.

Disk: a finished run keeps its final checkpoint (train/checkpoint.py checkpoint_bytes: fp32
weights, the trained ones alone where a frozen part is rebuilt from the config).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch

from reasonlab.sizes import meta_model
from reasonlab.train.config import TrainConfig

H100_BF16_DENSE = 989e12
"""NVIDIA H100 SXM, dense bf16 tensor-core peak (FLOP/s), from NVIDIA's data sheet."""
GPU_UTILISATION = 0.4
"""Model FLOPs utilisation assumed on the GPU: 40%, what well-fed transformer training reaches
in bf16 on an H100. Small models (d_model <= 256) are bound by kernel launches and reach far
less, so for them the estimate is a lower bound on the time."""
CPU_FLOPS = 1.9e11
"""Model FLOP/s of one training run on this machine's CPU: 190 GFLOP/s, a BERT-base layer
stack (12 x 768, seq 62, batch 16, fp32, 2 threads) trained by
`python benchmarks/bench_precision.py --rate --threads 2` on a quiet 2-core AMD EPYC (AVX-512):
196.0, 189.5 and 191.3 in three runs (2026-11-27). An earlier 18.1, measured while other jobs
shared the cores, made every CPU estimate about 10x too long. Against the wall clock measured
for the cpu scales from an empty runs folder (two runs side by side on 2 cores) the estimate
is 0.06x (symbols' 3-token templates) to 0.6-0.8x (anchors, the artificial studies) of it,
as small models run at a lower rate, and up to 1.3x where FLOPs are counted that never run:
frozen backbones' weight gradients (fpt-init: 7.8 min against 5.8) and a masked-LM head
counted at every position, not only the masked ones (artificial-pretraining --scale long:
2.9 h against 2.3 h). An AVX2-only CPU is slower."""


H100_HBM_BYTES_PER_S = 3.0e12
"""H100 memory bandwidth as a copy moves it (bytes read + written per second): ~3.0 TB/s
measured on the H100s lent to this project (NVIDIA's sheet: 3.35 TB/s)."""
OPTIMIZER_BYTES = 32
"""Bytes the fused AdamW step and the gradient clipping move per trained parameter and step:
parameter, gradient and both moments read (16), parameter and moments written (12), the
gradient read again for its norm (4). Memory-bound: it costs time however few the FLOPs (the
one-hot MLP of symbols-mlp-vs-transformer: 940M parameters a step)."""

PER_OP_SECONDS = 10e-6
"""Host time of one eager PyTorch op that launches a CUDA kernel (Python, the dispatcher, the
launch): about 5-20 us on current CPUs; 10 us assumed until scripts/gpu-check measures it (it
times a launch-bound step and divides by its profiled kernels)."""


@dataclass(frozen=True)
class Cost:
    runs: int
    flops: float
    launch_s: float = 0.0
    """Seconds of the kernel-launch floor, summed over the runs."""
    gpu_s: float = 0.0
    """Seconds on one H100: per run, max(FLOP time + optimizer time, launch floor), summed."""
    optimizer_s: float = 0.0
    """Seconds of the optimizer's memory traffic (OPTIMIZER_BYTES per trained parameter and
    step at H100_HBM_BYTES_PER_S), summed over the runs."""
    disk: float = 0.0
    """Bytes of the finished runs' checkpoints."""

    @property
    def flop_hours(self) -> float:
        return self.flops / (H100_BF16_DENSE * GPU_UTILISATION) / 3600

    @property
    def gpu_hours(self) -> float:
        """max(FLOP time + optimizer time, launch floor) per run, summed (the FLOP time alone
        for a Cost built from FLOPs only)."""
        return max(self.gpu_s / 3600, self.flop_hours)

    @property
    def launch_hours(self) -> float:
        return self.launch_s / 3600

    @property
    def bound(self) -> str:
        """Which floor dominates the study's GPU time: "launches", or "FLOPs" (the matmuls and
        the optimizer's memory traffic)."""
        return ("launches" if self.launch_hours > self.flop_hours + self.optimizer_s / 3600
                else "FLOPs")

    @property
    def cpu_hours(self) -> float:
        return self.flops / CPU_FLOPS / 3600


def meta(config: TrainConfig) -> torch.nn.Module:
    """The run's model on PyTorch's meta device (shapes only), built once per architecture."""
    key = config.model.model_dump_json()
    if key not in _META:
        _META[key] = meta_model(config)
    return _META[key]


_META: dict[str, torch.nn.Module] = {}


def flops_per_token(config: TrainConfig) -> float:
    """Training FLOPs per token of the run's model (module docstring)."""
    model = meta(config)
    T = config.model.max_seq_len
    if hasattr(model, "flops_per_token"):
        return float(model.flops_per_token(T))
    n = (model.num_params(non_embedding=True) if hasattr(model, "num_params")
         else sum(p.numel() for p in model.parameters()))
    return 6.0 * n


def run_flops(config: TrainConfig) -> float:
    """Training plus evaluation FLOPs of one run."""
    T = config.model.max_seq_len
    per_token = flops_per_token(config)
    evals = -(-config.steps // config.eval_every)
    train = config.steps * config.batch_size * T * per_token
    evaluate = evals * config.n_test * (2 if config.eval_train else 1) * T * per_token / 3
    return train + evaluate


NO_KERNEL = {"_unsafe_view", "empty", "empty_like", "empty_strided", "scalar_tensor",
             "lift_fresh", "new_empty", "new_empty_strided", "_reshape_alias", "detach_"}
"""aten ops that launch no kernel beside the views (OpOverload.is_view)."""


class _OpCount(torch.utils._python_dispatch.TorchDispatchMode):
    """Counts the aten ops that launch a kernel."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        name = func.overloadpacket.__name__
        if not func.is_view and name not in NO_KERNEL:
            self.ops[name] += 1
        return func(*args, **(kwargs or {}))


@dataclass(frozen=True)
class Ops:
    """Kernel-launching ops of one training step and of one evaluation batch's forward."""

    train: int
    evaluate: int


def ops_per_step(config: TrainConfig) -> Ops:
    """Kernel-launching ops of one training step and one evaluation forward of the run's model,
    counted on the meta device (module docstring); layers extrapolated from 1 and 2."""
    L = config.model.n_layers
    if config.model.depth_range is not None:  # stochastic depth: the mean depth trains
        L = sum(config.model.depth_range) / 2
    key = (narrow(config.model).model_copy(update={"n_layers": 0, "depth_range": None}
                                           ).model_dump_json(), min(config.batch_size, 2),
           str(config.trainable))
    if key not in _OPS:
        if config.model.arch.name in ("transformer", "fpt", *RECURRENT):
            one, two = (_count(config, n) for n in (1, 2))
            _OPS[key] = (one, (two[0] - one[0], two[1] - one[1]))
        else:  # no stack of blocks to extrapolate: counted as it is, per layer 0
            _OPS[key] = (_count(config, config.model.n_layers), (0, 0))
    (t1, e1), (dt, de) = _OPS[key]
    if config.model.arch.name not in ("transformer", "fpt", *RECURRENT):
        L = 1
    return Ops(round(t1 + (L - 1) * dt), round(e1 + (config.model.n_layers - 1) * de))


_OPS: dict[tuple[str, int, str], tuple[tuple[int, int], tuple[int, int]]] = {}


def _count(config: TrainConfig, n_layers: int) -> tuple[int, int]:
    """(training step, evaluation forward) ops of the run's model cut to n_layers layers and
    narrowed (`narrow`: the same ops on tiny tensors), on the CPU: a step of a tiny model
    takes milliseconds there, where the meta device decomposes every op in Python (~1 ms each).
    CPU and CUDA dispatch alike: fused attention (SDPA) and dropout are one op on both."""
    from reasonlab.model import MODELS
    from reasonlab.train.metrics import model_inputs, slot_loss

    model_cfg = narrow(config.model).model_copy(update={"n_layers": n_layers,
                                                         "depth_range": None})
    with torch.random.fork_rng(devices=[]):  # its random init leaves the caller's RNG alone
        model = MODELS[model_cfg.arch.name](model_cfg)
        if config.trainable is not None:
            config.trainable.apply(model)
        b = min(config.batch_size, 2)
        train = _batch(model_cfg, b)
        model.eval()  # the forward pass of an evaluation (no dropout), then a step's
        with _OpCount() as c, torch.no_grad():
            model(train.tokens, train.label_pos, train.pad_mask, **model_inputs(train)
                  ).argmax(-1)
        evaluation = sum(c.ops.values())
        model.train()
        with _OpCount() as c:
            batch = train[torch.arange(b)]  # the step's indexing
            logits = model(batch.tokens, batch.label_pos, batch.pad_mask, depth=n_layers,
                           **model_inputs(batch))
            slot_loss(logits, batch, sync_free=True).backward()
        trained = [p for p in model.parameters() if p.requires_grad]
    chunks = math.ceil(len(trained) / 110)  # multi-tensor kernels take ~110 tensors each
    step = sum(c.ops.values()) + 3 * chunks + 6  # clip norm (2 per chunk) + fused AdamW
    return step, evaluation


RECURRENT = ("lnlstm",)
"""Architectures whose ops grow with the sequence length (one step per token)."""


def narrow(model: Any) -> Any:
    """The ModelConfig with every width tiny (d_head 4, d_mlp 8, vocabulary and classes at
    most 32, inputs of 4 features) and, but for a recurrent model, 8 positions: the same ops,
    on small tensors. Head counts, grouped-query sharing, the kinds of positions, norms and
    attention, and a recurrent model's sequence length, which decide the ops, are kept."""
    small: dict[str, Any] = {"d_model": 4 * model.n_heads, "d_mlp": 8,
                             "vocab_size": min(model.vocab_size, 32),
                             "n_classes": min(model.n_classes, 32)}
    if model.arch.name not in RECURRENT:
        small["max_seq_len"] = min(model.max_seq_len, 8)
    if model.tie_head:
        small["n_classes"] = small["vocab_size"]
    if model.d_head is not None:
        small["d_head"] = 4
    if model.d_embed is not None:
        small["d_embed"] = 4
    if model.d_input is not None:
        small["d_input"] = 4
    return model.model_copy(update=small)


def _batch(model_cfg: Any, n: int) -> Any:
    """A batch of n examples of the model's shapes: every position a token (id 1), one label
    slot each (the op count does not depend on the values)."""
    from reasonlab.tasks.base import Batch

    T = model_cfg.max_seq_len
    features = (torch.zeros(n, T, model_cfg.d_input) if model_cfg.d_input is not None
                else None)
    return Batch(tokens=torch.ones(n, T, dtype=torch.long),
                 label_pos=torch.full((n, 1), T - 1), labels=torch.zeros(n, 1, dtype=torch.long),
                 loss_mask=torch.ones(n, 1, dtype=torch.bool), features=features,
                 label_sub=(torch.zeros(n, 1, dtype=torch.long)
                            if model_cfg.outputs_per_token > 1 else None))


def trained_params(config: TrainConfig) -> int:
    """Parameters the optimizer updates (a `trainable` policy's, else all)."""
    from reasonlab.train.checkpoint import param_counts

    return param_counts(config, meta(config))[1]


def launch_seconds(config: TrainConfig) -> float:
    """The run's kernel-launch floor: every op of its training steps and evaluations."""
    ops = ops_per_step(config)
    evals = -(-config.steps // config.eval_every)
    batches = -(-config.n_test // config.eval_batch_size) * (2 if config.eval_train else 1)
    return (config.steps * ops.train + evals * batches * ops.evaluate) * PER_OP_SECONDS


def study_cost(configs: list[TrainConfig], launches: bool = True) -> Cost:
    """Runs and FLOPs of a study's configs and of the pretraining runs they start from, each
    distinct run once (the run store trains a shared one once); with `launches`, the launch
    floor and the GPU time bounded by it, and the disk of the finished runs."""
    from reasonlab.train.config import config_id

    seen: dict[str, TrainConfig] = {}
    todo = list(configs)
    while todo:
        c = todo.pop()
        cid = config_id(c)
        if cid not in seen:
            seen[cid] = c
            if c.init_run is not None:
                todo.append(c.init_run)
    from reasonlab.train.checkpoint import checkpoint_bytes

    total = launch = gpu = disk = optimizer = 0.0
    rate = H100_BF16_DENSE * GPU_UTILISATION
    for c in seen.values():  # FLOPs depend on the shapes and counts, not the seed
        key = (c.model.model_dump_json(), c.steps, c.batch_size, c.eval_every, c.n_test,
               c.eval_train)
        if key not in _FLOPS:
            _FLOPS[key] = run_flops(c)
        total += _FLOPS[key]
        if launches:
            floor = launch_seconds(c)
            launch += floor
            adam = c.steps * trained_params(c) * OPTIMIZER_BYTES / H100_HBM_BYTES_PER_S
            optimizer += adam
            gpu += max(floor, _FLOPS[key] / rate + adam)
            disk += checkpoint_bytes(c, meta(c))[0]
    return Cost(len(seen), total, launch_s=launch, gpu_s=gpu, disk=disk,
                optimizer_s=optimizer)


_FLOPS: dict[tuple[str, int, int, int, int, bool], float] = {}
"""run_flops by shapes and counts: a study's seeds and arms share a handful of them."""


def fmt_bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n / 1e3:.0f} kB"


def fmt_hours(h: float) -> str:
    if h < 1 / 60:
        return f"{h * 3600:.0f} s"
    if h < 1:
        return f"{h * 60:.0f} min"
    if h < 48:
        return f"{h:.1f} h"
    if h < 2 * 365 * 24:
        return f"{h / 24:.0f} days"
    return f"{h / 24 / 365:.0f} years"
