"""The artificial-pretraining studies' verdict rules (Chiang & Lee; docs/papers.md §4, with LEGO
§4.2 for the heads), unit-tested on hand-made numbers in
tests/unit/studies/artificial/test_verdicts.py. Thresholds are constants fixed before any run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import top_heads
from reasonlab.studies.artificial.common import (MIN_TRANSFER, SCRATCH, STATISTICS,
                                                 english_mean, group_mean)
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import (MIN_ACCURACY_GAIN, gain_verdict, no_gain_verdict,
                                            requires, verdict)
from reasonlab.studies.lego.verdicts import HEAD_MARGIN

Scores = dict[str, torch.Tensor]


# -- artificial-pretraining: transfer to the English tasks -----------------------------------
def english_helps(v: Verdict, acc: dict[str, dict[str, np.ndarray]]) -> Verdict:
    """A comparison of transfer tests nothing when pretraining on English itself does not beat
    scratch by MIN_TRANSFER (the pretraining is too short to carry anything)."""
    gain = float(english_mean(acc, "english").mean() - english_mean(acc, SCRATCH).mean())
    return requires(v, gain > MIN_TRANSFER, f"English pretraining itself gains {gain:+.3f} over "
                    f"scratch (needs > {MIN_TRANSFER}): nothing transfers at this scale")


def structure_verdict(claim: Claim, acc: dict[str, dict[str, np.ndarray]],
                      struct: tuple[str, ...]) -> Verdict:
    """Structured corpora vs token statistics, English-task accuracy per seed."""
    stats = [c for c in STATISTICS if c in next(iter(acc.values()))]
    return english_helps(gain_verdict(
        claim, group_mean(acc, struct), group_mean(acc, stats),
        ("+".join(struct), "+".join(stats)), "English-task accuracy", MIN_TRANSFER), acc)


def uniform_verdict(claim: Claim, acc: dict[str, dict[str, np.ndarray]]) -> Verdict:
    return no_gain_verdict(claim, english_mean(acc, "uniform"), english_mean(acc, SCRATCH),
                           ("uniform", SCRATCH), "English-task accuracy", MIN_TRANSFER)


def english_best_verdict(claim: Claim, acc: dict[str, dict[str, np.ndarray]]) -> Verdict:
    """English against the best artificial corpus (by mean English-task accuracy)."""
    artificial = [c for c in next(iter(acc.values())) if c not in (SCRATCH, "english")]
    best = max(artificial, key=lambda c: float(english_mean(acc, c).mean()))
    return english_helps(gain_verdict(claim, english_mean(acc, "english"),
                                      english_mean(acc, best), ("english", best),
                                      "English-task accuracy", MIN_TRANSFER), acc)


# -- artificial-pretraining-lego: LEGO's heads and learning speed ----------------------------
def association_verdict(claim: Claim, c: Scores, random: Scores) -> Verdict:
    """The best head by variable-query association must beat the best random-init head AND
    its own positional controls (clause-permuted score, same-slot head) by HEAD_MARGIN."""
    (l, h, v), *_ = top_heads(c["variables"], 1)
    r = top_heads(random["variables"], 1)[0][2]
    control = max(float(c["variables, permuted"][l, h]), float(c["positional head"]))
    ev = (f"best association head (variable queries) L{l}H{h} {v:.2f} vs random-init best "
          f"{r:.2f} and its positional control {control:.2f}; needs >= {HEAD_MARGIN} above "
          "both")
    return verdict(claim, v - r >= HEAD_MARGIN and v - control >= HEAD_MARGIN, ev)


def learning_speed(curve: list[dict[str, Any]]) -> float:
    """Mean supervised accuracy over the evaluations (area under the learning curve): higher
    = learned sooner."""
    return float(np.mean([m["acc_supervised"] for m in curve]))


def speed_verdict(claim: Claim, curves: dict[str, list[list[dict[str, Any]]]],
                  struct: tuple[str, ...]) -> Verdict:
    """Structured corpora vs token statistics: per seed, the area under the LEGO learning curve
    averaged over the corpora of each group."""
    def group(names: tuple[str, ...]) -> np.ndarray:
        return np.mean([[learning_speed(c) for c in curves[n]] for n in names], axis=0)

    stats = tuple(c for c in STATISTICS if c in curves)
    return gain_verdict(claim, group(struct), group(stats), ("+".join(struct), "+".join(stats)),
                        "LEGO mean supervised accuracy over training (area under the curve)",
                        MIN_ACCURACY_GAIN)
