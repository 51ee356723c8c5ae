"""fpt.analysis: the per-seed values its verdicts read (and its tables average), on hand-made
runs."""

from __future__ import annotations

import pytest

from reasonlab.studies.fpt.analysis import accuracy_by_size, train_test_accuracy
from reasonlab.studies.kit.core import Results, RunSpec


def runs(rows):
    """(arm, factors, final) per run -> Results (no config: these helpers read none)."""
    return Results([(RunSpec(arm, 0, None, factors), {"final": final})  # type: ignore[arg-type]
                    for arm, factors, final in rows], "smoke", 2)


def test_accuracy_by_size_keeps_each_arms_seeds_per_depth():
    r = runs([("FPT", {"layers": 1}, {"acc": 0.6}), ("FPT", {"layers": 1}, {"acc": 0.8}),
              ("Random", {"layers": 1}, {"acc": 0.5}), ("FPT", {"layers": 2}, {"acc": 0.9}),
              ("Random", {"layers": 2}, {"acc": 0.55})])
    acc = accuracy_by_size(r, ("FPT", "Random"))
    assert acc["FPT"] == {1: pytest.approx([0.6, 0.8]), 2: pytest.approx([0.9])}
    assert acc["Random"] == {1: pytest.approx([0.5]), 2: pytest.approx([0.55])}
    assert list(acc["FPT"]) == [1, 2]


def test_train_test_accuracy_is_train_then_test_per_seed():
    r = runs([("FPT", {}, {"train_acc": 0.4, "acc": 0.38}),
              ("FPT", {}, {"train_acc": 0.5, "acc": 0.4}),
              ("Full", {}, {"train_acc": 0.7, "acc": 0.42})])
    acc = train_test_accuracy(r)
    assert acc["FPT"] == (pytest.approx([0.4, 0.5]), pytest.approx([0.38, 0.4]))
    assert acc["Full"] == (pytest.approx([0.7]), pytest.approx([0.42]))


def test_the_accuracy_figure_takes_an_arm_run_on_some_tasks_only(tmp_path):
    """fpt-lstm at cpu scale trains the LSTM on the bit tasks only (lstm.LSTM_TASKS): the bar
    figure leaves its other bars out instead of failing after every run has trained."""
    from matplotlib.image import imread

    from reasonlab.studies.fpt.analysis import plot_accuracy

    values = {"bit memory": {"FPT": [0.9, 0.92], "LSTM": [0.5, 0.51]},
              "digits": {"FPT": [0.8, 0.82], "Random LSTM": [0.3, 0.35]}}
    path = tmp_path / "accuracy.png"
    plot_accuracy(values, ["FPT", "LSTM", "Random LSTM"], path, "SmolLM2-135M")
    assert imread(path).shape[0] > 100


def test_grouped_bars_draws_each_value_at_its_group_and_leaves_missing_ones_out():
    """The bars' heights, read back from the axes, are the values given; an arm absent from a
    group draws no bar there (NaN height) and keeps its place in the legend."""
    import math

    import matplotlib.pyplot as plt

    from reasonlab.report import grouped_bars

    fig, ax = plt.subplots()
    grouped_bars(ax, {"bit memory": {"FPT": 0.9, "LSTM": 0.5}, "digits": {"FPT": 0.8,
                                                                          "Random LSTM": 0.3}})
    heights = {c.get_label(): [b.get_height() for b in c] for c in ax.containers}
    plt.close(fig)
    assert heights["FPT"] == [0.9, 0.8] and heights["LSTM"][0] == 0.5
    assert math.isnan(heights["LSTM"][1]) and math.isnan(heights["Random LSTM"][0])
    assert heights["Random LSTM"][1] == 0.3
