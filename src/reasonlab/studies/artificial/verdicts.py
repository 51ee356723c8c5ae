"""artificial-pretraining-lego's verdict rules (Chiang & Lee's corpora, docs/papers.md §4, with
LEGO §4.2 for the heads; the seed table's rules are in seed_verdicts.py), unit-tested on hand-made numbers in
tests/unit/studies/artificial/test_verdicts.py. Thresholds are constants fixed before any run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from reasonlab.analysis.attention import top_heads
from reasonlab.studies.artificial.common import STATISTICS
from reasonlab.studies.kit.base import Claim, Verdict
from reasonlab.studies.kit.verdicts import MIN_ACCURACY_GAIN, gain_verdict, verdict
from reasonlab.studies.lego.verdicts import HEAD_MARGIN

Scores = dict[str, torch.Tensor]


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
