"""Golden values: what a run computes, pinned against numbers written down once, not against
another run of the same code (a change that alters results alike in two runs passes every
comparison of two runs, and so does a missing RESULTS_VERSION bump).

Pinned: the learning-rate schedule (`lr_at`) over warm-up and decay; the seeds' purposes
(distinct streams, each stream's first numbers); the stochastic-depth range (both ends drawn);
the data a task generates; a model's initial weights; and a 10-step run per family (task,
model, optimiser), its final training and test loss and two numbers of its final weights.

If one fails after a change you meant to make (a change of results), bump RESULTS_VERSION
(train/config.py: stored runs are then not reused) and write the new values here:
`python tests/unit/test_golden.py` prints them. Floating-point values are compared at RTOL, a
tolerance measured across CPU code paths (docs/design.md §3 Determinism, "Golden values").
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import torch

from reasonlab.train.config import OptimConfig, TrainConfig

RTOL = 1e-5
"""Relative tolerance of the pinned losses, and of the weight numbers relative to the weights'
norm. Across this machine's code paths (AVX-512, AVX2 and plain kernels, MKL's default and
compatible GEMM, 1 or 2 threads) the values moved at most 1.7e-7 (docs/design.md §3); the
smallest change of results a mutation pass made moved a 10-step run's loss by 1.1e-4."""

FIX = ("results changed. If you meant to change them, bump RESULTS_VERSION (train/config.py) "
       "so that stored runs are not reused, and update GOLDEN in tests/unit/test_golden.py "
       "(`python tests/unit/test_golden.py` prints the new values); if not, this change alters "
       "what runs compute")

BASE: dict[str, Any] = {"n_train": 128, "n_test": 32, "batch_size": 16, "steps": 10,
                        "eval_every": 5, "ckpt_every": 10, "threads": 1,
                        "optim": {"lr": 3e-3, "warmup_steps": 3}}
TINY = {"d_model": 16, "n_layers": 2, "n_heads": 2, "d_mlp": 32}
FAMILIES: dict[str, dict[str, Any]] = {
    # LEGO, BERT-like: warm-up then cosine, decoupled weight decay on matrices, clipping
    "lego-bert": {"task": {"name": "lego", "n_clauses": 4, "n_train_vars": 2},
                  "model": TINY},
    # LEGO, ALBERT-like: tied layers, stochastic depth, dropout (torch's global RNG), rotary
    "lego-albert-depth": {
        "task": {"name": "lego", "group": "s3", "n_clauses": 4, "n_train_vars": 2},
        "model": {**TINY, "n_layers": 3, "tie_layers": True, "depth_range": [1, 3],
                  "dropout": 0.1, "positions": "rotary", "norm_position": "pre"}},
    # anchor functions, the authors' GPT: causal, post-LN without embedding LN, no biases,
    # ReLU, the rate init; constant lr, weight decay on everything, no clipping
    "anchors-gpt": {
        "task": {"name": "anchors", "split_modulus": "seq_len_minus_1", "noise_split": False},
        "model": {**TINY, "causal": True, "init": {"name": "rate", "gamma": 0.5},
                  "norm_position": "post_no_embed_ln", "attn_bias": False, "mlp_bias": False,
                  "act": "relu", "ln_eps": 1e-5},
        "optim": {"lr": 1e-3, "weight_decay_on": "all", "schedule": "constant",
                  "grad_clip": None}},
    # abstract symbols: the MLP baseline (one-hot input), training accuracy logged
    "symbols-mlp": {
        "task": {"name": "templates", "preset": "copy", "length": 2, "n_train_symbols": 16,
                 "n_val_symbols": 4, "n_test_symbols": 8},
        "model": {"arch": {"name": "mlp_baseline", "input": "one_hot"}, "n_layers": 2,
                  "act": "relu", "d_model": 16, "d_mlp": 32, "n_heads": 2},
        "eval_train": True},
    # abstract symbols, a transformer: symbol-restricted softmax, a floor on the cosine
    "symbols-transformer": {
        "task": {"name": "templates", "preset": "same_different", "n_train_symbols": 16,
                 "n_val_symbols": 4, "n_test_symbols": 8},
        "model": TINY, "optim": {"lr": 1e-3, "warmup_steps": 2, "weight_decay": 0.0,
                                 "min_lr_ratio": 0.1}},
    # FPT: continuous patch inputs, several outputs per token, the FPT training policy (frozen
    # attention and MLP), a validation split
    "fpt-bits": {"task": {"name": "bit_memory", "n_bits": 20, "patch": 10},
                 "model": {**TINY, "arch": {"name": "fpt"}}, "trainable": "fpt", "n_val": 16},
    # artificial corpora: masked-LM pretraining on a generated corpus
    "artificial-mlm": {"task": {"name": "mlm", "corpus": "nesting", "words": 200, "seq_len": 24,
                                "corpus_tokens": 5000},
                       "model": TINY},
    # ListOps with a layer-normalised LSTM
    "listops-lnlstm": {"task": {"name": "listops", "tokenisation": "lra", "min_length": 4,
                                "max_length": 16},
                       "model": {**TINY, "arch": {"name": "lnlstm"}}},
    # a decoder: grouped key/value heads, SwiGLU, RMSNorm, rotary, causal
    "decoder-gqa-swiglu": {"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
                           "model": {**TINY, "n_heads": 4, "n_kv_heads": 2,
                                     "mlp": {"name": "swiglu"}, "norm_layer": {"name": "rmsnorm"},
                                     "causal": True, "positions": "rotary"}},
}

