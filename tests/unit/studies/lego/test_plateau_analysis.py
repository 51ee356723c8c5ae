"""lego-plateau's readings of a run (lego/analysis.py): the #2 plateau window, the attention
diagnostics averaged inside it, and how far up the chain a run got, on hand-made curves; the
README's per-run tables are those of the committed run records."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reasonlab.studies.lego.analysis import on_plateau, plateau_window, reached, records_table

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


def test_records_table_reads_each_field_of_a_record():
    row = {"arm": "recipe", "seed": 1, "first_pass": [100.0, 300.0, None, None, None, None],
           "final_acc": [1.0, 0.9, 0.5, 0.5, 0.4, 0.3], "wall_s_per_1000": float("nan"),
           "plateau": {"entropy": 1.234, "qk_v": 0.5}}
    head, rule, line = records_table([row], n_train=3).splitlines()
    assert head.count("|") == rule.count("|") == line.count("|")  # no stray pipe in a cell
    assert line == "| recipe | 1 | 100 | 300 | never | never | 0.800 / 0.50 | 1.23 | 0.50 | - |"
    assert "#0-#2 mean" in head


SUPPORT = Path(__file__).resolve().parents[4] / "src" / "reasonlab" / "studies" / "lego"


@pytest.mark.parametrize("name,n_train", [("plateau_long_runs.json", 6),
                                          ("short_chain_long_runs.json", 3),
                                          ("short_chain_horizon_runs.json", 3)])
def test_the_readme_tables_are_the_committed_run_records(name, n_train):
    rows = json.loads((SUPPORT / "_support" / name).read_text())
    assert records_table(rows, n_train) in (SUPPORT / "README.md").read_text()


def test_op_split_reads_a_curriculum_run_on_full_length_sentences():
    """A run trained on chains of 3-12 clauses is read on the test distribution (12 clauses):
    its own `sample` would hold padded slots with no clause at the later positions."""
    import numpy as np
    import torch

    from reasonlab.studies.lego.analysis import op_split
    from reasonlab.tasks.base import build_task
    from reasonlab.train.config import TrainConfig
    from reasonlab.train.loop import build_model

    cfg = TrainConfig.build({"task": {"name": "lego", "min_clauses": 3},
                             "model": {"d_model": 16, "n_layers": 1, "n_heads": 2, "d_mlp": 32}})
    task = build_task(cfg.task)
    assert (task.sample(np.random.default_rng(0), 64).label_pos < 0).any()  # padded slots
    full = task.sample_full(np.random.default_rng(0), 64)
    assert (full.label_pos >= 0).all() and full.pad_mask is None
    torch.manual_seed(0)
    names, acc = op_split(build_model(cfg), task, (1, 2, 3), n=64)
    assert len(acc) == 3 and all(len(row) == len(names) == 4 for row in acc)
    # without a curriculum the full-length draw is `sample`'s own: earlier readings unchanged
    plain = build_task(TrainConfig.build({"task": {"name": "lego"}, "model": {"d_model": 16}}).task)
    a, b = plain.sample(np.random.default_rng(5), 32), plain.sample_full(np.random.default_rng(5), 32)
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.labels, b.labels)
