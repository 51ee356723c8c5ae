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
counted, never the deep one. Counting is still the largest part of what `studies --scale`
computes, so the counts are remembered between commands (`OpCounts`) until a file they come
from changes. A run's GPU time is max(FLOP time + optimizer time, launch floor), the
optimizer's time being its memory traffic (OPTIMIZER_BYTES per trained parameter and step),
and a study says which bound dominates. Some CUDA ops launch two or three kernels and bf16
autocast adds casts: the count is an estimate, which scripts/gpu-check compares with the profiler's on a GPU.

Disk (train/checkpoint.py checkpoint_sizes, from the shapes): every checkpoint a run writes
is counted -- one every ckpt_every steps and one at the end, each before the last step holding
Adam's moments beside the weights (fp32; the trained weights alone where a frozen part is
rebuilt from the config). A run keeps one at a time (each replaces the one before), so a study
needs on disk what its finished runs keep -- each its final weights, or a record of a few kB
with keep_checkpoints="none" -- plus, while a run trains, its two newest checkpoints side by
side: `Cost.peak`, one run training at a time (a GPU), in the order that needs the most.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
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
    """Bytes the finished runs keep (their last checkpoints)."""
    peak: float = 0.0
    """The most bytes the study's checkpoints take at once: what the finished runs keep plus
    the two checkpoints side by side of the one training, the worst run last."""
    checkpoints: int = 0
    """Checkpoints the runs write in all, every ckpt_every steps and at each run's end."""
    written: float = 0.0
    """Bytes of every checkpoint the runs write."""

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
    """The run's model on PyTorch's meta device (shapes only), built once per architecture:
    runs differing in values alone (`values_only`) share it. Building one is not free --
    every init draws in Python on the meta device -- and the anchor studies sweep the
    initialization rate."""
    model = config.model.model_copy(update=values_only(config.model))
    key = model.model_dump_json()
    if key not in _META:
        _META[key] = meta_model(config.model_copy(update={"model": model}))
    return _META[key]


def values_only(model: Any) -> dict[str, Any]:
    """The ModelConfig fields that change a model's values, never its shapes, FLOPs or ops,
    at their defaults: the initialization (an INITS entry acts once, when the model is built),
    a norm's epsilon, the rotary base, and dropout's rate (one op at any rate above 0)."""
    fields = type(model).model_fields
    return {**{k: fields[k].get_default(call_default_factory=True)
               for k in ("init", "init_std", "ln_eps", "rotary_base")},
            "dropout": 0.1 if model.dropout > 0 else 0.0}


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


RECURRENT = ("lnlstm",)
"""Architectures whose ops grow with the sequence length (one step per token)."""
STACKS = ("transformer", "fpt", *RECURRENT)
"""Architectures whose op count is extrapolated from 1 and 2 layers (a stack of identical
blocks, or a recurrent model's layers)."""


def ops_per_step(config: TrainConfig) -> Ops:
    """Kernel-launching ops of one training step and one evaluation forward of the run's model,
    counted on the meta device (module docstring); layers extrapolated from 1 and 2. Counts
    are remembered between commands (`OpCounts`)."""
    stack = config.model.arch.name in STACKS
    L = config.model.n_layers
    if config.model.depth_range is not None:  # stochastic depth: the mean depth trains
        L = sum(config.model.depth_range) / 2
    # the depth is left out of a stack's key (extrapolated), not out of another model's
    model = narrow(config.model).model_copy(update={
        "n_layers": 0 if stack else config.model.n_layers, "depth_range": None})
    key = json.dumps([model.model_dump_json(), min(config.batch_size, 2),
                      str(config.trainable)])
    counts = _OPS.get(key)
    if counts is None:
        if stack:
            one, two = (_count(config, n) for n in (1, 2))
            counts = (one, (two[0] - one[0], two[1] - one[1]))
        else:  # no stack of blocks to extrapolate: counted as it is, per layer 0
            counts = (_count(config, config.model.n_layers), (0, 0))
        _OPS.add(key, counts)
    (t1, e1), (dt, de) = counts
    if not stack:
        L = 1
    return Ops(round(t1 + (L - 1) * dt), round(e1 + (config.model.n_layers - 1) * de))


