"""The seed's table (Chiang & Lee, arXiv 2012.11995; frozen-pretrained-transformers.txt, second
half, "Results"): its 13 rows as our pretraining corpora, its 8 GLUE columns as reference, our
downstream tasks, the recipes per scale and the runs of `artificial-pretraining`.

Rows (seed -> ours; tasks/artificial.py, tasks/natural.py):
    No Pre-train       scratch (same architecture, random init)
    Pre-train En       english-fortunes (English running text disjoint from every downstream
                       split; the seed's is Wikipedia)
    Rand. Baseline     uniform            Zipf Baseline       unigram
    Amino Acid         amino (a toy: ~200k residues of EMBOSS's test data, 23 types)
    Java Script        javascript         Kannada             german (no Kannada ships offline)
    Artificial (Uni.)  nesting-uniform    Artificial (Zipf)   nesting
    Artificial (5000 / 500 / 50)          nesting-5000 / -500 / -50
    Artificial (50-s)  nesting-50s (our reading; the seed gives no definition)
and, as labelled extra rows, two corpora of the authors' follow-up (arXiv 2109.03537) with its
GLUE-average gains: flat-32 (its Flat-128, shortened to our windows) and shuffle-64-fortunes
(its Shuffle-64, over the disjoint English).

Columns, a function of the scale (`DOWNSTREAM`). At `paper` they are the seed's own: GLUE's
eight tasks (tasks/glue.py), read from a local folder (the study's `glue=DIR`, or nyu-mll/glue
in the Hugging Face cache; never downloaded), each scored as GLUE scores it (`metric`), column
for column beside the seed's. GLUE does not reach the smaller scales offline, whose columns are
WordNet stand-ins: two sentence-pair tasks (tasks/gloss_pairs.py: `similarity`, graded like
STS-B and scored by Spearman correlation as STS-B is; `definition`, binary like MRPC / QNLI),
beside two single-sentence tasks (tasks/glosses.py: supersense, part of speech; like CoLA /
SST-2). Each column is a sentence-pair or a single-sentence task (`pair`): the seed's table puts
its gains in the pair columns (STS-B: No Pre-train 0.17, English, Kannada and Artificial (Zipf)
0.76) and none from a non-English corpus in the single-sentence ones (CoLA, SST-2), the claim
paper_table_verdicts.sentence_pair judges by this grouping. "Avg" is the mean over the scale's
columns, as the seed's over its eight.

Fine-tuning: the seed says only "benchmarks also follow the GLUE benchmarks like BERT". BERT's
GLUE recipe (Devlin et al. 2019, §4.1 and A.3) as far as it carries to a small encoder: every
weight fine-tuned from the pretrained encoder, a fresh classifier on [CLS], dropout 0.1, linear
warm-up over the first 10% of steps, a few epochs over the training set; the learning rate is
ours (BERT's 2e-5..5e-5 is for a 110M-parameter model and barely moves a 4-layer one in a few
hundred steps).
"""

from __future__ import annotations

import copy
import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonlab.errors import ConfigError
from reasonlab.studies.artificial.common import FINETUNE, PRETRAIN, SCRATCH
from reasonlab.studies.kit.base import RunSpec, Scale, Study, merge
from reasonlab.tasks import glue
from reasonlab.train.config import TrainConfig


def _read_seed_table() -> tuple[tuple[str, ...], dict[str, tuple[float, ...]]]:
    with Path(__file__).with_name("paper_table.csv").open(newline="") as f:
        header, *rows = csv.reader(f)
    return tuple(header[1:]), {r[0]: tuple(float(v) for v in r[1:]) for r in rows}


SEED_COLUMNS, SEED_TABLE = _read_seed_table()
"""The seed's "Results" table, verbatim (paper_table.csv: its eight GLUE columns, one row per
pretraining corpus). Its Avg column is the mean of the eight: recomputed by `seed_avg`, not
copied, so it carries the second decimal."""

ROWS: dict[str, str] = {
    "No Pre-train": SCRATCH, "Pre-train En": "english-fortunes",
    "Rand. Baseline": "uniform", "Zipf Baseline": "unigram",
    "Amino Acid": "amino", "Java Script": "javascript", "Kannada": "german",
    "Artificial (Uni.)": "nesting-uniform", "Artificial (Zipf)": "nesting",
    "Artificial (5000)": "nesting-5000", "Artificial (500)": "nesting-500",
    "Artificial (50)": "nesting-50", "Artificial (50-s)": "nesting-50s",
}
"""Seed row -> our init (a corpus name, or scratch)."""
GROUPS = (1, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 5)
"""The seed's row groups (its first column), in ROWS order."""

