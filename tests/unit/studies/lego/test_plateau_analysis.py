"""lego-plateau's readings of a run (lego/analysis.py): the #2 plateau window, the attention
diagnostics averaged inside it, and how far up the chain a run got, on hand-made curves."""

from __future__ import annotations

import math

import pytest

from reasonlab.studies.lego.analysis import on_plateau, plateau_window, reached

INF = math.inf


def curve(passes: dict[int, int], steps: int = 1000, every: int = 100) -> list[dict]:
    """Accuracy 1.0 on position k from step passes[k] on, 0.5 before; diagnostics whose values
    are the step itself (entropy) and fixed gradient norms."""
    rows = []
    for s in range(every, steps + 1, every):
        acc = [1.0 if k in passes and s >= passes[k] else 0.5 for k in range(12)]
        diag = {"entropy": [s / 100, s / 100], "grad_W_Q": [1.0, 3.0], "grad_W_K": [2.0, 2.0],
                "grad_W_V": [4.0, 4.0]}
        rows.append({"step": s, "acc_by_depth": acc, "diag": {"attention": diag}})
    return rows


def test_window_runs_from_the_first_pass_of_1_to_that_of_2():
    assert plateau_window(curve({0: 100, 1: 300, 2: 700})) == (300, 700)
    assert plateau_window(curve({0: 100, 1: 300})) == (300, 1000)  # never: to the end
    assert plateau_window(curve({0: 100})) == (0, 1000)  # #1 never: the whole run


def test_diagnostics_are_averaged_inside_the_window_only():
    d = on_plateau(curve({0: 100, 1: 300, 2: 700}))
    assert d["entropy"] == pytest.approx((4 + 5 + 6 + 7) / 4)  # steps 400..700
    assert d["grad_W_Q"] == pytest.approx(2.0) and d["grad_W_V"] == pytest.approx(4.0)
    assert d["qk_v"] == pytest.approx((2.0 + 2.0) / (2 * 4.0))
    empty = on_plateau(curve({0: 100, 1: 300, 2: 300}))  # #2 with #1: no evaluation inside
    assert math.isnan(empty["entropy"])


@pytest.mark.parametrize("passes,k", [
    ([INF] * 12, -1), ([100, INF, 300] + [INF] * 9, 0), ([100, 200, 300] + [INF] * 9, 2),
    ([100.0] * 12, 11)])
def test_reached_is_the_top_of_the_unbroken_staircase(passes, k):
    assert reached(passes) == k
