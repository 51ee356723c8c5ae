"""Calibration cases of the artificial family's rules (kit/calibration.py): each rule drawn under
its null -- the claim's effect absent, at its least favourable setting (a difference AT the
equality or no-gain margin; every other part of an all-of claim true) -- and under the seed's
own effect, at 3 units per arm (both studies' cpu scale), with the per-unit noise of
artificial/noise.toml.

The seed study's draws build whole `Scores` (task -> init -> units): each init's mean per task
is a cpu-scale base (scratch's cpu scores) plus the init's gain, and each unit adds independent
noise per task, the tasks' SDs scaled so that a corpus's average has the `corpus-average` SD.
The seed's own effects are its table's (_support/paper_table.csv): each init's gain over No
Pre-train in the Avg column, or on its sentence-pair and single-sentence columns separately.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from reasonlab.studies.artificial._support import paper_table_verdicts as sv
from reasonlab.studies.artificial import verdicts as lv
from reasonlab.studies.artificial._support.paper_table import (ROWS, SEED_COLUMNS, SEED_TABLE,
                                                              downstream, pair_columns)
from reasonlab.studies.artificial.common import SCRATCH
from reasonlab.studies.kit.calibration import Case, Exempt, noise
from reasonlab.studies.kit.core import Claim

CLAIM = Claim("c", "a calibration claim", "simulation")
N = 3
"""Units per arm at cpu scale (and long): both studies' default_seeds."""
FAMILY = "artificial"

BASE = {"similarity": 0.272, "definition": 0.506, "supersense": 0.468, "pos": 0.887}
"""The scratch arm's cpu-scale scores (README, "Measured at cpu scale"): every init's base."""
TASKS = tuple(downstream("cpu"))
"""The cpu scale's downstream tasks, whose noise noise.toml holds; PAIRS its sentence-pair ones."""
PAIRS = pair_columns("cpu")


def _task_sd() -> dict[str, float]:
    """Per-task per-unit SDs, scaled so that the average over the four tasks has the
    corpus-average SD (tasks drawn independently)."""
    raw = {t: noise(FAMILY, t) for t in TASKS}
    scale = noise(FAMILY, "corpus-average") * len(raw) / np.sqrt(sum(v * v for v in raw.values()))
    return {t: v * scale for t, v in raw.items()}


Gain = float | tuple[float, float]
"""An init's gain over scratch: on every task, or (on the pair tasks, on the single ones)."""


def scores(rng: np.random.Generator, gains: Mapping[str, Gain], n: int = N,
           sd_all: float | None = None) -> sv.Scores:
    """One simulated study: every init of the seed's rows (gain 0 unless given), n units, each
    task's noise its noise.toml SD (scaled, `_task_sd`) or `sd_all`."""
    sd = _task_sd() if sd_all is None else dict.fromkeys(TASKS, sd_all)
    out: sv.Scores = {t: {} for t in TASKS}
    for init in (SCRATCH, *sv.SEED_INITS):
        g = gains.get(init, 0.0)
        pair, single = g if isinstance(g, tuple) else (g, g)
        for t in TASKS:
            mean = BASE[t] + (pair if t in PAIRS else single)
            out[t][init] = rng.normal(mean, sd[t], n)
    return out


def _seed_gains(split: bool = False) -> dict[str, Gain]:
    """The seed's gain over No Pre-train per init: on its Avg, or (pair columns, single
    columns) with GLUE's grouping (the paper scale's columns: CoLA and SST-2 single)."""
    pairs = pair_columns("paper")
    pair = [i for i, c in enumerate(SEED_COLUMNS) if c in pairs]
    single = [i for i, c in enumerate(SEED_COLUMNS) if c not in pairs]
    base = np.asarray(SEED_TABLE["No Pre-train"])
    out: dict[str, Gain] = {}
    for row, init in ROWS.items():
        v = np.asarray(SEED_TABLE[row]) - base
        out[init] = ((float(v[pair].mean()), float(v[single].mean())) if split
                     else float(v.mean()))
    return out