FOLLOWUP_GAIN = {"flat-32": ("Flat-128", 14.5), "shuffle-64-fortunes": ("Shuffle-64", 12.4)}
"""Extra rows: the follow-up's corpus and its GLUE-average gain over its from-scratch 61.6
(docs/papers.md §4), a second reference for the corpora we keep from it."""


@dataclass(frozen=True)
class Column:
    """One downstream task: a column of our half of the seed's table."""

    task: dict[str, Any]
    """Its task config, less what the scale's recipe adds (`words`, the sequence length; the
    GLUE folder)."""
    pair: bool
    """A sentence-pair task; else a single-sentence one (the seed's gains lie in the pairs)."""
    like: str
    """The seed column it is (GLUE) or stands in for (WordNet)."""
    metric: str
    """How it is scored: a key of paper_table_analysis.METRICS."""
    seq_len: str
    """The recipe key of its sequence length."""
    run: dict[str, Any] = field(default_factory=dict)
    """What it changes in the scale's fine-tuning recipe (GLUE: its sizes)."""
    chance: str | None = None
    """Its score without learning where the column knows it (else its metric's, from data)."""

    @property
    def reads_glue(self) -> bool:
        return self.task["name"] == "glue"


WORDNET: dict[str, Column] = {
    "similarity": Column({"name": "gloss_pair", "pair": "similarity"}, True, "STS-B",
                         "spearman", "pair_seq_len"),
    "definition": Column({"name": "gloss_pair", "pair": "definition"}, True, "MRPC / QNLI",
                         "accuracy", "pair_seq_len", chance="0.5 (balanced)"),
    "supersense": Column({"name": "gloss_class", "label": "supersense"}, False, "CoLA / SST-2",
                         "accuracy", "seq_len"),
    "pos": Column({"name": "gloss_class", "label": "pos"}, False, "CoLA / SST-2", "accuracy",
                  "seq_len"),
}
"""The offline stand-ins (smoke, cpu, long): two sentence-pair and two single-sentence tasks
over WordNet."""

FINETUNE_BATCH = 32