GOLDEN: dict[str, dict[str, float]] = {
    "lego-bert": {"train_loss": 0.6805935859680176, "test_loss": 0.7011345624923706,
        "weights_norm": 9.073491224664815, "weights_proj": -0.5051829521484824},
    "lego-albert-depth": {"train_loss": 1.7826452255249023, "test_loss": 1.7934414148330688,
        "weights_norm": 7.009230788864915, "weights_proj": 0.044112160659959265},
    "anchors-gpt": {"train_loss": 5.173920440673828, "test_loss": 5.333506107330322,
        "weights_norm": 22.170986666626526, "weights_proj": -0.27918059347546653},
    "symbols-mlp": {"train_loss": 2.772232437133789, "test_loss": 2.0793466567993164,
        "weights_norm": 1.4693444407447633, "weights_proj": -1.0128190748689812},
    "symbols-transformer": {"train_loss": 0.6942469596862793, "test_loss": 0.6920433640480042,
        "weights_norm": 9.045369183173362, "weights_proj": 0.11862407788294793},
    "fpt-bits": {"train_loss": 0.6963154792785644, "test_loss": 0.6748530268669128,
        "weights_norm": 10.429962457845228, "weights_proj": -0.39216396590269137},
    "artificial-mlm": {"train_loss": 5.140038681030274, "test_loss": 5.120990753173828,
        "weights_norm": 9.234486889807519, "weights_proj": -0.6665217474813292},
    "listops-lnlstm": {"train_loss": 2.3034934997558594, "test_loss": 2.3073008060455322,
        "weights_norm": 18.66661497665575, "weights_proj": 0.5796358163070288},
    "decoder-gqa-swiglu": {"train_loss": 0.6901168346405029, "test_loss": 0.6658432483673096,
        "weights_norm": 9.06418391811583, "weights_proj": 0.30793867338054914},
}


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = merge(a[k], v) if isinstance(v, dict) and isinstance(a.get(k), dict) else v
    return out


def family_config(name: str) -> TrainConfig:
    return TrainConfig.build(merge(BASE, FAMILIES[name]))


def weight_numbers(weights: dict[str, torch.Tensor]) -> dict[str, float]:
    """The weights' norm, and their projection on a fixed direction (a sine over the flattened
    parameters in name order) over that norm: any change to any weight moves one or both."""
    flat = torch.cat([weights[k].detach().double().reshape(-1) for k in sorted(weights)])
    norm = float(flat.norm())
    direction = torch.sin(torch.arange(1, flat.numel() + 1, dtype=torch.float64))
    return {"weights_norm": norm, "weights_proj": float(flat @ direction) / norm}


def run_family(name: str) -> dict[str, float]:
    from reasonlab.train.init_stages import load_run_model
    from reasonlab.train.loop import train

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "runs" / "golden"
        config = family_config(name)
        last = train(config, run_dir, quiet=True)
        # the whole model (a checkpoint that leaves frozen weights out rebuilds them from the
        # run's config, which execute() writes beside it)
        (run_dir / "config.json").write_text(json.dumps(config.model_dump(mode="json")))
        _, model = load_run_model(run_dir)
        return {"train_loss": last["train_loss"], "test_loss": last["loss"],
                **weight_numbers(model.state_dict())}


def init_numbers(name: str) -> dict[str, float]:
    from reasonlab.train.loop import build_model

    return weight_numbers(build_model(family_config(name)).state_dict())


def data_digest(name: str) -> str:
    """SHA-256 of the integers of the run's training and test sets (exact on every CPU)."""
    from reasonlab.train.loop import make_data

    h = hashlib.sha256()
    for batch in make_data(family_config(name)):
        for t in (batch.tokens, batch.label_pos, batch.labels, batch.loss_mask):
            h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def close(got: float, want: float, scale: float | None = None) -> bool:
    return abs(got - want) <= RTOL * (abs(want) if scale is None else scale)


# ----------------------------------------------------------------------------- schedule

