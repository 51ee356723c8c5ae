"""TrainConfig: a whole run (task, model, optimisation, bookkeeping), typed and validated."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal, Self

from pydantic import Field, SerializeAsAny, model_validator

from reasonlab.config import StrictModel
from reasonlab.config_compat import id_view, upgrade_train_keys
from reasonlab.model.config import ModelConfig
from reasonlab.model.freeze import TrainGroups, TrainPrefixes
from reasonlab.train.mimic import MimicConfig
from reasonlab.tasks.base import TASKS, TaskConfig, build_task


RESULTS_VERSION = 3  # 3: LEGO root clause fixed as in the paper (task.root)
"""Part of every run id: bump it when a code change alters results (see runs.py).
Not bumped when variants came to own their options: no result changed; a run naming a
non-default attention/init/arch entry dumps it as an object ({"name": ...}) and so has a new
id anyway, the other runs keep theirs, and old run folders still load (config_compat.py
MOVED_OPTIONS); docs/model.md §1. Not bumped by the renames (norm_position, norm_layer,
mlp_baseline, init_from, trainable): the id hashes the old names (config_compat.id_view), so
every run keeps its id."""


class OptimConfig(StrictModel):
    """AdamW with linear warmup then cosine decay, and gradient clipping."""

    lr: float = Field(1e-3, gt=0)
    """Peak learning rate."""
    weight_decay: float = Field(0.01, ge=0)
    """Decoupled weight decay, on the parameters `weight_decay_on` names."""
    weight_decay_on: Literal["matrices", "all"] = "matrices"
    """"matrices": weight matrices and embeddings only, not biases, LayerNorms or scalars
    (BERT's convention). "all": every parameter, as `torch.optim.AdamW(model.parameters())`
    does (the anchor-function authors' train.py)."""
    betas: tuple[Annotated[float, Field(ge=0, lt=1)], Annotated[float, Field(ge=0, lt=1)]] = (
        0.9, 0.999)
    """Adam moment decay rates."""
    eps: float = Field(1e-8, gt=0)
    """Adam epsilon."""
    warmup_steps: int = Field(0, ge=0)
    """Linear warmup from 0 to lr over this many steps."""
    schedule: Literal["cosine", "constant"] = "cosine"
    """Decay after warmup: cosine to `min_lr_ratio * lr` at the last step, or constant."""
    min_lr_ratio: float = Field(0.0, ge=0, le=1)
    """Final learning rate as a fraction of the peak."""
    grad_clip: float | None = Field(1.0, gt=0)
    """Clip the global gradient norm to this value; None disables clipping."""


STORAGE_ONLY = frozenset({"keep_checkpoints"})
"""Fields that change what a run keeps on disk, never its metrics: a study run with one as an
override writes its report where the plain run does (not a trial's folder)."""


class TrainConfig(StrictModel):
    """One run. `model` omits what the task decides (vocab_size, n_classes, max_seq_len)."""

    task: SerializeAsAny[TaskConfig]
    """Task config; `task.name` selects the TASKS entry."""
    model: ModelConfig
    """Architecture; vocab_size, n_classes and max_seq_len are filled from the task."""
    optim: OptimConfig = OptimConfig()
    """Optimiser and schedule."""
    seed: int = Field(0, ge=0)
    """Seed of everything random in the run (data, init, dropout, depth draws)."""
    n_train: int = Field(20_000, gt=0)
    """Training examples (generated once, de-duplicated)."""
    n_test: int = Field(2_000, gt=0)
    """Test examples, disjoint from the training set."""
    # Left out of dumps (so of run ids) while 0: adding it kept existing run ids valid.
    n_val: int = Field(0, ge=0, exclude_if=lambda v: v == 0)
    """Validation examples: the last n_val of the n_train drawn are held out (never trained
    on) and every evaluation logs `val`, their metrics, beside the test set's: a choice made
    on them (a learning rate, say) never reads the test set. 0: no validation split."""
    batch_size: int = Field(64, gt=0)
    """Examples per optimiser step."""
    steps: int = Field(2_000, gt=0, le=100_000_000)  # le: a typo's extra zeros, not a run
    """Optimiser steps in total."""
    eval_every: int = Field(200, gt=0)
    """Evaluate on the test set (and log metrics) every this many steps, and at the end."""
    ckpt_every: int = Field(200, gt=0)
    """Checkpoint every this many steps (a multiple of eval_every) and at the end."""
    # Left out of dumps (so of run ids) while "last": adding it kept existing run ids valid.
    keep_checkpoints: Literal["last", "none"] = Field("last", exclude_if=lambda v: v == "last")
    """What a run keeps of its checkpoints (train/checkpoint.py). A run holds one at a time,
    the newest: each replaces the one before (both exist only while it is written), and it is
    what a killed run resumes from. "last": a finished run keeps its last checkpoint, its
    final weights (what analyses, `export` and a run starting `init_from` it read). "none": a
    finished run keeps no weights -- its last checkpoint becomes its record alone (step,
    checksums), so only the metrics stay; for a study that reads nothing but metrics at a
    size the disk cannot hold (symbols-mlp-vs-transformer at paper scale: 3.8 GB per one-hot
    MLP run). Training, and a resume, are those of "last": the metrics are bitwise the same.
    It enters the run id when "none", so a folder without weights is never handed to a reader
    that expects them."""
    trainable: TrainGroups | TrainPrefixes | None = Field(None, exclude_if=lambda v: v is None)
    """The training policy: which parameters train; the rest get no gradient and no optimizer
    state. Parameter groups (model/freeze.py; needs a model with groups, arch="fpt"): a preset
    name ("fpt" = input, output, positions, norms; "output_only", "input_output", "full", the
    paper's ablations) or a list of groups, stored as {"groups": [...]}. Name prefixes:
    {"prefixes": ["head."]} trains the parameters whose names start with one of them (the
    read-out of a randomly initialised network). None trains all. (Older configs wrote `train`
    for groups and `train_only` for prefixes; they are converted on load.)"""
    eval_train: bool = False
    """Also log `train_acc`: accuracy on the first n_test training examples (memorisation vs
    generalisation, e.g. the MLP baseline of the abstract-symbols study)."""
    eval_batch_size: int = Field(500, gt=0)
    """Batch size of evaluation (memory only; results do not depend on it)."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """`auto` takes CUDA when present, else the CPU."""
    threads: int | None = Field(None, gt=0)
    """torch CPU threads; None keeps torch's default."""
    dtype: Literal["auto", "fp32", "tf32", "bf16"] = "auto"
    """Precision of the forward pass (train/device.py): `auto` is bf16 autocast on a CUDA
    device with bf16 and fp32 elsewhere (a CPU run computes as plain fp32); `tf32` lets CUDA
    matmuls round to TF32; `bf16` autocasts the forward pass. Weights and optimizer stay
    fp32."""
    # Left out of dumps (so of run ids) while "strict": adding it kept existing run ids valid.
    deterministic: Literal["strict", "warn", "off"] = Field(
        "strict", exclude_if=lambda v: v == "strict")
    """Determinism on CUDA (train/device.py): "strict" (default) runs deterministic kernels
    only, so a rerun or a resumed run is bitwise the uninterrupted one, and an op without one
    ends the run in one error line naming it; "warn" lets such ops run non-deterministically
    with a warning (torch's warn_only; SDPA's backward then stays non-deterministic); "off"
    drops deterministic algorithms for speed. No effect on the CPU."""
    compile: bool = False
    """Run the model's forward pass through torch.compile (benchmarks/bench_precision.py
    measures what it buys on the CPU recipes); weights, checkpoints and analyses are those of
    the plain module."""
    # Left out of dumps (so of run ids) while "default": adding it kept existing run ids valid.
    compile_mode: Literal["default", "reduce-overhead", "max-autotune"] = Field(
        "default", exclude_if=lambda v: v == "default")
    """torch.compile's mode when `compile` is on: "reduce-overhead" replays each step as a CUDA
    graph, one launch instead of thousands, for launch-bound runs on a GPU (FPT's small batches
    through 30 frozen layers: `reasonlab studies --scale paper` marks them); "max-autotune"
    also searches kernels; it needs `compile`."""
    # Left out of dumps (so of run ids) while None: adding it kept existing run ids valid.
    stop_at: float | None = Field(None, gt=0, le=1, exclude_if=lambda v: v is None)
    """End the run at the first evaluation whose headline accuracy (train/metrics.py
    `headline`: the masked query bits for bit memory, plain accuracy else) reaches this level,
    with a final checkpoint there; None trains all `steps`. For a study that reads only the
    steps to a level (fpt-convergence): the curve up to the stop is bitwise the full run's, and
    the run costs no more steps than the level takes."""
    # Left out of dumps (so of run ids) while None: adding it kept existing run ids valid.
    init_from: str | TrainConfig | None = Field(None, exclude_if=lambda v: v is None)
    """Where the weights of everything but the head come from, task tokens mapped to the
    source's vocabulary; it fixes the architecture fields of `model` (for a run, all but
    PRETRAIN_FREE). A name: a PRETRAINED checkpoint shipped with the lab (e.g.
    "all-minilm-l6-v2"; LEGO §4.2), or a Hugging Face folder, `hf:FOLDER` (recorded by its
    absolute path), or Hub cache entry, `hf:HUB_NAME` (model/hf.py). A TrainConfig: a pretraining run (its whole config: Chiang &
    Lee's masked-LM pretraining on a corpus, say; docs/papers.md §4), which lives in the same
    run store under its own content-addressed id, so it is trained once, before the first run
    naming it, and shared by all of them (model/pretrained.py, load_run); this run's id hashes
    its config. None = random init. (Older configs wrote `pretrained` for a checkpoint and
    `pretrain` for a run; they are converted on load.)"""
    # Left out of dumps (so of run ids) while empty: adding it kept existing run ids valid.
    diagnostics: list[Literal["attention"]] = Field(default_factory=list,
                                                    exclude_if=lambda v: not v)
    """Diagnostics logged with every evaluation under `diag` (train/diagnostics.py):
    "attention" = per layer the attention entropy and the W_Q / W_K / W_V gradient norms on a
    fixed probe batch (Hoffmann et al. 2024's plateau mechanism). They read the model without
    changing its training: the run's other numbers are those of the run without them."""
    mimic: MimicConfig | None = Field(None, exclude_if=lambda v: v is None)
    """Mimicking initialisation (LEGO §4.2.2): before training, chosen heads learn to imitate
    target attention patterns on random task sentences (after `init_from`, if both)."""

    @property
    def init_checkpoint(self) -> str | None:
        """The shipped checkpoint `init_from` names, if it names one."""
        return self.init_from if isinstance(self.init_from, str) else None

    @property
    def init_run(self) -> TrainConfig | None:
        """The pretraining run `init_from` gives, if it gives one."""
        return self.init_from if isinstance(self.init_from, TrainConfig) else None

    @model_validator(mode="before")
    @classmethod
    def _resolve_task_and_model(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = upgrade_train_keys(dict(data))
        if isinstance(data.get("trainable"), str | list):  # a preset or a list of groups
            from reasonlab.model.freeze import resolve_groups

            data["trainable"] = {"groups": resolve_groups(data["trainable"])}
        task = data.get("task")
        if isinstance(task, dict):
            task = TASKS[str(task.get("name"))].Config.build(task, where="task")
            data["task"] = task
        if isinstance(task, TaskConfig) and isinstance(data.get("model"), dict):
            t = build_task(task)
            derived = {"vocab_size": len(t.vocab), "n_classes": t.n_classes,
                       "max_seq_len": t.seq_len}
            # continuous inputs and multi-output tokens (FPT tasks, docs/papers.md §4)
            if getattr(t, "d_input", None) is not None:
                derived["d_input"] = t.d_input  # type: ignore[attr-defined]
            if getattr(t, "outputs_per_token", 1) != 1:
                derived["outputs_per_token"] = t.outputs_per_token  # type: ignore[attr-defined]
            model = dict(data["model"])
            source = dict.fromkeys(derived, "the task")
            init = data.get("init_from")
            if isinstance(init, str):  # a folder by its absolute path: one id, one folder
                init = data["init_from"] = _canonical_source(init)
            if isinstance(init, str):  # a shipped checkpoint fixes the architecture
                fixed = _pretrained_fields(init, t.seq_len)
                n = model.get("n_layers", 0)  # validated below, with the rest of the model
                if type(n) is int and 1 <= n <= fixed["n_layers"]:
                    del fixed["n_layers"]  # keep the checkpoint's first n_layers layers
                source |= dict.fromkeys(fixed, f"checkpoint init_from={init!r}")
                derived = {**fixed, **derived}
            if isinstance(init, dict):
                init = data["init_from"] = TrainConfig.build(init, where="init_from")
            if isinstance(init, TrainConfig):  # so does a pretraining run
                fixed = init.model.model_dump(exclude=set(PRETRAIN_FREE))
                source |= dict.fromkeys(fixed, "the pretraining run (init_from.model)")
                derived = {**fixed, **derived}
            for k, v in derived.items():
                # a variant given as {"name": v} (a dumped config) is the entry v itself
                if k in model and _variant_key(model[k]) != _variant_key(v):
                    raise ValueError(f"model.{k}={model[k]} disagrees with {source[k]} ({v}); "
                                     f"remove it, {source[k]} sets it")
                model[k] = v
            data["model"] = ModelConfig.build(model, where="model")
        return data

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.init_checkpoint is not None:
            _pretrained_fields(self.init_checkpoint, self.model.max_seq_len)
        run = self.init_run
        if run is not None and run.keep_checkpoints == "none":
            raise ValueError("init_from.keep_checkpoints='none' would leave this run nothing to "
                             "start from: a pretraining run keeps its weights; give "
                             "init_from.keep_checkpoints=last")
        if (run is not None and self.model.positions == "learned"
                and self.model.max_seq_len > run.model.max_seq_len):
            raise ValueError(f"the task's sentences have {self.model.max_seq_len} tokens but the "
                             f"pretraining run learned {run.model.max_seq_len} "
                             "positions; shorten them or pretrain on longer sequences")
        if self.n_val >= self.n_train:
            raise ValueError(f"n_val={self.n_val} must be below n_train={self.n_train}: the "
                             "validation examples are held out of the training draw")
        if self.ckpt_every % self.eval_every:
            raise ValueError(f"ckpt_every={self.ckpt_every} must be a multiple of "
                             f"eval_every={self.eval_every}")
        if self.diagnostics and self.model.arch.name != "transformer":
            raise ValueError(f"diagnostics={self.diagnostics} reads a Transformer's attention "
                             f"layers; model.arch={self.model.arch.name!r} has none: remove it")
        if self.compile_mode != "default" and not self.compile:
            raise ValueError(f"compile_mode={self.compile_mode!r} needs compile=true")
        if self.optim.warmup_steps > self.steps:
            raise ValueError(f"optim.warmup_steps={self.optim.warmup_steps} exceeds "
                             f"steps={self.steps}; lower it")
        return self


PRETRAIN_FREE = ("vocab_size", "n_classes", "max_seq_len", "d_input", "outputs_per_token",
                 "dropout", "depth_range")
"""ModelConfig fields a run initialised from a pretraining run (TrainConfig.init_from) sets for
itself: the task decides the first five (FPT's input layer and read-out are the task's own: a
backbone pretrained on bit memory reads ListOps tokens downstream, Lu et al. 2021 "Importance
of language pre-training", Bit row), and dropout / stochastic depth are training choices."""


def _variant_key(value: Any) -> Any:
    """A variant written as "name", {"name": "name"} or its Config compares as "name"; one
    with options compares as its dict."""
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, dict) and set(value) == {"name"}:
        return value["name"]
    return value


def _canonical_source(name: str) -> str:
    from reasonlab.model.pretrained import canonical_source

    return canonical_source(name)


def _pretrained_fields(name: str, seq_len: int) -> dict[str, Any]:
    from reasonlab.model.pretrained import checkpoint

    ckpt = checkpoint(name)
    if seq_len > ckpt.max_positions:
        raise ValueError(f"pretrained {name!r} reads at most {ckpt.max_positions} tokens but "
                         f"the task's sentences have {seq_len}; shorten them")
    return dict(ckpt.architecture)


def config_id(config: TrainConfig) -> str:
    """The run id: a hash of the config's non-default values, its task and RESULTS_VERSION,
    under the names of the first version (config_compat.id_view): a renamed field keeps every
    run's id.

    dtype "fp32" hashes as the default "auto" does: before "auto" existed "fp32" was the
    default, so every stored run's config.json names it, and on the CPU (where those runs
    trained) the two compute alike. A run that computes on a GPU also hashes where it computes
    (`id_place`): with device="auto" and dtype="auto", one config is a CPU fp32 run on one
    machine and a GPU bf16 run on another, two computations that must not share a folder."""
    changed = id_view(config.model_dump(mode="json", exclude_defaults=True))
    body: dict[str, Any] = {"task": config.task.name, "config": changed, "v": RESULTS_VERSION}
    place = id_place(config)
    if place is not None:  # absent on the CPU: every CPU run keeps the id it always had
        # the resolved place stands for what device and dtype ask: auto and bf16 on a bf16
        # GPU are one computation, so one run
        body["config"] = {k: v for k, v in changed.items() if k not in ("device", "dtype")}
        body["where"] = place
    if held_out_revised(config):  # absent for every other task: their ids are unchanged
        body["held_out"] = "disjoint"
    blob = json.dumps(body, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def held_out_revised(config: TrainConfig) -> bool:
    """Whether the run's held-out rows changed when draw_splits began to leave out those equal
    to training rows (tasks/disjoint.py; `Task.held_out_revised`): its test split, or its
    validation split when it has one. Training data and weights are unchanged; the held-out
    metrics are not, so such a run gets a new id instead of reusing one that counted repeats."""
    which = getattr(TASKS[config.task.name], "held_out_revised", None)
    return which == "test" or (which == "val" and config.n_val > 0)


def id_place(config: TrainConfig) -> dict[str, str] | None:
    """Where the run computes, as its id hashes it: None on the CPU; on CUDA the device class
    and the precision `dtype` resolves to there (bf16, or tf32 on a GPU that only emulates
    bf16). Resolved on this machine, as training resolves it (train/device.py)."""
    import torch

    from reasonlab.train.device import resolve_dtype

    if config.device == "cpu" or (config.device == "auto" and not torch.cuda.is_available()):
        return None
    if config.dtype == "auto" and not torch.cuda.is_available():  # planned on a host
        return {"device": "cuda", "precision": "auto"}  # without a GPU to resolve it on
    return {"device": "cuda", "precision": resolve_dtype(config.dtype, torch.device("cuda"))}


TrainConfig.model_rebuild()  # `init_from` may itself be a TrainConfig
