"""symbols.common: the width sweep and what a width-sweep analysis reads as its x."""

from __future__ import annotations

from reasonlab.studies.kit.core import grid
from reasonlab.studies.symbols.common import copy_recipe, width, width_sweep


def test_width_reads_each_runs_embedding_dimension():
    specs = grid(copy_recipe("smoke"), {"transformer": {}}, width_sweep("smoke"))
    assert [width(s) for s in specs] == [8, 16]
    assert [s.config.model.d_mlp for s in specs] == [32, 64]