SEED = _seed_gains()
SEED_SPLIT = _seed_gains(split=True)
E, M = sv.EQUAL_MARGIN, sv.MIN_GAIN


def _claim(rule, gains: Mapping[str, Gain]):
    return lambda rng: rule(CLAIM, scores(rng, gains))


def _better(gains: Mapping[str, Gain]):
    return lambda rng: sv.better(CLAIM, scores(rng, gains), ["nesting"], ["uniform"])


def _equal(gains: Mapping[str, Gain]):
    return lambda rng: sv.equal(CLAIM, scores(rng, gains), "nesting", "uniform")


# -- artificial-pretraining-lego -------------------------------------------------------------

LAYERS, HEADS = 4, 4
"""The lego study's cpu encoder: 4 layers of 4 heads."""
RANDOM_HEAD = 0.046
"""A random-init encoder's association score, every head (noise.toml, association-head)."""


def _heads(rng: np.random.Generator, best: float, control: float, sd: float
           ) -> dict[str, torch.Tensor]:
    """One unit's association controls: every head at the random-init level, one head at
    `best` and its clause-permuted score at `control`, each with per-unit noise `sd`; the
    same-slot head at 0 (a random-init encoder's, measured)."""
    v = RANDOM_HEAD + rng.normal(0, sd, (LAYERS, HEADS))
    p = RANDOM_HEAD + rng.normal(0, sd, (LAYERS, HEADS))
    v[2, 1], p[2, 1] = best + rng.normal(0, sd), control + rng.normal(0, sd)
    return {"variables": torch.as_tensor(v), "variables, permuted": torch.as_tensor(p),
            "positional head": torch.tensor(0.0)}


def _association(best: float, control: float):
    sd = noise(FAMILY, "association-head")
    return lambda rng: lv.association_verdict(
        CLAIM, [_heads(rng, best, control, sd) for _ in range(N)],
        [_heads(rng, RANDOM_HEAD, RANDOM_HEAD, 0.0002) for _ in range(N)])


STRUCT = ("flat-32", "nesting")


def _speed(gain: float):
    """Per corpus and unit, a learning curve whose mean supervised accuracy is 0.63 (+ gain for
    the structured corpora) + noise."""
    sd = noise(FAMILY, "lego-auc")

    def draw(rng: np.random.Generator):
        curves = {}
        for c in (*STRUCT, "uniform", "unigram", "bigram", "scratch"):
            level = 0.63 + (gain if c in STRUCT else 0.0) + rng.normal(0, sd, N)
            curves[c] = [[{"acc_supervised": float(x) + d} for d in (-0.1, 0.0, 0.1)]
                         for x in level]
        return lv.speed_verdict(CLAIM, curves, STRUCT)

    return draw


# English transfers (+0.18, the seed's) wherever a rule needs it as its precondition
EN = {sv.ENGLISH: SEED[sv.ENGLISH]}
HELPERS_EQUAL = {i: (0.10, 0.10) for i in sv.HELPERS}