class OpCounts:
    """ops_per_step's counts by key (the narrowed model, batch, training policy), remembered
    between commands in a JSON file of the cache folder (reasonlab/listing.py cache_dir):
    counting them runs each distinct model on the CPU under a dispatch mode, the largest part
    of `reasonlab studies --scale cpu` (about 80 models; 6 of its 15 CPU-seconds on a quiet
    2-core machine, two thirds of it on a loaded one), for numbers that change only with the
    code. The file is named by a fingerprint of what a count depends on
    beside its key -- the files of reasonlab's model/, train/, tasks/base.py, config.py and
    this module, and the torch and Python versions -- so an edit to any of them starts a new
    one. Not used with plugins (a plugin's model variant is code outside those files), nor
    when the folder cannot be written (the counts are then this process's alone)."""

    SOURCES = ("model", "train", "tasks/base.py", "config.py", "plan.py")
    KEEP = 8
    """Files kept; older ones (of edits since undone, other torch versions) are removed."""

    def __init__(self) -> None:
        self.counts: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {}
        self.path: Path | None = None
        self.loaded = False
        self.new = 0

    def _load(self) -> None:
        self.loaded = True
        from reasonlab import listing, plugins

        if plugins.sources():
            return
        package = listing.PACKAGE
        stats = [line for rel in self.SOURCES for line in (
            listing._stats(package / rel) if (package / rel).is_dir()
            else _stat_file(package / rel))]
        h = hashlib.sha256()
        for part in [torch.__version__, sys.version, *stats]:
            h.update(part.encode("utf-8", "surrogateescape") + b"\n")
        self.path = listing.cache_dir() / "ops" / f"{h.hexdigest()}.json"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict):
            return
        for k, v in data.items():  # anything but four pairs of integers is ignored
            try:
                (t1, e1), (dt, de) = v
                if all(type(x) is int for x in (t1, e1, dt, de)):
                    self.counts[k] = ((t1, e1), (dt, de))
            except (TypeError, ValueError):
                continue

    def get(self, key: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
        if not self.loaded:
            self._load()
        return self.counts.get(key)

    def add(self, key: str, counts: tuple[tuple[int, int], tuple[int, int]]) -> None:
        self.counts[key] = counts
        self.new += 1

    def save(self) -> None:
        """Write the counts for the next command (through a temporary file: a reader never
        sees half of it), when this process counted any."""
        if not self.new or self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.counts, f)
            os.replace(tmp, self.path)
            kept = sorted(self.path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime,
                          reverse=True)
            for old in kept[self.KEEP:]:
                old.unlink(missing_ok=True)
        except OSError:  # a read-only home: the next command counts again, nothing fails
            return
        self.new = 0


def _stat_file(path: Path) -> list[str]:
    try:
        st = os.stat(path)
    except OSError:
        return [f"{path}\0absent"]
    return [f"{path}\0{st.st_size}\0{st.st_mtime_ns}"]


_OPS = OpCounts()


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


def narrow(model: Any) -> Any:
    """The ModelConfig with every width tiny (d_head 4, d_mlp 8, vocabulary and classes at
    most 32, inputs of 4 features) and, but for a recurrent model, 8 positions: the same ops,
    on small tensors. Head counts, grouped-query sharing, the kinds of positions, norms and
    attention, and a recurrent model's sequence length, which decide the ops, are kept; what
    changes values alone is set to its default (`values_only`), so that runs differing only
    there share one count (the anchor studies' initialization rates, the symbols studies'
    BERT-init arms)."""
    small: dict[str, Any] = {"d_model": 4 * model.n_heads, "d_mlp": 8,
                             "vocab_size": min(model.vocab_size, 32),
                             "n_classes": min(model.n_classes, 32), **values_only(model)}
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
    distinct run once (the run store trains a shared one once), and their checkpoints' disk;
    with `launches`, the launch floor and the GPU time bounded by it."""
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
    from reasonlab.train.checkpoint import checkpoint_sizes

    total = launch = gpu = disk = optimizer = written = 0.0
    writes, extra = 0, 0.0
    rate = H100_BF16_DENSE * GPU_UTILISATION
    for c in seen.values():  # FLOPs depend on the shapes and counts, not the seed
        key = (c.model.model_dump_json(), c.steps, c.batch_size, c.eval_every, c.n_test,
               c.eval_train)
        if key not in _FLOPS:
            _FLOPS[key] = run_flops(c)
        total += _FLOPS[key]
        sizes = checkpoint_sizes(c, meta(c))
        disk += sizes.kept
        writes += sizes.writes
        written += sizes.written
        extra = max(extra, sizes.peak - sizes.kept)  # the worst run is the last to train
        if launches:
            floor = launch_seconds(c)
            launch += floor
            adam = c.steps * trained_params(c) * OPTIMIZER_BYTES / H100_HBM_BYTES_PER_S
            optimizer += adam
            gpu += max(floor, _FLOPS[key] / rate + adam)
    _OPS.save()  # the op counts this process made, for the next command
    return Cost(len(seen), total, launch_s=launch, gpu_s=gpu, disk=disk, peak=disk + extra,
                checkpoints=writes, written=written, optimizer_s=optimizer)


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
