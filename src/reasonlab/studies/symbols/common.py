"""Shared pieces of the abstract-symbols studies (Boix-Adsera et al., ICLR 2024;
docs/papers.md §2 Abstract symbols).

The model is the authors' (`eboix/relational-reasoning` experiments/models.py; docs/papers.md,
checked by tests/unit/test_authors_structure.py): a pre-LayerNorm transformer, bias-free
Q/K/V/O, an MLP with biases and GELU, LayerNorm eps 1e-5, learned positions, a read-out token
appended at the end (the task's [OUT]) read through a final LayerNorm without gain or bias and
a linear map, 2 layers (the depth of most of the paper's experiments), and PyTorch's default
initialization (`torch_default`: embeddings N(0, 1), linears kaiming-uniform). Before we adopted it
the studies used BERT's N(0, 0.02^2) (`BERT_INIT`); where that changes a verdict the study
reports it as an arm.

Real labels (same/different) are trained as classes with cross-entropy, not as +-1
regression targets with MSE as the authors do: the claims are about test accuracy on unseen
symbols, a 2-way softmax and a +-1 regression give the same sign rule on these separable
tasks, and the training loop is shared by every task. Where the paper's theory needs the
regression (the read-out-only kernel regime), `symbols-readout-vs-full` fits the read-out by
closed-form least squares on +-1 targets.
"""

from __future__ import annotations

from typing import Any

from reasonlab.studies.kit.base import RunSpec, Scale, merge


# Per-scale model and optimisation. `cpu`: d_model 64, 1000 steps of batch 64 (about 10-20 s
# per run on one core); measured sweeps in README ("abstract-symbols studies"). `paper`: our
# reading of the paper's experiments (2-layer transformer of GPT-2 width, Adam, long training),
# for a GPU.
AUTHORS: dict[str, Any] = dict(norm_position="pre", attn_bias=False, ln_eps=1e-5,
                               ln_final_affine=False, init="torch_default")
"""The authors' structure and initialization (see the module docstring)."""
BERT_INIT: dict[str, Any] = dict(init="default")
"""Override for a reported arm: BERT's N(0, 0.02^2) weights and embeddings, zero biases."""
MODEL: dict[Scale, dict[str, Any]] = {
    "smoke": dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32, **AUTHORS),
    "cpu": dict(d_model=64, n_layers=2, n_heads=4, d_mlp=256, **AUTHORS),
    "paper": dict(d_model=768, n_layers=2, n_heads=12, d_mlp=3072, **AUTHORS),
}
TRAIN: dict[Scale, dict[str, Any]] = {
    "smoke": dict(steps=20, batch_size=16, eval_every=10, ckpt_every=20, n_test=64,
                  optim=dict(lr=1e-3, warmup_steps=5, weight_decay=0.0), threads=1),
    "cpu": dict(steps=1000, batch_size=64, eval_every=250, ckpt_every=1000, n_test=1000,
                optim=dict(lr=1e-3, warmup_steps=50, weight_decay=0.0), threads=1),
    "paper": dict(steps=20_000, batch_size=512, eval_every=1000, ckpt_every=5000, n_test=5000,
                  optim=dict(lr=1e-4, warmup_steps=500, weight_decay=0.0)),
}
MLP: dict[str, Any] = dict(n_layers=2, act="relu")
"""The MLP baselines: 2 hidden layers, and the authors' ReLU (their MLPs call F.relu,
eboix/relational-reasoning experiments/models.py lines 37 and 66)."""


def mlp_arm(input: str, equality: bool = False, **model: Any) -> dict[str, Any]:
    """Overrides of an MLP-baseline arm: `input` "one_hot" (one-hot tokens into position-specific
    first-layer weights, the theorem's setting) or "shared_embedding" (one table W_E for every
    position); model/mlp_baseline.py."""
    return {"model": {"arch": {"name": "mlp_baseline", "input": input, "equality": equality}, **MLP,
                      **model}}


SYMBOLS: dict[Scale, dict[str, int]] = {
    "smoke": dict(n_train_symbols=200, n_val_symbols=10, n_test_symbols=50),
    "cpu": dict(n_train_symbols=1000, n_val_symbols=100, n_test_symbols=200),
    "paper": dict(n_train_symbols=100_000, n_val_symbols=1000, n_test_symbols=1000),
}


def recipe(scale: Scale, **task: Any) -> dict[str, Any]:
    """A run of the given scale: the templates task (symbol alphabets of the scale; `task`
    overrides, e.g. preset="same_different") and the paper's model shape; no n_train (arms or
    sweeps set it)."""
    return merge(TRAIN[scale], {"task": {"name": "templates", **SYMBOLS[scale], **task},
                                "model": MODEL[scale]})


