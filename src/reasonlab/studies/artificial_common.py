"""Artificial pretraining (Chiang & Lee; docs/papers.md §4): recipes, the runs the two studies
share, and the gain table.

Every corpus gets ONE masked-LM pretraining run per scale (seed 0; the paper pretrains once per
corpus), named in the downstream runs' `pretrain` (TrainConfig.pretrain): the run store trains it
once, before any run that names it, and `artificial-pretraining` and `artificial-pretraining-lego`
share the LEGO runs as well (same configs, same ids). The downstream arm `scratch` has the same
architecture and random init. Downstream tasks: WordNet supersense and part of speech
(tasks/glosses.py; GLUE does not reach us offline) and LEGO Task 1 (ListOps is not on main yet).

Thresholds are fixed before any run.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import numpy as np

from reasonlab.studies.base import Report, Results, RunSpec, Scale, grid, merge
from reasonlab.studies.lego_common import lego_task
from reasonlab.train.config import TrainConfig

SCRATCH = "scratch"
ENGLISH_TASKS = ("supersense", "pos")
"""The English downstream tasks: the paper's claims are about transfer to language (GLUE)."""
LEGO = "lego"
STATISTICS = ("uniform", "unigram", "bigram")
"""Corpora that carry token statistics only."""
MIN_TRANSFER = 0.01
"""A difference in downstream accuracy (mean over English tasks and seeds) that counts: one
point, when also > 2 SE (the paper's gaps are ~10 GLUE points)."""

PAPER_GAIN = {"english": 20.5, "flat-128": 14.5, "shuffle-64": 12.4, "nesting": 12.0,
              "shuffle-4": 4.7, "bigram": 2.2, "uniform": -0.2}
"""Chiang & Lee's GLUE average over the from-scratch baseline (61.6), in points (docs/papers.md
§4); Kannada (+14.7) has no counterpart here, and unigram and flat-32 none in the paper."""

_MODEL = dict(d_model=64, n_layers=4, n_heads=4, d_mlp=256, norm="pre")
SCALES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(
        corpora=("uniform", "nesting", "english"), words=200,
        pretrain=dict(model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32), n_train=256,
                      n_test=64, batch_size=16, steps=4, eval_every=2, ckpt_every=4,
                      threads=1, task=dict(seq_len=24, corpus_tokens=5000)),
        finetune=dict(n_train=128, n_test=64, batch_size=16, steps=4, eval_every=2,
                      ckpt_every=4, threads=1),
        seq_len=16, lego=dict(n_clauses=3, n_train_vars=3)),
    # ~30 minutes on 2 cores: 8 pretraining runs of 800 steps and 54 fine-tuning runs of 400
    # (3 tasks x 9 inits x 2 seeds) of a 4-layer d_model 64 encoder; flat-32 stands in for the
    # paper's flat-128, whose pairs mostly straddle these 32-token windows.
    "cpu": dict(
        corpora=("uniform", "unigram", "bigram", "flat-32", "nesting", "shuffle-4",
                 "shuffle-64", "english"), words=2000,
        pretrain=dict(model=_MODEL, n_train=40_000, n_test=500, batch_size=64, steps=800,
                      eval_every=200, ckpt_every=400, threads=1,
                      optim=dict(lr=1e-3, warmup_steps=50),
                      task=dict(seq_len=32, corpus_tokens=300_000)),
        finetune=dict(n_train=20_000, n_test=1000, batch_size=64, steps=400, eval_every=50,
                      ckpt_every=200, threads=1, optim=dict(lr=1e-3, warmup_steps=40)),
        seq_len=24, lego=dict(n_clauses=4, n_train_vars=4)),
    # The paper's encoder and pretraining (8 layers, d_model 512, 8 heads, 29,995 words + 5
    # specials, batch 300, lr 5e-5, 100k steps), for a GPU; fine-tuning as BERT on GLUE.
    "paper": dict(
        corpora=("uniform", "unigram", "bigram", "flat-128", "nesting", "shuffle-4",
                 "shuffle-64", "english"), words=29_995,
        pretrain=dict(model=dict(d_model=512, n_layers=8, n_heads=8, d_mlp=2048, dropout=0.1),
                      n_train=3_000_000, n_test=5000, batch_size=300, steps=100_000,
                      eval_every=5000, ckpt_every=5000, optim=dict(lr=5e-5, warmup_steps=5000),
                      task=dict(seq_len=128, corpus_tokens=100_000_000)),
        finetune=dict(model=dict(dropout=0.1), n_train=100_000, n_test=10_000, batch_size=32,
                      steps=10_000, eval_every=500, ckpt_every=1000,
                      optim=dict(lr=2e-5, warmup_steps=500)),
        seq_len=64, lego=dict(n_clauses=12, n_train_vars=6)),
}


