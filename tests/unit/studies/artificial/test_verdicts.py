"""Verdict rules of artificial-pretraining-lego on hand-made numbers (the seed table's:
test_seed_verdicts.py)."""

from __future__ import annotations

import numpy as np
import torch

from reasonlab.studies.artificial.verdicts import association_verdict, speed_verdict
from reasonlab.studies.kit.core import Claim
from reasonlab.studies.kit.verdicts import no_gain_verdict

C = Claim("k", "claim", "source")
STRUCT = ("flat-32", "nesting")


def test_no_gain_verdict():
    a, b = np.asarray([0.500, 0.504]), np.asarray([0.501, 0.503])
    assert no_gain_verdict(C, a, b, ("a", "b"), "acc", 0.01).status == "reproduced"
    assert no_gain_verdict(C, a + 0.05, b, ("a", "b"), "acc", 0.01).status == "not reproduced"
    wide = np.asarray([0.45, 0.57])  # gain +0.008 but 2 SE ~0.09: cannot tell
    assert no_gain_verdict(C, wide, b, ("a", "b"), "acc", 0.01).status == "inconclusive"


def controls(best, permuted, positional=0.1):
    v = torch.full((2, 2), 0.05)
    v[1, 0] = best
    p = torch.full((2, 2), 0.05)
    p[1, 0] = permuted
    return {"variables": v, "variables, permuted": p, "positional head": torch.tensor(positional)}


def test_association_verdict():
    rnd = controls(0.10, 0.10)
    assert association_verdict(C, controls(0.45, 0.10), rnd).status == "reproduced"
    # as high when the clauses are permuted: position, not content
    assert association_verdict(C, controls(0.45, 0.40), rnd).status == "not reproduced"
    assert association_verdict(C, controls(0.25, 0.05), rnd).status == "not reproduced"


def test_speed_verdict():
    def curves(level):
        return [[{"acc_supervised": level + d * k} for k in range(4)] for d in (0.0, 0.01)]

    fast = {"nesting": curves(0.8), "flat-32": curves(0.8), "uniform": curves(0.6),
            "unigram": curves(0.6), "bigram": curves(0.6), "scratch": curves(0.6)}
    assert speed_verdict(C, fast, STRUCT).status == "reproduced"
    same = {**fast, "nesting": curves(0.6), "flat-32": curves(0.6)}
    assert speed_verdict(C, same, STRUCT).status == "not reproduced"
