"""fpt.analysis: the means its tables and verdicts read, on hand-made runs."""

from __future__ import annotations

import pytest

from reasonlab.studies.fpt.analysis import accuracy_by_size, train_test_accuracy
from reasonlab.studies.kit.core import Results, RunSpec


def runs(rows):
    """(arm, factors, final) per run -> Results (no config: these helpers read none)."""
    return Results([(RunSpec(arm, 0, None, factors), {"final": final})  # type: ignore[arg-type]
                    for arm, factors, final in rows], "smoke", 2)


def test_accuracy_by_size_means_each_arm_over_seeds_per_depth():
    r = runs([("FPT", {"layers": 1}, {"acc": 0.6}), ("FPT", {"layers": 1}, {"acc": 0.8}),
              ("Random", {"layers": 1}, {"acc": 0.5}), ("FPT", {"layers": 2}, {"acc": 0.9}),
              ("Random", {"layers": 2}, {"acc": 0.55})])
    acc = accuracy_by_size(r, ("FPT", "Random"))
    assert acc["FPT"] == pytest.approx({1: 0.7, 2: 0.9})
    assert acc["Random"] == pytest.approx({1: 0.5, 2: 0.55})
    assert list(acc["FPT"]) == [1, 2]


def test_train_test_accuracy_is_train_then_test_mean_over_seeds():
    r = runs([("FPT", {}, {"train_acc": 0.4, "acc": 0.38}),
              ("FPT", {}, {"train_acc": 0.5, "acc": 0.4}),
              ("Full", {}, {"train_acc": 0.7, "acc": 0.42})])
    acc = train_test_accuracy(r)
    assert acc["FPT"] == pytest.approx((0.45, 0.39))
    assert acc["Full"] == pytest.approx((0.7, 0.42))
