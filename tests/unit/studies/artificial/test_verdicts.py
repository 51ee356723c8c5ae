"""Verdict rules of artificial-pretraining-lego on noisy numbers drawn from a seeded generator,
one draw per unit (a seed that pretrains and fine-tunes); the seed table's rules:
test_paper_table_verdicts.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from reasonlab.studies.artificial.verdicts import association, association_verdict, speed_verdict
from reasonlab.studies.kit.core import Claim

C = Claim("k", "claim", "source")
STRUCT = ("flat-32", "nesting")


def controls(rng, best, permuted, sd=0.02, positional=0.0):
    """One unit's association controls on a 2 x 2 grid of heads: L1H0 at `best` with its
    clause-permuted score at `permuted`, the other heads near 0.05; each with noise `sd`."""
    v = torch.as_tensor(0.05 + rng.normal(0, sd, (2, 2)))
    p = torch.as_tensor(0.05 + rng.normal(0, sd, (2, 2)))
    v[1, 0], p[1, 0] = best + rng.normal(0, sd), permuted + rng.normal(0, sd)
    return {"variables": v, "variables, permuted": p, "positional head": torch.tensor(positional)}


def units(seed, n, best, permuted, sd=0.02):
    rng = np.random.default_rng(seed)
    return [controls(rng, best, permuted, sd) for _ in range(n)]


def test_association_names_the_best_head_and_its_larger_control():
    a = association(controls(np.random.default_rng(0), 0.45, 0.10, sd=0.0, positional=0.2))
    assert (a.layer, a.head, a.name) == (1, 0, "L1H0")
    assert a.score == pytest.approx(0.45) and a.control == pytest.approx(0.2)


def test_association_verdict_decides_over_units():
    rnd = units(1, 3, 0.05, 0.05)
    v = association_verdict(C, units(0, 3, 0.45, 0.10), rnd)
    assert v.status == "reproduced", v.evidence
    assert v.effect is not None and v.effect.n == (3, 3)
    # as high when the clauses are permuted: position, not content
    assert association_verdict(C, units(2, 3, 0.45, 0.42), rnd).status == "not reproduced"
    # a head well above random init's but short of the margin
    assert association_verdict(C, units(3, 3, 0.15, 0.05), rnd).status == "not reproduced"


def test_association_one_unit_per_arm_is_inconclusive_however_strong():
    v = association_verdict(C, units(0, 1, 0.9, 0.05), units(1, 1, 0.05, 0.05))
    assert v.status == "inconclusive" and "too few units" in v.why


def test_association_noisy_heads_near_the_margin_are_undecided():
    """Per-unit best heads spread 0.15 around 0.3: no decision either way at 3 units."""
    v = association_verdict(C, units(4, 3, 0.30, 0.05, sd=0.15), units(1, 3, 0.05, 0.05))
    assert v.status == "inconclusive" and "underpowered" in v.why


def curves(rng, level, n, sd=0.02):
    """n units' learning curves, each mean supervised accuracy level + noise."""
    return [[{"acc_supervised": float(x) + d} for d in (-0.05, 0.0, 0.05)]
            for x in level + rng.normal(0, sd, n)]


def corpora(seed, n, struct_level, sd=0.02):
    rng = np.random.default_rng(seed)
    return {c: curves(rng, struct_level if c in STRUCT else 0.6, n, sd)
            for c in (*STRUCT, "uniform", "unigram", "bigram", "scratch")}


def test_speed_verdict_decides_over_units():
    fast = speed_verdict(C, corpora(0, 3, 0.8), STRUCT)
    assert fast.status == "reproduced"
    assert fast.effect is not None and fast.effect.n == (3,) * 5
    for c in (*STRUCT, "uniform", "unigram", "bigram"):  # every corpus shown
        assert f"{c} " in fast.evidence
    assert speed_verdict(C, corpora(1, 3, 0.6, sd=0.005), STRUCT).status == "not reproduced"


def test_speed_one_unit_per_arm_is_inconclusive_however_fast():
    v = speed_verdict(C, corpora(0, 1, 0.95), STRUCT)
    assert v.status == "inconclusive" and "too few units" in v.why
