"""Point-estimate rules kept only until every family decides from kit/stats.py; removed then."""

from __future__ import annotations

import numpy as np

from reasonlab.studies.kit.core import Claim, Status, Verdict
from reasonlab.studies.kit.verdicts import Check


def threshold_verdict(claim: Claim, value: float, evidence: str, passes: Check,
                      fails: Check | None = None) -> Verdict:  # legacy
    if passes(value):
        return Verdict(claim, "reproduced", evidence)
    return Verdict(claim, "not reproduced" if fails is None or fails(value) else "inconclusive",
                   evidence)


def gain_status(gain: float, se: float, min_gain: float, n: int, min_seeds: int = 1
                ) -> Status:  # legacy
    if gain > min_gain and gain > 2 * se and n >= min_seeds:
        return "reproduced"
    if gain <= 0 or (n > 1 and gain + 2 * se < min_gain):
        return "not reproduced"
    return "inconclusive"


def standard_error(a: np.ndarray, b: np.ndarray) -> float:  # legacy
    return (float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))
            if len(a) > 1 and len(b) > 1 else 0.0)