CASES = [
    Case(sv.better, _better({}), _better({"nesting": SEED["nesting"] - SEED["uniform"]}), N,
         "corpus-average", note="null: equal averages; alternative: the seed's nesting - uniform"),
    Case(sv.equal, _equal({"nesting": E}), _equal({}), N, "corpus-average",
         note="null: a difference at the margin; alternative: none"),
    Case(sv.random_beats_scratch, _claim(sv.random_beats_scratch, {}),
         _claim(sv.random_beats_scratch, SEED), N, "corpus-average",
         note="null: uniform at scratch; alternative: the seed's table"),
    Case(sv.distribution_random,
         _claim(sv.distribution_random, {"uniform": 0.05, "unigram": 0.05 + E}),
         _claim(sv.distribution_random, SEED), N, "corpus-average",
         note="null: both move, unigram - uniform at the margin"),
    Case(sv.distribution_random, _claim(sv.distribution_random, {}), None, N, "corpus-average",
         "nothing transfers", note="null: nothing moves (precondition)"),
    Case(sv.distribution_stack,
         _claim(sv.distribution_stack, {"nesting-uniform": 0.10, "nesting": 0.10 + E}),
         _claim(sv.distribution_stack, SEED), N, "corpus-average",
         note="null: both move, the two pushes differ by the margin"),
    Case(sv.structure_beats_random,
         _claim(sv.structure_beats_random, {i: 0.05 for i in
                                            ("nesting", "nesting-uniform", "uniform", "unigram")}),
         _claim(sv.structure_beats_random, SEED), N, "corpus-average",
         note="null: all four corpora gain alike"),
    Case(sv.vocabulary_size,
         _claim(sv.vocabulary_size, {"nesting-5000": 0.06, "nesting-500": 0.06}),
         _claim(sv.vocabulary_size, SEED), N, "corpus-average", "5000 = 500",
         note="null: 5000 = 500, 500 > 50 by 6 points"),
    Case(sv.vocabulary_size,
         _claim(sv.vocabulary_size, {"nesting-5000": 0.06}), None, N, "corpus-average",
         "500 = 50", note="null: 500 = 50, 5000 > 500 by 6 points"),
    Case(sv.substitution, _claim(sv.substitution, {"nesting-5000": SEED["nesting-5000"]}),
         _claim(sv.substitution, SEED), N, "corpus-average",
         note="null: 50-s = 50, with the seed's 5000-vs-50 loss"),
    Case(sv.other_language,
         _claim(sv.other_language, {"german": 0.10, "nesting": 0.10 + E}),
         _claim(sv.other_language, SEED), N, "corpus-average",
         note="null: both move, German - nesting at the margin"),
    Case(sv.non_language,
         _claim(sv.non_language, {**EN, "uniform": 0.05, "unigram": 0.05, "amino": 0.05 + M,
                                  "javascript": 0.0}),
         _claim(sv.non_language, SEED), N, "corpus-average",
         note="null: English transfers, amino better than random by the margin"),
    Case(sv.english_best,
         _claim(sv.english_best, {**SEED, sv.ENGLISH: SEED["german"]}),
         _claim(sv.english_best, SEED), N, "corpus-average", "English = German",
         note="null: English at the seed's second best (German), the rest the seed's"),
    Case(sv.english_best,
         _claim(sv.english_best, {i: SEED[sv.ENGLISH] for i in sv.SEED_INITS}), None, N,
         "corpus-average", "all equal",
         note="null: every corpus at English's level: the best of 11 noisy others"),
    Case(sv.sentence_pair,
         _claim(sv.sentence_pair, HELPERS_EQUAL), _claim(sv.sentence_pair, SEED_SPLIT), N,
         "corpus-average", "gains equal",
         note="null: helpers gain alike on pair and single tasks; alternative: the seed's"),
    Case(sv.sentence_pair,
         _claim(sv.sentence_pair, {**{i: (0.18, 0.0) for i in sv.HELPERS},
                                   "nesting-500": (0.05, E)}), None, N, "corpus-average",
         "a corpus helps single",
         note="null: gains lie in pair tasks, nesting-500 helps single tasks by the margin"),
    Case(lv.association_verdict, _association(RANDOM_HEAD, RANDOM_HEAD),
         _association(0.45, 0.10), N, "association-head",
         note="null: nesting's heads as random init's; alternative: LEGO-like 0.45 head"),
    Case(lv.association_verdict, _association(0.45, 0.45), None, N, "association-head",
         "positional", note="null: a strong head its clause-permuted control matches"),
    Case(lv.speed_verdict, _speed(0.0), _speed(0.10), N, "lego-auc",
         note="null: every corpus alike; alternative: structured +0.10"),
    Exempt(sv.moved, "combines: a precondition that only turns a verdict inconclusive "
           "(calibrated through the three equality claims)",
           through=(sv.distribution_random, sv.distribution_stack, sv.other_language)),
    Exempt(sv.gated, "combines: `requires` unless the verdict already lacks units", parts=()),
    Exempt(sv.every, "combines: all_of (intersection-union) carrying the deciding part's effect",
           parts=()),
    Exempt(sv.judge, "dispatches to RULES (each calibrated here) or reads inconclusive for "
           "rows not run", parts=tuple(sv.RULES.values())),
]
