"""artificial._support.paper_table: the source paper's (the seed's) Avg column, recomputed from
its eight columns."""

from __future__ import annotations

import pytest

from reasonlab.studies.artificial._support.paper_table import SEED_TABLE, seed_avg


def test_seed_avg_is_the_mean_of_the_eight_columns():
    # No Pre-train: (0.17 + 0.60 + 0.75 + 0.13 + 0.83 + 0.64 + 0.67 + 0.50) / 8
    assert seed_avg("No Pre-train") == pytest.approx(4.29 / 8)
    assert len(SEED_TABLE["Kannada"]) == 8
