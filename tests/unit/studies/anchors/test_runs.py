"""The anchor studies' runs: the replication the rules count on (one unit per run, seeds that
decide) and the runs the studies share."""

from collections import Counter

from reasonlab.studies import STUDIES
from reasonlab.studies.anchors.common import DEPTH, PHASE, PHASE_SEEDS


def test_pooled_depths_never_share_a_seed():
    specs = STUDIES["anchors-init-phase"]().runs("cpu", PHASE_SEEDS)
    by_gamma = Counter((s.config.model.init.gamma, s.seed) for s in specs)
    assert set(by_gamma.values()) == {1}  # a gamma's runs over both depths: distinct seeds
    per_cell = Counter((s.config.model.init.gamma, s.config.model.n_layers) for s in specs)
    assert set(per_cell.values()) == {PHASE_SEEDS}
    assert PHASE["cpu"][1][0] == DEPTH["cpu"]  # the first depth keeps seeds from 0


def test_mechanism_and_embedding_norm_reuse_the_phase_runs():
    def configs(name):  # what a run's id hashes
        return [s.config.model_dump_json() for s in STUDIES[name]().runs("cpu", PHASE_SEEDS)]

    phase = set(configs("anchors-init-phase"))
    assert all(c in phase for c in configs("anchors-mechanism"))
    norm = configs("anchors-embedding-norm")
    assert sum(c in phase for c in norm) == PHASE_SEEDS  # the authors' arm


def test_cpu_seeds_give_the_exact_rules_runs_to_decide():
    for name in ("anchors-init-phase", "anchors-mechanism", "anchors-embedding-norm"):
        assert STUDIES[name].default_seeds["cpu"] == PHASE_SEEDS >= 6  # a majority needs 6
    assert STUDIES["anchors-lr-weight-decay"].default_seeds["cpu"] >= 3
    for name in ("anchors-init-phase", "anchors-mechanism", "anchors-embedding-norm",
                 "anchors-lr-weight-decay"):
        assert STUDIES[name].unit != STUDIES["lego-extrapolation"].unit  # declared