def bert_glue(task: str) -> dict[str, Any]:
    """BERT's GLUE fine-tuning (Devlin et al. 2019, §4.1: "a batch size of 32 and fine-tune for
    3 epochs over the data for all GLUE tasks"; the seed: "benchmarks also follow the GLUE
    benchmarks like BERT", "Training and benchmarks") on the task's whole train split, scored on
    its whole validation split (tasks/glue.py SIZES), warm-up over the first 10% of steps;
    evaluated and checkpointed once an epoch."""
    n_train, n_test = glue.SIZES[task]
    epoch = -(-n_train // FINETUNE_BATCH)  # steps per epoch
    steps = 3 * epoch
    return dict(n_train=n_train, n_test=n_test, batch_size=FINETUNE_BATCH, steps=steps,
                eval_every=epoch, ckpt_every=epoch, optim=dict(warmup_steps=round(steps / 10)))


GLUE_METRIC = {"cola": "matthews", "stsb": "spearman", "mrpc": "f1", "qqp": "f1"}
"""GLUE's own metric per task where it is not accuracy (Wang et al. 2019; MNLI: accuracy on
the matched validation split). CoLA: Matthews correlation; STS-B: Spearman (GLUE reports
Pearson / Spearman); MRPC and QQP: F1 of the positive class (GLUE reports F1 / accuracy). The
seed gives one number per column and does not say which: it follows BERT ("Training and
benchmarks"), whose GLUE table gives F1 for QQP and MRPC and Spearman for STS-B, and its MRPC
column reads as F1: Amino Acid (STS-B 0.16, CoLA 0.07: it learned little) and Zipf Baseline
score 0.81, above Pre-train En's 0.77, which is the F1 of always answering "equivalent" on
MRPC's validation split (279 of 408 positive: 2 * 279 / (279 + 408) = 0.812); that answer's
accuracy is 0.684."""
GLUE_TASK = {col: t for t, col in glue.SEED_COLUMN.items()}
"""The seed's column -> its GLUE task."""


def glue_column(col: str) -> Column:
    """The seed's column `col` as its GLUE task: a pair task when GLUE's task reads two texts."""
    t = GLUE_TASK[col]
    return Column({"name": "glue", "task": t}, len(glue.COLUMNS[t][0]) == 2, col,
                  GLUE_METRIC.get(t, "accuracy"), "glue_seq_len", bert_glue(t))


GLUE_COLUMNS: dict[str, Column] = {col: glue_column(col) for col in SEED_COLUMNS}
"""The paper scale's columns: the seed's eight, in its order, each a GLUE task. GLUE's own
grouping: CoLA and SST-2 read one sentence, the other six a pair."""

DOWNSTREAM: dict[Scale, dict[str, Column]] = {"smoke": WORDNET, "cpu": WORDNET, "long": WORDNET,
                                              "paper": GLUE_COLUMNS}
"""The downstream tasks, our half of the table's columns, per scale (not the TASKS registry)."""
COLUMN: dict[str, Column] = {t: c for cols in DOWNSTREAM.values() for t, c in cols.items()}
"""Every scale's columns by name (the names never collide): what a verdict reads a task's
grouping from."""


def downstream(scale: Scale) -> dict[str, Column]:
    return DOWNSTREAM[scale]


def pair_columns(scale: Scale) -> tuple[str, ...]:
    """The scale's sentence-pair columns (paper_table_verdicts.pair_tasks: those of a study's
    scores)."""
    return tuple(t for t, c in DOWNSTREAM[scale].items() if c.pair)


def seed_avg(row: str) -> float:
    return sum(SEED_TABLE[row]) / len(SEED_TABLE[row])


class SeedStudy(Study):
    """Base of the studies of the seed's rows: the natural corpora (English, German,
    JavaScript, amino acids; tasks/natural.py) come from Debian packages."""

    @classmethod
    def missing(cls) -> str | None:
        from reasonlab.tasks.natural import missing_packages

        absent = missing_packages()
        return None if not absent else (f"needs the Debian packages {', '.join(absent)} "
                                        f"(`apt-get install {' '.join(absent)}`, which "
                                        "scripts/setup.sh does)")


_MODEL = dict(d_model=96, n_layers=4, n_heads=4, d_mlp=384, norm_position="pre")
RECIPES: dict[Scale, dict[str, Any]] = {
    "smoke": dict(
        rows=tuple(ROWS), extra=(), words=300,  # every rule runs
        pretrain=dict(model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32), n_train=128,
                      n_test=32, batch_size=16, steps=4, eval_every=2, ckpt_every=4,
                      threads=1, task=dict(seq_len=24, corpus_tokens=5000)),
        finetune=dict(n_train=96, n_test=48, batch_size=16, steps=4, eval_every=2,
                      ckpt_every=4, threads=1), seq_len=16, pair_seq_len=19, eval_pairs=64),
    # A 4-layer d_model 96 encoder (2.25x the follow-up study's non-embedding parameters)
    # over 8000 words, so that Artificial (5000) leaves 3000 embedding rows untrained as the
    # seed's leaves 25k of 30k; per seed, 14 pretraining runs of 600 steps of 64 x 32 tokens
    # (1.7x the follow-up study's compute per corpus); 4 tasks x 15 inits x 3 seeds of 400
    # fine-tuning steps at lr 1e-3 over 2560 examples (5 epochs of batch 32: the seed's largest
    # gains are on GLUE's small sets, STS-B 5.7k, MRPC 3.7k, RTE 2.5k examples). Measured
    # (README): 80 steps at lr 5e-4, one epoch, learn neither pair task from any init; 400 at
    # 1e-3 learn `similarity` from every init. Its time: pretraining.py.
    "cpu": dict(
        rows=tuple(ROWS), extra=tuple(FOLLOWUP_GAIN), words=8000,
        pretrain=dict(model=_MODEL, n_train=38_400, n_test=500, batch_size=64, steps=600,
                      eval_every=200, ckpt_every=200, threads=1,
                      optim=dict(lr=1e-3, warmup_steps=60),
                      task=dict(seq_len=32, corpus_tokens=600_000)),
        finetune=dict(model=dict(dropout=0.1), n_train=2560, n_test=1000, batch_size=32,
                      steps=400, eval_every=100, ckpt_every=400, threads=1,
                      optim=dict(lr=1e-3, warmup_steps=40)),
        seq_len=32, pair_seq_len=31, eval_pairs=1000),
    # The seed's encoder size is RoBERTa-base ("12 layers, hidden dimension 768, 12 attention
    # heads, ~110M parameters"), its baselines' data "~80MB", sequences 90-120 tokens; a GPU.
    "paper": dict(
        rows=tuple(ROWS), extra=tuple(FOLLOWUP_GAIN), words=29_995,
        pretrain=dict(model=dict(d_model=768, n_layers=12, n_heads=12, d_mlp=3072,
                                 dropout=0.1),
                      n_train=3_000_000, n_test=5000, batch_size=256, steps=100_000,
                      eval_every=5000, ckpt_every=5000, optim=dict(lr=1e-4, warmup_steps=5000),
                      task=dict(seq_len=128, corpus_tokens=100_000_000)),
        # GLUE's columns (GLUE_COLUMNS): BERT's fine-tuning at lr 2e-5 (the lowest of BERT's
        # four), each task's sizes and steps its own (bert_glue: 3 epochs of its train split,
        # 10% warm-up), sequences of 128 (BERT's for GLUE, the pretraining's windows), scored
        # on each run's test split (eval_pairs None: its whole validation split)
        finetune=dict(model=dict(dropout=0.1), batch_size=FINETUNE_BATCH, optim=dict(lr=2e-5)),
        glue_seq_len=128, eval_pairs=None),
}

