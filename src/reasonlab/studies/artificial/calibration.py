"""Calibration cases of the artificial family's rules (kit/calibration.py), all as data (`Sim`,
kit/calibration_engine.py): each arm's per-unit centre under the rule's null -- the claim's
effect absent, at its least favourable setting (a difference AT the equality or no-gain margin;
every other part of an all-of claim true) -- and under the seed's own effect, the noise.toml
entry, and the study whose units (its default seeds at every scale) the one engine draws them
at, normal, fit-or-not and skewed, and over the looks of --until-decided.

The seed study's arms are (task, init) pairs, "task | init": each init's centre on a task is a
cpu-scale base (scratch's cpu scores) plus the init's gain, and each unit's noise is drawn per
task, the tasks' SDs (`spread`, relative to the `corpus-average` entry) scaled so that a
corpus's average has the `corpus-average` SD; `scores_of` hands them to the rules as `Scores`.
The seed's own effects are its table's (_support/paper_table.csv): each init's gain over No
Pre-train in the Avg column, or on its sentence-pair and single-sentence columns separately.
The lego study's arms are its per-unit head scores (one arm per head slot) and per-unit areas
under the LEGO learning curve.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import torch

from reasonlab.studies.artificial._support import paper_table_verdicts as sv
from reasonlab.studies.artificial import verdicts as lv
from reasonlab.studies.artificial._support.paper_table import (ROWS, SEED_COLUMNS, SEED_TABLE,
                                                              downstream, pair_columns)
from reasonlab.studies.artificial.common import SCRATCH
from reasonlab.studies.kit.calibration import Exempt, noise
from reasonlab.studies.kit.calibration_engine import Arms, Sim
from reasonlab.studies.kit.core import Claim, Verdict

CLAIM = Claim("c", "a calibration claim", "simulation")
N = 3
"""Units per arm at cpu scale (and long): both studies' default_seeds."""
FAMILY = "artificial"
TABLE_STUDY, LEGO_STUDY = "artificial-pretraining", "artificial-pretraining-lego"

BASE = {"similarity": 0.272, "definition": 0.506, "supersense": 0.468, "pos": 0.887}
"""The scratch arm's cpu-scale scores (README, "Measured at cpu scale"): every init's base."""
TASKS = tuple(downstream("cpu"))
"""The cpu scale's downstream tasks, whose noise noise.toml holds; PAIRS its sentence-pair ones."""
PAIRS = pair_columns("cpu")
INITS = (SCRATCH, *sv.SEED_INITS)
"""Every init of the seed's rows, scratch first; a case draws those its rule reads."""


def _task_sd() -> dict[str, float]:
    """Per-task per-unit SDs, scaled so that the average over the four tasks has the
    corpus-average SD (tasks drawn independently)."""
    raw = {t: noise(FAMILY, t) for t in TASKS}
    scale = noise(FAMILY, sv.AVERAGE_NOISE) * len(raw) / np.sqrt(sum(v * v for v in raw.values()))
    return {t: v * scale for t, v in raw.items()}


Gain = float | tuple[float, float]
"""An init's gain over scratch: on every task, or (on the pair tasks, on the single ones)."""


def scores(rng: np.random.Generator, gains: Mapping[str, Gain], n: int = N,
           sd_all: float | None = None) -> sv.Scores:
    """One simulated study, normal noise (the verdicts' unit tests draw with it): every init of
    the seed's rows (gain 0 unless given), n units, each task's noise its noise.toml SD
    (scaled, `_task_sd`) or `sd_all`."""
    sd = _task_sd() if sd_all is None else dict.fromkeys(TASKS, sd_all)
    out: sv.Scores = {t: {} for t in TASKS}
    for init in INITS:
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


# -- artificial-pretraining: the seed's table ------------------------------------------------


def centres(gains: Mapping[str, Gain], inits: tuple[str, ...] = INITS) -> dict[str, float]:
    """"task | init" -> its per-unit centre, for each of `inits` (in INITS' order): scratch's
    cpu score on the task plus the init's gain (0 unless given)."""
    out = {}
    for init in (i for i in INITS if i in inits):
        g = gains.get(init, 0.0)
        pair, single = g if isinstance(g, tuple) else (g, g)
        for t in TASKS:
            out[f"{t} | {init}"] = BASE[t] + (pair if t in PAIRS else single)
    return out


SPREAD = {f"{t} | {i}": sd / noise(FAMILY, sv.AVERAGE_NOISE)
          for t, sd in _task_sd().items() for i in INITS}
"""Each task's per-unit SD (`_task_sd`) relative to the corpus-average entry the Sims name."""


