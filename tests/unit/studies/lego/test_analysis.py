"""LEGO's readers of accuracy per chain position (lego/analysis.py; the kit reads no task's
metrics): the finals per arm and seed, the table and figure per position, the accuracy curves,
the first step each position passes a threshold, and the report that opens every LEGO study."""

from __future__ import annotations

from reasonlab.studies.kit.base import Report, Results, grid
from reasonlab.studies.lego.analysis import (accuracy_report, curves_figure, first_pass_section,
                                             per_position, positions_section)
from reasonlab.studies.lego.common import recipe

PNG = b"\x89PNG"


def runs(depths: list[list[float]]) -> Results:
    """Arms A and B, two seeds each, the i-th run finishing with accuracies `depths[i]` per
    position and a two-point curve ending there."""
    specs = grid(recipe("smoke"), {"A": {}, "B": {}}, seeds=2)
    return Results([(s, {"final": {"acc": sum(d) / len(d), "acc_by_depth": d},
                         "curve": [{"step": 10, "acc_by_depth": [0.5] * len(d)},
                                   {"step": 20, "acc_by_depth": d}]})
                    for s, d in zip(specs, depths)], "smoke", 2)


def test_per_position_is_each_arms_finals_in_seed_order():
    res = runs([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8]])
    assert per_position(res) == {"A": [[0.1, 0.2], [0.3, 0.4]], "B": [[0.5, 0.6], [0.7, 0.8]]}


def test_sections_write_their_tables_and_figures(tmp_path):
    res = runs([[0.9, 0.5], [0.7, 0.5], [1.0, 1.0], [1.0, 0.8]])
    rep = positions_section(Report("T", tmp_path), per_position(res), trained=1, std=True)
    curves_figure(rep, res.curves())
    first_pass_section(rep, {"A": [[10.0, float("inf")]]}, 0.9, "First pass", steps=20)
    text = rep.markdown()
    assert "| A | 0.800 | 0.500 |" in text and "| B | 1.000 | 0.900 |" in text  # seed means
    assert "| A (std) | 0.141 | 0.000 |" in text  # the sample std over the two seeds
    assert "| A seed 0 | 10 | never |" in text
    for png in ("accuracy_by_position.png", "curves.png", "first_pass.png"):
        assert (tmp_path / png).read_bytes()[:4] == PNG and f"({png})" in text


def test_accuracy_report_opens_with_recipe_positions_and_curves(tmp_path):
    res = runs([[0.9, 0.5], [0.7, 0.5], [1.0, 1.0], [1.0, 0.8]])
    rep, finals = accuracy_report("T", res, tmp_path, n_train=1)
    assert finals == per_position(res)
    headings = [s.split("\n")[0] for s in rep.sections]
    assert headings == ["## Recipe", "## Final test accuracy per chain position (mean over seeds)"]
    assert [name for name, _ in rep.figures] == ["accuracy_by_position.png", "curves.png"]
