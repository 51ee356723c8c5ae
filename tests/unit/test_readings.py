"""The anchor studies' two readings of the paper's gamma at the cpu width (anchors.common
.READINGS; docs/papers.md §3): both are run, and each claim is judged on its own reading's runs
only, so the two readings can disagree in one report."""

from __future__ import annotations

import numpy as np

from reasonlab.studies import STUDIES
from reasonlab.studies.anchors.calibration import run
from reasonlab.studies.anchors.common import phase_gammas, read_gammas
from reasonlab.studies.anchors.lr_weight_decay import gammas_read
from reasonlab.studies.anchors.verdicts import phase_verdicts


def test_readings_at_the_cpu_width_and_at_the_papers():
    assert phase_gammas("cpu") == {"mapped": (0.21, 0.93), "direct": (0.3, 0.8)}
    assert gammas_read("cpu") == {"mapped": 0.57, "direct": 0.55}
    assert read_gammas((0.3, 0.8), 400) == {"mapped": (0.3, 0.8), "direct": (0.3, 0.8)}


def test_phase_study_runs_both_readings_and_judges_each_on_its_own_columns():
    study = STUDIES["anchors-init-phase"]()
    specs = study.runs("cpu", 3)
    cells = {(s.config.model.init.gamma, s.config.model.n_layers) for s in specs}
    assert cells == {(g, L) for g in (0.21, 0.3, 0.8, 0.93) for L in (2, 3)}
    assert len(specs) == 3 * len(cells)
    keys = [c.key for c in study.claims]
    assert keys == [f"{k}.{r}" for r in ("mapped", "direct")
                    for k in ("small-init", "large-init", "no-fit")]
    # the direct reading's small init is inferential, the mapped one's unfit: the same grid
    # gives opposite verdicts per reading (6 noisy runs per cell: a majority by the exact bound
    # needs at least 6)
    rng = np.random.default_rng(0)
    kinds = {(0.8, 2): "inferential", (0.8, 3): "inferential", (0.93, 2): "unfit",
             (0.93, 3): "unfit", (0.3, 2): "symmetric", (0.3, 3): "symmetric",
             (0.21, 2): "symmetric", (0.21, 3): "unfit"}
    runs = {c: [run(rng, k) for _ in range(6)] for c, k in kinds.items()}
    status = {v.claim.key: v.status for r in study.readings()
              for v in phase_verdicts(lambda key, r=r: study.claim(f"{key}.{r}"), runs,
                                      list(phase_gammas("cpu")[r]), [2, 3])}
    assert status["small-init.direct"] == "reproduced"
    assert status["small-init.mapped"] == "not reproduced"
    assert status["no-fit.direct"] == "not reproduced"  # 0.3 at depth 3 fits
    assert status["no-fit.mapped"] == "inconclusive"  # 0.93 as unfit as 0.21: no difference
    direct = phase_verdicts(lambda key: study.claim(f"{key}.direct"), runs, [0.3, 0.8], [2, 3])
    assert "gamma=0.8" in direct[0].evidence


def test_lr_weight_decay_study_runs_the_same_grid_under_both_readings():
    study = STUDIES["anchors-lr-weight-decay"]()
    specs = study.runs("cpu", 3)
    grid = {(s.config.model.init.gamma, s.config.optim.lr, s.config.optim.weight_decay)
            for s in specs}
    assert grid == {(g, lr, wd) for g in (0.55, 0.57) for lr in (1e-3, 3e-3)
                    for wd in (0.01, 1.0)}
    assert len(specs) == 3 * len(grid)
    assert [c.key for c in study.claims] == ["lr.mapped", "wd.mapped", "lr.direct",
                                             "wd.direct"]
    # at the paper's width the readings coincide: one set of runs, no duplicate
    assert len(study.runs("paper", 1)) == 4