def scores_of(x: Arms) -> sv.Scores:
    """"task | init" -> units  ->  task -> init -> units (the rules' `Scores`)."""
    out: sv.Scores = {t: {} for t in TASKS}
    for key, units in x.items():
        t, init = key.split(" | ")
        out[t][init] = units
    return out


CLAIM_KEY = {rule: key for key, rule in sv.RULES.items()}


def table(rule: Callable[..., Verdict], null: Mapping[str, Gain],
          alternative: Mapping[str, Gain] | None, call: Callable[[Arms], Verdict] | None = None,
          inits: tuple[str, ...] | None = None, **kw) -> Sim:
    """A seed-table rule's Sim: the inits it reads (`inits`, else its claim's sv.NEEDS: English
    best and the sentence-pair claim read every row) at scratch's base plus their gains, under
    the null and the alternative, drawn with each task's noise at artificial-pretraining's
    units."""
    inits = inits or sv.NEEDS[CLAIM_KEY[rule]]
    return Sim(rule, call or (lambda x: rule(CLAIM, scores_of(x))), centres(null, inits),
               None if alternative is None else centres(alternative, inits), sv.AVERAGE_NOISE,
               TABLE_STUDY, spread=SPREAD, **kw)


def better_of(x: Arms) -> Verdict:
    return sv.better(CLAIM, scores_of(x), ["nesting"], ["uniform"])


def equal_of(x: Arms) -> Verdict:
    return sv.equal(CLAIM, scores_of(x), "nesting", "uniform")


# -- artificial-pretraining-lego -------------------------------------------------------------

LAYERS, HEADS = 4, 4
"""The lego study's cpu encoder: 4 layers of 4 heads."""
SLOTS = tuple(f"L{l}H{h}" for l in range(LAYERS) for h in range(HEADS))
BEST = "L2H1"
"""The slot of the nesting encoder's strong head."""
RANDOM_HEAD = 0.046
"""A random-init encoder's association score, every head (noise.toml, association-head)."""
RANDOM_INIT_SD = 0.0002
"""The random-init encoders' own per-unit SD of a head's score (noise.toml, association-head:
they spread 0.0001)."""
ENCODERS = ("nesting", "nesting, permuted", "random init")


def heads(best: float, control: float) -> dict[str, float]:
    """"encoder slot" -> centre: every head at the random-init level, the nesting encoder's
    BEST head at `best` and its clause-permuted score at `control`."""
    out = {f"{e} {s}": RANDOM_HEAD for e in ENCODERS for s in SLOTS}
    out[f"nesting {BEST}"], out[f"nesting, permuted {BEST}"] = best, control
    return out


HEAD_SPREAD = {f"random init {s}": RANDOM_INIT_SD / noise(FAMILY, "association-head")
               for s in SLOTS}


def association_of(x: Arms) -> Verdict:
    """association_verdict on each unit's drawn head matrices; the same-slot head at 0 (a
    random-init encoder's, measured)."""
    n = len(x[f"nesting {BEST}"])

    def matrices(encoder: str) -> torch.Tensor:
        return torch.as_tensor(np.stack([x[f"{encoder} {s}"] for s in SLOTS], axis=1)
                               ).reshape(n, LAYERS, HEADS)

    v, p, r = (matrices(e) for e in ENCODERS)
    zero = torch.tensor(0.0)
    return lv.association_verdict(
        CLAIM, [{"variables": v[u], "variables, permuted": p[u], "positional head": zero}
                for u in range(n)],
        [{"variables": r[u], "variables, permuted": r[u], "positional head": zero}
         for u in range(n)])


STRUCT = ("flat-32", "nesting")
CORPORA = (*STRUCT, "uniform", "unigram", "bigram", "scratch")


def speeds(gain: float) -> dict[str, float]:
    """Per corpus, the mean supervised accuracy over a unit's LEGO learning curve: 0.63, + gain
    for the structured corpora."""
    return {c: 0.63 + (gain if c in STRUCT else 0.0) for c in CORPORA}


def speed_of(x: Arms) -> Verdict:
    """speed_verdict on learning curves whose mean is each unit's drawn value (evaluations at
    it -0.1, +0, +0.1)."""
    return lv.speed_verdict(CLAIM, {c: [[{"acc_supervised": float(a) + d} for d in (-0.1, 0.0, 0.1)]
                                        for a in units] for c, units in x.items()}, STRUCT)


# English transfers (+0.18, the seed's) wherever a rule needs it as its precondition
EN = {sv.ENGLISH: SEED[sv.ENGLISH]}
HELPERS_EQUAL = {i: (0.10, 0.10) for i in sv.HELPERS}

