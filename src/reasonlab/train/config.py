"""TrainConfig: a whole run (task, model, optimisation, bookkeeping), typed and validated."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal, Self

from pydantic import Field, SerializeAsAny, model_validator

from reasonlab.config import StrictModel
from reasonlab.model.config import ModelConfig
from reasonlab.model.freeze import Group
from reasonlab.train.mimic import MimicConfig
from reasonlab.tasks.base import TASKS, TaskConfig, build_task


RESULTS_VERSION = 3  # 3: LEGO root clause fixed as in the paper (task.root)
"""Part of every run id: bump it when a code change alters results (see runs.py).
Not bumped by issue 12 (variants own their options): no result changed; a run naming a
non-default attention/init/arch entry dumps it as an object ({"name": ...}) and so has a new
id anyway, the other runs keep theirs, and old run folders still load (ModelConfig.LEGACY_KEYS);
docs/model.md §1."""


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
    train_only: list[str] | None = None
    """Train only the parameters whose names start with one of these prefixes (e.g. ["head."]
    trains the read-out of a randomly initialised network); None trains all."""
    train: list[Group] | None = Field(None, exclude_if=lambda v: v is None)
    """Freeze policy (model/freeze.py): the parameter groups that train, or a preset name
    ("fpt" = input, output, positions, norms; "output_only", "input_output", "full", the
    paper's ablations), stored as its list of groups. The rest get no gradient and no optimizer
    state. Needs a model with parameter groups (arch="fpt"); None trains all."""
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
    compile: bool = False
    """Run the model's forward pass through torch.compile (benchmarks/bench_precision.py
    measures what it buys on the CPU recipes); weights, checkpoints and analyses are those of
    the plain module."""
    # Left out of dumps (so of run ids) while None: adding it kept existing run ids valid.
    pretrained: str | None = Field(None, exclude_if=lambda v: v is None)
    """PRETRAINED checkpoint (e.g. "all-minilm-l6-v2") whose weights initialise everything but
    the head, task tokens mapped to its vocabulary (LEGO §4.2). It fixes the architecture
    fields of `model`; None = random init."""
    pretrain: TrainConfig | None = Field(None, exclude_if=lambda v: v is None)
    """A run (its whole config: Chiang & Lee's masked-LM pretraining on a corpus, say; docs/
    papers.md §4) whose final weights initialise everything but the head, as `pretrained` does
    for a shipped checkpoint: task tokens map to its vocabulary (model/pretrained.py,
    load_run). It lives in the same run store under its own content-addressed id, so it is
    trained once, before the first run naming it, and shared by all of them; this run's id
    hashes its config. It fixes the architecture fields of `model` (all but PRETRAIN_FREE);
    None = random init."""
    mimic: MimicConfig | None = Field(None, exclude_if=lambda v: v is None)
    """Mimicking initialisation (LEGO §4.2.2): before training, chosen heads learn to imitate
    target attention patterns on random task sentences (after `pretrained`, if both)."""

    @model_validator(mode="before")
    @classmethod
    def _resolve_task_and_model(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("train") is not None:  # a preset name -> its groups
            from reasonlab.model.freeze import resolve_groups

            data["train"] = resolve_groups(data["train"])
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
            if data.get("pretrained") is not None:  # the checkpoint fixes the architecture
                fixed = _pretrained_fields(str(data["pretrained"]), t.seq_len)
                n = model.get("n_layers", 0)  # validated below, with the rest of the model
                if type(n) is int and 1 <= n <= fixed["n_layers"]:
                    del fixed["n_layers"]  # keep the checkpoint's first n_layers layers
                source |= dict.fromkeys(fixed, f"pretrained {data['pretrained']!r}")
                derived = {**fixed, **derived}
            if isinstance(data.get("pretrain"), dict):
                data["pretrain"] = TrainConfig.build(data["pretrain"], where="pretrain")
            if isinstance(data.get("pretrain"), TrainConfig):  # so does the pretraining run
                fixed = data["pretrain"].model.model_dump(exclude=set(PRETRAIN_FREE))
                source |= dict.fromkeys(fixed, "the pretraining run (pretrain.model)")
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
        if self.pretrained is not None:
            _pretrained_fields(self.pretrained, self.model.max_seq_len)
            if self.pretrain is not None:
                raise ValueError("set one of pretrained (a shipped checkpoint) and pretrain (a "
                                 "run of the store), not both")
        if (self.pretrain is not None and self.model.positions == "learned"
                and self.model.max_seq_len > self.pretrain.model.max_seq_len):
            raise ValueError(f"the task's sentences have {self.model.max_seq_len} tokens but the "
                             f"pretraining run learned {self.pretrain.model.max_seq_len} "
                             "positions; shorten them or pretrain on longer sequences")
        if self.n_val >= self.n_train:
            raise ValueError(f"n_val={self.n_val} must be below n_train={self.n_train}: the "
                             "validation examples are held out of the training draw")
        if self.train is not None and self.train_only is not None:
            raise ValueError("give train (groups) or train_only (name prefixes), not both")
        if self.ckpt_every % self.eval_every:
            raise ValueError(f"ckpt_every={self.ckpt_every} must be a multiple of "
                             f"eval_every={self.eval_every}")
        if self.optim.warmup_steps > self.steps:
            raise ValueError(f"optim.warmup_steps={self.optim.warmup_steps} exceeds "
                             f"steps={self.steps}; lower it")
        return self


PRETRAIN_FREE = ("vocab_size", "n_classes", "max_seq_len", "dropout", "depth_range")
"""ModelConfig fields a run initialised from a pretraining run (TrainConfig.pretrain) sets for
itself: the task decides the first three, and dropout / stochastic depth are training choices."""


def _variant_key(value: Any) -> Any:
    """A variant written as "name", {"name": "name"} or its Config compares as "name"; one
    with options compares as its dict."""
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, dict) and set(value) == {"name"}:
        return value["name"]
    return value


def _pretrained_fields(name: str, seq_len: int) -> dict[str, Any]:
    from reasonlab.model.pretrained import PRETRAINED

    ckpt = PRETRAINED[name]
    if seq_len > ckpt.max_positions:
        raise ValueError(f"pretrained {name!r} reads at most {ckpt.max_positions} tokens but "
                         f"the task's sentences have {seq_len}; shorten them")
    return dict(ckpt.architecture)


def config_id(config: TrainConfig) -> str:
    """The run id: a hash of the config's non-default values, its task and RESULTS_VERSION.

    dtype "fp32" hashes as the default "auto" does: before "auto" existed "fp32" was the
    default, so every stored run's config.json names it, and on the CPU (where those runs
    trained) the two compute alike. On a GPU they differ, as device="auto" does on machines
    with and without one: the id does not say where a run trained (README, "Running at paper
    scale on a GPU")."""
    changed = _without_fp32(config.model_dump(mode="json", exclude_defaults=True))
    blob = json.dumps({"task": config.task.name, "config": changed, "v": RESULTS_VERSION},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _without_fp32(dump: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in dump.items() if not (k == "dtype" and v == "fp32")}
    if isinstance(out.get("pretrain"), dict):
        out["pretrain"] = _without_fp32(out["pretrain"])
    return out


TrainConfig.model_rebuild()  # `pretrain` is itself a TrainConfig
