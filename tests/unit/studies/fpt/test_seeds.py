"""The FPT studies' replication: 3 seeds per arm at cpu scale, each seed its own pipeline, and
the cheaper replication each study chose (fpt README, "Seeds and time")."""

from __future__ import annotations

from reasonlab.runs import config_id
from reasonlab.studies import STUDIES
from reasonlab.studies.fpt.common import FULL, FULL_LR_CPU, FULL_LRS, LSTM, RANDOM_LSTM

FPT_STUDIES = [n for n in STUDIES if n.startswith("fpt-")]


def test_every_fpt_study_runs_three_seeds_per_arm_at_cpu_and_paper_scale():
    for name in FPT_STUDIES:
        cls = STUDIES[name]
        if "cpu" not in cls.scales:  # the other backbones, paper only: the seeds their power
            assert cls.default_seeds["paper"] == 5, name  # needs (fpt/calibration.py)
            continue
        assert cls.default_seeds["cpu"] == cls.default_seeds["paper"] == 3, name
        seeds = {s.seed for s in cls().runs("cpu", cls.default_seeds["cpu"])}
        assert seeds == {0, 1, 2}, name


def test_full_arm_at_cpu_scale_runs_the_rate_the_seed_0_sweep_chose():
    """At cpu scale the sweep ran once; every seed runs its choice. The paper scale sweeps at
    every seed."""
    cpu = [s for s in STUDIES["fpt-universal"]().runs("cpu", 3) if s.arm == FULL]
    assert len(cpu) == 2 * 5 * 3
    for s in cpu:
        lr = FULL_LR_CPU[s.factors["backbone"]][s.factors["task"]]
        assert s.config.optim.lr == lr == s.factors["lr"]
    paper = [s for s in STUDIES["fpt-universal"]().runs("paper", 3) if s.arm == FULL]
    assert {s.factors["lr"] for s in paper} == set(FULL_LRS)
    assert {s.seed for s in paper if s.factors["lr"] == FULL_LRS[1]} == {0, 1, 2}


def test_trained_lstm_runs_the_bit_tasks_at_cpu_scale():
    specs = STUDIES["fpt-lstm"]().runs("cpu", 3)
    assert {s.factors["task"] for s in specs if s.arm == LSTM} == {"bit memory", "bit XOR"}
    assert len({s.factors["task"] for s in specs if s.arm == RANDOM_LSTM}) == 5
    paper = STUDIES["fpt-lstm"]().runs("paper", 3)
    assert len({s.factors["task"] for s in paper if s.arm == LSTM}) == 6


def test_each_seed_pretrains_its_own_bit_backbone():
    """fpt-modality's unit is the whole pipeline's seed: seed s's Bit arm starts from the
    pretraining run of seed s; seed 0's is the one the 1-seed design ran."""
    specs = STUDIES["fpt-modality"]().runs("cpu", 3)
    pre = {(s.factors["backbone"], s.seed): config_id(s.config) for s in specs
           if s.factors.get("phase") == "pretrain"}
    assert len(pre) == 2 * 3 and len(set(pre.values())) == 6
    for s in specs:
        if s.arm == "Bit":
            assert config_id(s.config.init_run) == pre[s.factors["backbone"], s.seed]
            assert s.config.init_run.seed == s.seed
    assert "pretrains the Bit backbone" in STUDIES["fpt-modality"].unit


def test_shared_arms_stay_shared():
    """Studies share runs by id: fpt-universal's FPT and frozen random arms are the FPT policy
    of the freeze tables and fpt-init's Pretrained and Default arms, at every seed."""
    def ids(name):
        return {config_id(s.config) for s in STUDIES[name]().runs("cpu", 3)}

    universal = ids("fpt-universal")
    for name, shared in (("fpt-freeze-ablation", 12), ("fpt-freeze-random", 12),
                         ("fpt-freeze-fewer", 12), ("fpt-init", 36), ("fpt-convergence", 30)):
        assert len(ids(name) & universal) == shared, name