CASES = [
    table(sv.better, {}, {"nesting": SEED["nesting"] - SEED["uniform"]}, better_of,
          inits=("nesting", "uniform"),
          note="null: equal averages; alternative: the seed's nesting - uniform"),
    table(sv.equal, {"nesting": E}, {}, equal_of, ("nesting", "uniform"), decides_at=7,
          note="null: a difference at the margin; alternative: none (power 0.12 at 3 units)"),
    table(sv.random_beats_scratch, {}, SEED,
          note="null: uniform at scratch; alternative: the seed's table"),
    table(sv.distribution_random, {"uniform": 0.05, "unigram": 0.05 + E}, SEED, decides_at=10,
          note="null: both move, unigram - uniform at the margin; alternative: the seed's "
          "(power 0.03 at 3 units: the interval at the measured noise)"),
    table(sv.distribution_random, {}, SEED, decides_at=10, label="nothing transfers",
          note="null: nothing moves (precondition: always inconclusive); alternative: the "
          "seed's, as above"),
    table(sv.distribution_stack, {"nesting-uniform": 0.10, "nesting": 0.10 + E}, SEED,
          decides_at=7, note="null: both move, the two pushes differ by the margin; "
          "alternative: the seed's (power 0.15 at 3 units)"),
    table(sv.structure_beats_random,
          {i: 0.05 for i in ("nesting", "nesting-uniform", "uniform", "unigram")}, SEED,
          note="null: all four corpora gain alike"),
    table(sv.vocabulary_size, {"nesting-5000": 0.06, "nesting-500": 0.06}, SEED,
          label="5000 = 500", note="null: 5000 = 500, 500 > 50 by 6 points"),
    table(sv.vocabulary_size, {"nesting-5000": 0.06}, None, label="500 = 50",
          note="null: 500 = 50, 5000 > 500 by 6 points"),
    table(sv.substitution, {"nesting-5000": SEED["nesting-5000"]}, SEED,
          note="null: 50-s = 50, with the seed's 5000-vs-50 loss"),
    table(sv.other_language, {"german": 0.10, "nesting": 0.10 + E}, SEED, decides_at=10,
          note="null: both move, German - nesting at the margin; alternative: the seed's "
          "(power 0.10 at 3 units)"),
    table(sv.non_language, {**EN, "uniform": 0.05, "unigram": 0.05, "amino": 0.05 + M,
                            "javascript": 0.0}, SEED, side=-1.0,
          note="null: English transfers, amino better than random by the margin"),
    table(sv.english_best, {**SEED, sv.ENGLISH: SEED["german"]}, SEED, label="English = German",
          note="null: English at the seed's second best (German), the rest the seed's"),
    table(sv.english_best, {i: SEED[sv.ENGLISH] for i in sv.SEED_INITS}, None,
          label="all equal",
          note="null: every corpus at English's level: the best of 11 noisy others"),
    table(sv.sentence_pair, HELPERS_EQUAL, SEED_SPLIT, decides_at=5, label="gains equal",
          note="null: helpers gain alike on pair and single tasks; alternative: the seed's "
          "(power 0.24 at 3 units)"),
    table(sv.sentence_pair, {**{i: (0.18, 0.0) for i in sv.HELPERS}, "nesting-500": (0.05, E)},
          None, side=-1.0, label="a corpus helps single",
          note="null: gains lie in pair tasks, nesting-500 helps single tasks by the margin"),
    Sim(lv.association_verdict, association_of, heads(RANDOM_HEAD, RANDOM_HEAD),
        heads(0.45, 0.10), "association-head", LEGO_STUDY, spread=HEAD_SPREAD,
        note="null: nesting's heads as random init's; alternative: LEGO-like 0.45 head"),
    Sim(lv.association_verdict, association_of, heads(0.45, 0.45), None, "association-head",
        LEGO_STUDY, spread=HEAD_SPREAD, label="positional",
        note="null: a strong head its clause-permuted control matches"),
    Sim(lv.speed_verdict, speed_of, speeds(0.0), speeds(0.10), "lego-auc", LEGO_STUDY,
        clip=(0.0, 1.0), note="null: every corpus alike; alternative: structured +0.10"),
    Exempt(sv.moved, "combines: a precondition that only turns a verdict inconclusive "
           "(calibrated through the three equality claims)",
           through=(sv.distribution_random, sv.distribution_stack, sv.other_language)),
    Exempt(sv.gated, "combines: `requires` unless the verdict already lacks units", parts=()),
    Exempt(sv.every, "combines: all_of (intersection-union) carrying the deciding part's effect",
           parts=()),
    Exempt(sv.judge, "dispatches to RULES (each calibrated here) or reads inconclusive for "
           "rows not run", parts=tuple(sv.RULES.values())),
]
