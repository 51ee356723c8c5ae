"""The follow-up's corpora (Chiang & Lee's later paper, arXiv 2109.03537; docs/papers.md §4):
recipes and runs of `artificial-pretraining-lego`. (`artificial-pretraining` follows the source
paper's table: studies/artificial/_support/paper_table.py.)

Every corpus gets one masked-LM pretraining run per scale and seed, named in the downstream runs
of that seed's `init_from` (TrainConfig.init_from): the run store trains it once, before any run
that names it. The paper pretrains once per corpus; here the seed redraws the pretraining too, so
that the spread over seeds is the spread of what the study compares (PIPELINE_UNIT). The
downstream arm `scratch` has the same architecture and random init. Downstream tasks: LEGO
Task 1 (the study's), and, for a user's own grids, WordNet supersense and part of speech
(tasks/glosses.py) and ListOps (tasks/listops.py, brackets kept, expressions short enough for
the encoder's positions).

Encoders: BERT-like (separate layers) for both studies; `artificial-pretraining-lego` adds an
ALBERT-like encoder (layers tied, as LEGO's ALBERT arm, `lego.common.albert`), with its own
pretraining run per corpus and seed -- a tied encoder cannot load an untied one's layers.

Thresholds are fixed before any run.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import numpy as np

from reasonlab.studies.kit.base import Report, Results, RunSpec, Scale, merge
from reasonlab.studies.lego.common import albert, lego_task
from reasonlab.train.config import TrainConfig

SCRATCH = "scratch"
"""The downstream arm without pretraining: the same architecture, randomly initialized (the
source paper's "No Pre-train" row)."""
PIPELINE_UNIT = ("the pipeline's seed: seed s pretrains each corpus's encoder (initialization, "
                 "masked windows and their order; the corpus text is fixed, as the paper's) "
                 "and fine-tunes from that encoder (classifier, example order, dropout), so "
                 "the scratch arm's unit is its fine-tuning seed")
"""The replication unit of the family's studies (Study.unit): a seed redraws the whole
pipeline, pretraining included; fine-tuning seeds of one shared pretraining run are not
replicates of the corpus (kit/stats.py)."""
LEGO = "lego"
LISTOPS = "listops"
"""LEGO and ListOps: the reasoning downstream tasks."""
BERT, ALBERT = "BERT", "ALBERT"
STATISTICS = ("uniform", "unigram", "bigram")
"""Corpora that carry token statistics only."""
_MODEL = dict(d_model=64, n_layers=4, n_heads=4, d_mlp=256, norm_position="pre")
RECIPES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(
        corpora=("uniform", "nesting", "english"), words=200,
        pretrain=dict(model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32), n_train=256,
                      n_test=64, batch_size=16, steps=4, eval_every=2, ckpt_every=4,
                      threads=1, task=dict(seq_len=24, corpus_tokens=5000)),
        finetune=dict(n_train=128, n_test=64, batch_size=16, steps=4, eval_every=2,
                      ckpt_every=4, threads=1),
        seq_len=16, lego=dict(n_clauses=3, n_train_vars=3),
        listops=dict(min_length=4, max_length=16)),
    # 8 pretraining runs of 800 steps and 400-step fine-tuning runs of a 4-layer d_model 64
    # encoder; flat-32 stands in for the paper's flat-128, whose pairs mostly straddle these
    # 32-token windows.
    "cpu": dict(
        corpora=("uniform", "unigram", "bigram", "flat-32", "nesting", "shuffle-4",
                 "shuffle-64", "english"), words=2000,
        pretrain=dict(model=_MODEL, n_train=40_000, n_test=500, batch_size=64, steps=800,
                      eval_every=200, ckpt_every=400, threads=1,
                      optim=dict(lr=1e-3, warmup_steps=50),
                      task=dict(seq_len=32, corpus_tokens=300_000)),
        finetune=dict(n_train=20_000, n_test=1000, batch_size=64, steps=400, eval_every=50,
                      ckpt_every=200, threads=1, optim=dict(lr=1e-3, warmup_steps=40)),
        seq_len=24, lego=dict(n_clauses=4, n_train_vars=4),
        listops=dict(min_length=16, max_length=32)),  # as fpt-universal's cpu ListOps
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
        seq_len=64, lego=dict(n_clauses=12, n_train_vars=6),
        listops=dict(min_length=16, max_length=128)),  # tasks/listops.py SHORT_LENGTHS
}


def corpora(scale: Scale) -> tuple[str, ...]:
    return RECIPES[scale]["corpora"]