def n_train_sweep(ns: list[int]) -> list[dict[str, Any]]:
    return [{"n_train": n} for n in ns]


# -- copying unseen symbols against the width (symbols-copy-embedding-dim, §5) ------------
COPY: dict[Scale, dict[str, Any]] = {
    "smoke": {"task": {"preset": "copy", "length": 2, "n_train_symbols": 16}, "n_train": 128},
    # cpu: 500 steps (test accuracy is flat after ~100 in our trial runs at d_model 128).
    "cpu": {"task": {"preset": "copy", "length": 2, "n_train_symbols": 32}, "n_train": 5000,
            "steps": 500, "eval_every": 100, "ckpt_every": 500},
    "paper": {"task": {"preset": "copy", "length": 2, "n_train_symbols": 128},
              "n_train": 50_000},
}
"""Overrides of the copy study: a small training alphabet (fewer symbols than the largest
width, so that inverse scaling can show at CPU widths), its sample count and budget."""
# cpu: 64 / 128 / 256 since the authors' init (was 16 / 64 / 256: at d 16 the model does not fit the
# training symbols, README), the widths of the measurement.
WIDTHS: dict[Scale, list[int]] = {"smoke": [8, 16], "cpu": [64, 128, 256],
                                  "paper": [64, 256, 1024, 4096]}
D_HEAD: dict[Scale, int | None] = {"smoke": None, "cpu": None, "paper": 64}
"""Paper: the sweep keeps d_head at GPT-2's 64 (heads = d_model / 64); None: the scale's
n_heads at every width (as measured at cpu scale)."""


def copy_recipe(scale: Scale) -> dict[str, Any]:
    """The copy task (`$w0 $w1 -> $w0`) with the read-out tied to the embedding."""
    return merge(recipe(scale), COPY[scale], {"model": {"tie_head": True}})


def width(spec: RunSpec) -> int:
    """A width sweep's x: the run's embedding dimension."""
    return spec.config.model.d_model


def width_sweep(scale: Scale) -> list[dict[str, Any]]:
    """d_model over WIDTHS, d_mlp = 4 d_model; at paper scale heads of d_head 64."""
    d_head = D_HEAD[scale]
    return [{"model": {"d_model": d, "d_mlp": 4 * d, **({} if d_head is None else {
        "n_heads": max(1, d // d_head), "d_head": d_head})}} for d in WIDTHS[scale]]


# -- a small causal language model (symbols-language-model, §6) -----------------------------
LM_MODEL = dict(norm_position="pre", attn_bias=False, causal=True)


LM_SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(model=dict(d_model=16, n_layers=1, n_heads=2, d_mlp=32), seq_len=16,
                  n_train=64, n_test=8, batch_size=8, steps=10, eval_every=5, ckpt_every=10,
                  optim=dict(lr=1e-3, warmup_steps=2), threads=1),
    # d_model 128 x 4 layers x 64 characters ran at ~1 step/s on the shared machine (1500
    # steps: ~25 min), so the cpu scale is 4x narrower in tokens and 8x in parameters.
    "cpu": dict(model=dict(d_model=64, n_layers=2, n_heads=4, d_mlp=256), seq_len=32,
                n_train=20_000, n_test=200, batch_size=32, steps=1000, eval_every=200,
                ckpt_every=1000, optim=dict(lr=2e-3, warmup_steps=100, weight_decay=0.01),
                threads=1),
    # our reading of the paper's GPT-2 small from scratch, at character level, for a GPU, on
    # the paper's WikiText-103 (§6) from the user's files (no tokenizer ships offline: the
    # character level stays; tasks/corpora.py)
    "paper": dict(model=dict(d_model=768, n_layers=12, n_heads=12, d_mlp=3072), seq_len=256,
                  source="wikitext103",
                  n_train=200_000, n_test=2000, batch_size=64, steps=50_000, eval_every=2500,
                  ckpt_every=5000, optim=dict(lr=3e-4, warmup_steps=2000, weight_decay=0.1)),
}


def lm_recipe(scale: Scale) -> dict[str, Any]:
    """A character-level causal LM (task corpus_lm) of the scale's size: on WordNet glosses,
    at paper scale on WikiText-103."""
    s = dict(LM_SCALES[scale])
    seq_len = s.pop("seq_len")
    source = {"source": s.pop("source")} if "source" in s else {}
    return merge(s, {"task": {"name": "corpus_lm", "seq_len": seq_len, **source},
                     "model": LM_MODEL})