def corpora(scale: Scale) -> tuple[str, ...]:
    return SCALES[scale]["corpora"]


def pretrain_recipe(scale: Scale, corpus: str) -> dict[str, Any]:
    """The masked-LM pretraining run of `corpus` at this scale."""
    s = copy.deepcopy(SCALES[scale])
    p = s["pretrain"]
    return {**p, "task": {"name": "mlm", "corpus": corpus, "words": s["words"], **p["task"]}}


def tasks(scale: Scale) -> dict[str, dict[str, Any]]:
    """Downstream task configs by name."""
    s = SCALES[scale]
    gloss = {"name": "gloss_class", "words": s["words"], "seq_len": s["seq_len"]}
    return {"supersense": {**gloss, "label": "supersense"}, "pos": {**gloss, "label": "pos"},
            LEGO: lego_task(**s["lego"])}


def arm(task: str, init: str) -> str:
    return f"{task} | {init}"


def split_arm(name: str) -> tuple[str, str]:
    task, init = name.split(" | ")
    return task, init


def runs(scale: Scale, seeds: int, task_names: Iterable[str]) -> list[RunSpec]:
    """The pretraining run of every corpus (arm "pretrain <corpus>"), then every downstream
    task x (scratch, each corpus) x seed."""
    pre = {c: pretrain_recipe(scale, c) for c in corpora(scale)}
    specs = [RunSpec(f"pretrain {c}", 0, TrainConfig.build(p)) for c, p in pre.items()]
    s = SCALES[scale]
    model = {k: v for k, v in s["pretrain"]["model"].items() if k != "dropout"}
    inits = {SCRATCH: {"model": model}} | {c: {"pretrain": p} for c, p in pre.items()}
    for t in task_names:
        base = merge({"model": {}}, s["finetune"], {"task": tasks(scale)[t]})
        specs += grid(base, {arm(t, i): o for i, o in inits.items()}, seeds=seeds)
    return specs


def downstream(results: Results, key: str = "acc") -> dict[str, dict[str, np.ndarray]]:
    """task -> init -> final `key` per seed (pretraining runs left out)."""
    out: dict[str, dict[str, list[float]]] = {}
    for s, r in results:
        if " | " in s.arm:
            t, i = split_arm(s.arm)
            out.setdefault(t, {}).setdefault(i, []).append(float(r["final"][key]))
    return {t: {i: np.asarray(v) for i, v in by.items()} for t, by in out.items()}


def english_mean(acc: dict[str, dict[str, np.ndarray]], init: str) -> np.ndarray:
    """Per seed, the accuracy of `init` averaged over the English tasks."""
    return np.mean([acc[t][init] for t in ENGLISH_TASKS if t in acc], axis=0)


def group_mean(acc: dict[str, dict[str, np.ndarray]], inits: Iterable[str]) -> np.ndarray:
    """Per seed, the English-task accuracy averaged over a group of corpora."""
    return np.mean([english_mean(acc, i) for i in inits], axis=0)


def structured(scale: Scale) -> tuple[str, ...]:
    """Nesting and the flat corpus of this scale: the structure the paper finds transfers."""
    return tuple(c for c in corpora(scale) if c == "nesting" or c.startswith("flat-"))


def recipes(rep: Report, results: Results) -> Report:
    """Two recipe sections: the pretraining runs, then the fine-tuning runs of the scratch
    arm (a pretrained arm differs only by its `pretrain`, the run of its corpus)."""
    pre = [(s, r) for s, r in results if s.arm.startswith("pretrain ")]
    scratch = [(s, r) for s, r in results if s.arm.endswith(f" | {SCRATCH}")]
    for runs_, note in ((pre, "Pretraining runs (one per corpus, seed 0)."),
                        (scratch, "Fine-tuning runs, scratch arm; each pretrained arm is the "
                         "same with `pretrain` = its corpus's pretraining run, whose "
                         "architecture it takes.")):
        if runs_:
            rep.recipe(Results(runs_, results.scale, results.seeds), note=note)
    return rep


def grouped_bars(ax: Any, values: dict[str, dict[str, float]]) -> None:
    """One group of bars per outer key (x axis), one bar per inner key (legend)."""
    names = list(values)
    kinds = list(next(iter(values.values())))
    w = 0.8 / len(kinds)
    for k, kind in enumerate(kinds):
        ax.bar(np.arange(len(names)) + k * w, [values[n][kind] for n in names], w, label=kind)
    ax.set_xticks(np.arange(len(names)) + 0.4 - w / 2, names, rotation=30, fontsize=8)
    ax.legend(fontsize=8)