def encoder(scale: Scale, name: str) -> dict[str, Any]:
    """Model overrides of an encoder kind: BERT-like as the scale's recipe, ALBERT-like with
    its layers tied (and, at paper scale, albert-base-v1's factorised embedding)."""
    return albert(scale)["model"] if name == ALBERT else {}


def pretrain_recipe(scale: Scale, corpus: str, kind: str = BERT) -> dict[str, Any]:
    """The masked-LM pretraining run of `corpus` at this scale, for an encoder `kind`."""
    s = copy.deepcopy(RECIPES[scale])
    p = s["pretrain"]
    return {**p, "model": {**p["model"], **encoder(scale, kind)},
            "task": {"name": "mlm", "corpus": corpus, "words": s["words"], **p["task"]}}


def tasks(scale: Scale) -> dict[str, dict[str, Any]]:
    """Downstream task configs by name."""
    s = RECIPES[scale]
    gloss = {"name": "gloss_class", "words": s["words"], "seq_len": s["seq_len"]}
    return {"supersense": {**gloss, "label": "supersense"}, "pos": {**gloss, "label": "pos"},
            LEGO: lego_task(**s["lego"]),
            LISTOPS: {"name": "listops", "tokenisation": "lra", **s["listops"]}}


PRETRAIN, FINETUNE = "pretrain", "finetune"
"""The `phase` factor of a run: a corpus's masked-LM pretraining, or a downstream run."""


def arm(task: str, init: str, kind: str = BERT) -> str:
    """A downstream arm's display name: "task | init", " | ALBERT" for the ALBERT-like encoder
    (a label only: analyses read the run's factors task / init / kind)."""
    return f"{task} | {init}" + ("" if kind == BERT else f" | {kind}")


def runs(scale: Scale, seeds: int, task_names: Iterable[str], kind: str = BERT
         ) -> list[RunSpec]:
    """Per seed s: the pretraining run of every corpus with seed s (factors phase=pretrain,
    corpus, kind), then every downstream task x (scratch, each corpus) with seed s, a
    pretrained init from its corpus's seed-s run (phase=finetune, task, init, kind): the
    replication unit is the pipeline's seed (PIPELINE_UNIT). Seed 0's runs keep their
    ids (seed 0 is the config default)."""
    pre = {c: pretrain_recipe(scale, c, kind) for c in corpora(scale)}
    suffix = "" if kind == BERT else f" | {kind}"
    specs = [RunSpec(f"pretrain {c}{suffix}", seed, TrainConfig.build({**p, "seed": seed}),
                     {"phase": PRETRAIN, "corpus": c, "kind": kind})
             for seed in range(seeds) for c, p in pre.items()]
    s = RECIPES[scale]
    model = {k: v for k, v in s["pretrain"]["model"].items() if k != "dropout"}
    for t in task_names:
        base = merge({"model": {}}, s["finetune"], {"task": tasks(scale)[t]})
        for i in (SCRATCH, *pre):
            specs += [RunSpec(arm(t, i, kind), seed, TrainConfig.build(merge(
                base, {"model": {**model, **encoder(scale, kind)}} if i == SCRATCH else
                {"init_from": {**pre[i], "seed": seed}}, {"seed": seed})),
                {"phase": FINETUNE, "task": t, "init": i, "kind": kind, "arm": arm(t, i, kind)})
                for seed in range(seeds)]
    return specs


def downstream(results: Results, key: str = "acc", kind: str = BERT
               ) -> dict[str, dict[str, np.ndarray]]:
    """task -> init -> final `key` per seed, for one encoder kind (pretraining runs left out)."""
    return {t: {i: np.asarray([float(r["final"][key]) for _, r in runs_])
                for i, runs_ in by_task.by("init").items()}
            for t, by_task in results.where(phase=FINETUNE, kind=kind).by("task").items()}


def structured(scale: Scale) -> tuple[str, ...]:
    """Nesting and the flat corpus of this scale: the structure the paper finds transfers."""
    return tuple(c for c in corpora(scale) if c == "nesting" or c.startswith("flat-"))


def recipes(rep: Report, results: Results) -> Report:
    """Two recipe sections: the pretraining runs, then the fine-tuning runs of the scratch
    arm (a pretrained arm differs only by its `init_from`, the run of its corpus)."""
    pre, scratch = results.where(phase=PRETRAIN), results.where(phase=FINETUNE, init=SCRATCH)
    for runs_, note in ((pre, "Pretraining runs (one per corpus and seed)."),
                        (scratch, "Fine-tuning runs, scratch arm; each pretrained arm is the "
                         "same with `init_from` = its corpus's pretraining run of the same "
                         "seed, whose architecture it takes.")):
        if runs_:
            rep.recipe(runs_, note=note)
    return rep
