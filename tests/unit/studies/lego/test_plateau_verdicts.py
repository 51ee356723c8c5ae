"""The wall-at-#2 rules (lego/verdicts.py: plateau_verdict, more_seeds_verdict,
fit_gain_verdict) on hand-made numbers, against p-values computed here by enumeration."""

from __future__ import annotations

import itertools
import math

import pytest

from reasonlab.studies.kit.core import Claim
from reasonlab.studies.lego import verdicts as v

CLAIM = Claim("c", "a claim", "test")
INF = math.inf


def fisher_greater(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """P(arm a gets >= k_a of the k_a + k_b passes) when the n_a + n_b seeds are exchangeable:
    enumerating every way to place the passes among the seeds."""
    k, n = k_a + k_b, n_a + n_b
    ways = list(itertools.combinations(range(n), k))
    return sum(sum(i < n_a for i in w) >= k_a for w in ways) / len(ways)


def test_plateau_reproduced_on_a_complete_order_of_3_before_5():
    second = {"remedy": [500.0, 700.0, 900.0], "recipe": [INF] * 4 + [1200.0]}
    out = v.plateau_verdict(CLAIM, second, "remedy", "recipe")
    assert out.status == "reproduced"
    assert "1 / C(m + n, m) = 0.018" in out.evidence  # 1/56


def test_plateau_not_reproduced_on_the_reverse_order():
    second = {"remedy": [INF, INF, INF], "recipe": [300.0, 400.0, 500.0, 600.0, 700.0]}
    assert v.plateau_verdict(CLAIM, second, "remedy", "recipe").status == "not reproduced"


@pytest.mark.parametrize("remedy,recipe,why", [
    ([INF] * 3, [INF] * 5, "no seed of either arm passes #2"),
    ([500.0, INF, 900.0], [INF] * 5, "in order"),  # one remedy seed never passes: a tie
    ([500.0, 700.0, 900.0], [INF, INF, 600.0, INF, INF], "in order"),
])
def test_plateau_inconclusive_without_a_complete_order(remedy, recipe, why):
    out = v.plateau_verdict(CLAIM, {"remedy": remedy, "recipe": recipe}, "remedy", "recipe")
    assert out.status == "inconclusive" and why in out.why


def test_plateau_with_3_recipe_seeds_cannot_decide():
    """3 + 3 seeds: a complete order has p = 1/20 > 0.025, so even a perfect split is
    inconclusive (why the recipe arm runs 5)."""
    out = v.plateau_verdict(CLAIM, {"remedy": [100.0] * 3, "recipe": [INF] * 3}, "remedy",
                            "recipe")
    assert out.status == "inconclusive" and "underpowered" in out.why


@pytest.mark.parametrize("k_a,k_b,status", [
    (3, 0, "reproduced"),  # p = 1/56
    (2, 0, "inconclusive"),  # p = 3/28
    (3, 2, "inconclusive"),
    (0, 5, "not reproduced"),
    (0, 0, "inconclusive"),
])
def test_more_seeds_against_enumerated_fisher(k_a, k_b, status):
    second = {"remedy": [400.0] * k_a + [INF] * (3 - k_a),
              "recipe": [400.0] * k_b + [INF] * (5 - k_b)}
    out = v.more_seeds_verdict(CLAIM, second, "remedy", "recipe")
    assert out.status == status
    p = fisher_greater(k_a, 3, k_b, 5) if k_a + k_b else 1.0
    assert f"p = {p:.3f}" in out.evidence
    assert (p <= 0.025) == (status == "reproduced")


def test_fit_gain_reads_the_supervised_positions():
    fitted = [[1.0] * 6 + [0.5] * 6 for _ in range(3)]
    one_hop = [[1.0, 1.0, 0.5, 0.5, 0.5, 0.5] + [0.5] * 6 for _ in range(5)]
    for i, row in enumerate(one_hop):
        row[0] -= 0.01 * i  # a spread, so the interval is not degenerate
    out = v.fit_gain_verdict(CLAIM, {"small": fitted, "recipe": one_hop}, "small", "recipe", 6)
    assert out.status == "reproduced"
    flipped = v.fit_gain_verdict(CLAIM, {"small": one_hop, "recipe": fitted}, "small",
                                 "recipe", 6)
    assert flipped.status == "not reproduced"