# `long`: the cpu recipe pretrained 13x longer. Measured (README, "The pretraining horizon"):
# the cpu encoder learns the stack grammar between about 2,000 and 8,000 steps (nesting-uniform's
# held-out masked accuracy 0.005 at 1k, 0.12 at 4k, 0.33 at 8k), where the cpu scale's 600
# steps leave it at chance; English is at 0.24 by 1k and 0.39 by 8k. Fine-tuning as at cpu.
# 8000 steps (2.3 h with fine-tuning, measured) rather than 12,000 (about 3.5 h); with its
# cosine ending at 8k, nesting-uniform reaches 0.21 (README, "The `long` scale"). The peak
# lr stays the cpu scale's 1e-3 for every corpus, as the seed's one recipe: 3e-4 learns the
# uniform-push grammar further (0.29) and English less far (0.38 against 0.40), and a wider
# encoder costs more a step than it saves in steps on a CPU (README, "Encoder width").
RECIPES["long"] = merge(RECIPES["cpu"], {"pretrain": dict(
    n_train=512_000, steps=8000, eval_every=1000, ckpt_every=1000,
    optim=dict(warmup_steps=800))})


def inits(scale: Scale) -> list[str]:
    """Our inits at this scale: the seed's rows' (scratch first), then the extra rows."""
    s = RECIPES[scale]
    return [ROWS[r] for r in s["rows"]] + list(s["extra"])


def corpora(scale: Scale) -> list[str]:
    return [i for i in inits(scale) if i != SCRATCH]


def pretrain_recipe(scale: Scale, corpus: str) -> dict[str, Any]:
    s = copy.deepcopy(RECIPES[scale])
    p = s["pretrain"]
    return {**p, "task": {"name": "mlm", "corpus": corpus, "words": s["words"], **p["task"]}}


def tasks(scale: Scale, glue_path: str | None = None) -> dict[str, dict[str, Any]]:
    """The scale's downstream task configs by column; `glue_path` the GLUE folder (None: the
    Hugging Face cache)."""
    s = RECIPES[scale]
    out = {}
    for t, c in DOWNSTREAM[scale].items():
        out[t] = {**c.task, "words": s["words"], "seq_len": s[c.seq_len]}
        if c.reads_glue and glue_path is not None:
            out[t]["path"] = glue_path
    return out


def runs(scale: Scale, seeds: int, glue_path: str | None = None) -> list[RunSpec]:
    """Per seed s: every corpus's pretraining run with seed s (factors phase=pretrain, corpus),
    then every task x init fine-tuned with seed s, a pretrained init from its corpus's seed-s
    run (phase=finetune, task, init).

    The replication unit is the pipeline's seed (`PIPELINE_UNIT`): two seeds of a pretrained
    arm differ in their pretraining as in their fine-tuning, so the spread over seeds is the
    spread of what the seed's table compares. One pretraining per corpus shared by every
    fine-tuning seed made fine-tuning repetitions of one draw pass for replication: at cpu
    scale, where nothing transfers, the 12 corpora's averages spread 3x as much as the
    fine-tuning seeds said. Seed 0's runs keep their ids (seed 0 is the config default).

    `glue_path`: the GLUE folder of the scale's GLUE columns (the study's `glue=` option); a
    scale without them takes none."""
    if glue_path is not None and not any(c.reads_glue for c in DOWNSTREAM[scale].values()):
        raise ConfigError(f"glue={glue_path}: the {scale} scale's downstream tasks are "
                          "WordNet's; GLUE is read at paper scale only")
    pre = {c: pretrain_recipe(scale, c) for c in corpora(scale)}
    specs = [RunSpec(f"pretrain {c}", seed, TrainConfig.build({**p, "seed": seed}),
                     {"phase": PRETRAIN, "corpus": c})
             for seed in range(seeds) for c, p in pre.items()]
    s = RECIPES[scale]
    model = {k: v for k, v in s["pretrain"]["model"].items() if k != "dropout"}
    for t, task in tasks(scale, glue_path).items():
        base = merge({"model": {}}, s["finetune"], DOWNSTREAM[scale][t].run, {"task": task})
        for i in inits(scale):
            specs += [RunSpec(f"{t} | {i}", seed, TrainConfig.build(merge(
                base, {"model": model} if i == SCRATCH else
                {"init_from": {**pre[i], "seed": seed}}, {"seed": seed})),
                {"phase": FINETUNE, "task": t, "init": i, "arm": f"{t} | {i}"})
                for seed in range(seeds)]
    return specs
