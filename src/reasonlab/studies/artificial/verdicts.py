"""artificial-pretraining-lego's verdict rules (Chiang & Lee's corpora, docs/papers.md §4, with
LEGO §4.2 for the heads; the seed table's rules are in _support/paper_table_verdicts.py),
unit-tested on noisy numbers in tests/unit/studies/artificial/test_verdicts.py and calibrated
under their nulls in artificial/calibration.py. Thresholds are constants fixed before any run.

A unit is the pipeline's seed (common.PIPELINE_UNIT): unit s of a corpus is its seed-s
pretraining run and the LEGO run fine-tuned from it with seed s; the random-init arm's unit is
its seed. Head scores are read per unit, on the unit's encoder before fine-tuning, and every
comparison is decided from an interval over units (kit/stats.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import top_heads
from reasonlab.report import pm
from reasonlab.studies.artificial.common import STATISTICS
from reasonlab.studies.artificial._support.paper_table_verdicts import every
from reasonlab.studies.kit import stats
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import MIN_ACCURACY_GAIN, decided
from reasonlab.studies.lego.verdicts import HEAD_MARGIN

Scores = dict[str, torch.Tensor]


# -- artificial-pretraining-lego: LEGO's heads and learning speed ----------------------------


@dataclass(frozen=True)
class Association:
    """One encoder's best head by variable-query association, with its positional controls:
    the same head on clause-permuted sentences and the same-slot head."""

    layer: int
    head: int
    score: float
    permuted: float
    positional: float

    @property
    def name(self) -> str:
        return f"L{self.layer}H{self.head}"

    @property
    def control(self) -> float:
        """The larger control: what the head must beat to count as reading content."""
        return max(self.permuted, self.positional)


def association(controls: Scores) -> Association:
    (l, h, v), *_ = top_heads(controls["variables"], 1)
    return Association(l, h, float(v), float(controls["variables, permuted"][l, h]),
                       float(controls["positional head"]))


def association_verdict(claim: Claim, nesting: Sequence[Scores], random: Sequence[Scores]
                        ) -> Verdict:
    """Nesting pretraining yields association heads (LEGO §4.2.1's test, as lego-pretraining
    reads it), per unit on the encoder before fine-tuning, both parts by HEAD_MARGIN:

    1. the nesting encoder's best head beats the random-init encoder's best head: the
       difference of their means over units (Welch; each arm picks its own best head, so the
       max over heads is taken on both sides alike);
    2. it beats its own positional control (the same head on clause-permuted sentences, the
       same-slot head): the mean over units of head - control (paired: one model's two
       numbers).

    Each part: lower bound > 0 and the estimate >= HEAD_MARGIN (stats.better_by); the claim
    needs both (intersection-union)."""
    heads = [association(c) for c in nesting]
    best = np.asarray([a.score for a in heads])
    control = np.asarray([a.control for a in heads])
    rand = np.asarray([association(c).score for c in random])
    names = ", ".join(a.name for a in heads)
    over_random = decided(claim, stats.better_by(
        stats.difference(best, rand, "best head nesting - random init"), HEAD_MARGIN),
        f"best association head (variable queries) per unit: nesting {pm(best, 2)} ({names}; "
        f"n = {len(best)}), random init {pm(rand, 2)} (n = {len(rand)})")
    over_control = decided(claim, stats.better_by(
        stats.paired(best, control, "best head - its positional control"), HEAD_MARGIN),
        f"nesting's best head {pm(best, 2)} against its positional control {pm(control, 2)} "
        f"(n = {len(best)})")
    return every(claim, {"over random init": over_random,
                         "over its positional control": over_control})


def learning_speed(curve: list[dict[str, Any]]) -> float:
    """Mean supervised accuracy over the evaluations (area under the learning curve): higher
    = learned sooner."""
    return float(np.mean([m["acc_supervised"] for m in curve]))


def speed_verdict(claim: Claim, curves: dict[str, list[list[dict[str, Any]]]],
                  struct: tuple[str, ...]) -> Verdict:
    """Structured corpora learn LEGO faster than token statistics: the mean over the
    structured corpora of their units' area under the learning curve, minus the same mean over
    the token-statistics corpora (each corpus's units one independent group: stats.contrast),
    by MIN_ACCURACY_GAIN (lower bound > 0 and the estimate >= it). Aggregation: the mean over
    each group's corpora, each corpus shown."""
    stats_ = tuple(c for c in STATISTICS if c in curves)
    auc = {c: np.asarray([learning_speed(run) for run in curves[c]]) for c in (*struct, *stats_)}
    weights = {c: 1 / len(struct) for c in struct} | {c: -1 / len(stats_) for c in stats_}
    est = stats.contrast(auc, weights, f"gain {'+'.join(struct)} - {'+'.join(stats_)}")
    return decided(claim, stats.better_by(est, MIN_ACCURACY_GAIN),
                   "LEGO mean supervised accuracy over training (area under the curve): "
                   + ", ".join(f"{c} {pm(v)} (n = {len(v)})" for c, v in auc.items()))