def test_lr_at_over_warmup_and_cosine_decay():
    """lr 1, 4 warm-up steps (step 0 trains at lr/4, not 0), cosine to 0.1 over the other 8
    of 12 steps: the numbers written out."""
    from reasonlab.train.optim import lr_at

    cfg = OptimConfig(lr=1.0, warmup_steps=4, min_lr_ratio=0.1)
    # warm-up (s + 1) / 4; then 0.1 + 0.45 (1 + cos(pi (s - 4) / 8))
    want = [0.25, 0.5, 0.75, 1.0, 1.0, 0.9657457896300791, 0.8681980515339464,
            0.7222075445642904, 0.55, 0.3777924554357096, 0.23180194846605365,
            0.13425421036992097]
    got = [lr_at(s, 12, cfg) for s in range(12)]
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_lr_at_constant_and_without_warmup():
    from reasonlab.train.optim import lr_at

    assert [lr_at(s, 5, OptimConfig(lr=2e-3, warmup_steps=2, schedule="constant"))
            for s in range(5)] == pytest.approx([1e-3, 2e-3, 2e-3, 2e-3, 2e-3], rel=1e-12)
    cosine = [lr_at(s, 4, OptimConfig(lr=1.0)) for s in range(4)]
    assert cosine == pytest.approx([1.0, 0.8535533905932737, 0.5, 0.14644660940672627],
                                   rel=1e-12)
    # warm-up over the whole run: the last step reaches the peak
    assert lr_at(2, 3, OptimConfig(lr=1.0, warmup_steps=3)) == pytest.approx(1.0)


# ----------------------------------------------------------------------------- seeds

def test_seed_purposes_are_distinct_streams():
    from reasonlab.train.seeds import DATA, DEPTH, INIT, MIMIC, ORDER, seeds

    purposes = {"DATA": DATA, "INIT": INIT, "ORDER": ORDER, "DEPTH": DEPTH, "MIMIC": MIMIC}
    assert purposes == {"DATA": 1, "INIT": 2, "ORDER": 3, "DEPTH": 4, "MIMIC": 5}, (
        "a purpose's number changed: every run's data, init or order changes with it")
    firsts = {k: tuple(int(x) for x in seeds(7, p).generate_state(2))
              for k, p in purposes.items()}
    assert len(set(firsts.values())) == len(firsts), f"two purposes share a stream: {firsts}"
    assert firsts["DATA"] == (369571992, 1544939151)
    assert firsts["INIT"] == (1009178997, 4255937140)


def test_data_and_init_come_from_their_own_streams():
    """The data of a run and its initial weights, pinned: sharing one stream (or drawing from
    the wrong one) changes one of them."""
    assert data_digest("lego-bert") == GOLDEN_DATA["lego-bert"], FIX
    got = init_numbers("lego-bert")
    want = GOLDEN_INIT["lego-bert"]
    assert close(got["weights_norm"], want["weights_norm"]), (got, want, FIX)
    assert close(got["weights_proj"], want["weights_proj"], want["weights_norm"]), (
        got, want, FIX)


# ----------------------------------------------------------------------------- depth

def test_stochastic_depth_draws_its_whole_range():
    """depth_range [1, 3] is inclusive at both ends: 1, 2 and 3 layers are all drawn, and
    nothing else; the first draws are pinned."""
    from reasonlab.train.loop import _depth

    config = family_config("lego-albert-depth")
    draws = [_depth(config, step) for step in range(300)]
    assert set(draws) == {1, 2, 3}
    assert min(draws.count(d) for d in (1, 2, 3)) > 60  # uniform-ish
    assert draws[:12] == GOLDEN_DEPTHS, FIX
    assert _depth(family_config("lego-bert"), 0) is None  # no range: the full depth


# ----------------------------------------------------------------------------- runs

@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_short_run_computes_what_it_computed(name):
    got, want = run_family(name), GOLDEN[name]
    bad = [k for k in ("train_loss", "test_loss", "weights_norm") if not close(got[k], want[k])]
    if not close(got["weights_proj"], want["weights_proj"], want["weights_norm"]):
        bad.append("weights_proj")
    assert not bad, f"{name}: {', '.join(f'{k} {want[k]!r} -> {got[k]!r}' for k in bad)}; {FIX}"


GOLDEN_DEPTHS: list[int] = [3, 3, 3, 1, 2, 3, 2, 1, 2, 1, 2, 3]
GOLDEN_DATA: dict[str, str] = {"lego-bert": "a1225e74aeedd6bf"}
GOLDEN_INIT: dict[str, dict[str, float]] = {
    "lego-bert": {"weights_norm": 9.057335323239345, "weights_proj": -0.5456976816351738}}


def measure() -> dict[str, Any]:
    from reasonlab.train.loop import _depth

    torch.set_num_threads(1)
    return {"GOLDEN": {name: run_family(name) for name in FAMILIES},
            "GOLDEN_DEPTHS": [_depth(family_config("lego-albert-depth"), s) for s in range(12)],
            "GOLDEN_DATA": {"lego-bert": data_digest("lego-bert")},
            "GOLDEN_INIT": {"lego-bert": init_numbers("lego-bert")}}


if __name__ == "__main__":
    print(json.dumps(measure(), indent=1))
    sys.exit(0)
