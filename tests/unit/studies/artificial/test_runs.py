"""The run grids of artificial-pretraining and artificial-pretraining-lego: downstream tasks,
the ALBERT-like encoder's own pretraining runs, and the runs the two studies share."""

from __future__ import annotations

import pytest

from reasonlab.studies.artificial.common import (ALBERT, BERT, LEGO, LISTOPS, SCRATCH, arm,
                                                 corpora, runs, split_arm, tasks)
from reasonlab.studies.kit.base import STUDIES
from reasonlab.train.config import config_id


def test_arm_names_round_trip():
    assert split_arm(arm(LEGO, "nesting")) == (LEGO, "nesting", BERT)
    assert split_arm(arm(LEGO, SCRATCH, ALBERT)) == (LEGO, SCRATCH, ALBERT)
    assert arm(LEGO, "nesting") == "lego | nesting"  # BERT names unchanged: old reports read


@pytest.mark.parametrize("scale", ["smoke", "cpu", "paper"])
def test_listops_is_a_downstream_task_that_fits_the_encoder(scale):
    """ListOps with brackets (lra), its sequences no longer than the pretrained positions:
    TrainConfig refuses a fine-tuning run whose sentences outgrow the pretraining run's."""
    assert tasks(scale)[LISTOPS]["tokenisation"] == "lra"
    specs = runs(scale, 1, [LISTOPS])
    assert {split_arm(s.arm)[1] for s in specs if " | " in s.arm} == {SCRATCH, *corpora(scale)}
    for s in specs:
        if s.config.pretrain is not None:
            assert s.config.model.max_seq_len <= s.config.pretrain.model.max_seq_len


@pytest.mark.parametrize("scale", ["smoke", "cpu"])
def test_albert_encoder_has_its_own_tied_pretraining_runs(scale):
    bert = runs(scale, 2, [LEGO])
    albert = runs(scale, 2, [LEGO], ALBERT)
    assert len(albert) == len(bert)
    for s in albert:
        if s.arm.startswith("pretrain "):
            assert s.arm.endswith(f" | {ALBERT}") and s.config.model.tie_layers
        else:
            task, init, kind = split_arm(s.arm)
            assert kind == ALBERT and s.config.model.tie_layers
            if init != SCRATCH:  # fine-tuned from the ALBERT run of its corpus
                assert s.config.pretrain.model.tie_layers
                assert s.config.pretrain.task.corpus == init
    assert not any(s.config.model.tie_layers for s in bert)
    assert not {config_id(s.config) for s in bert} & {config_id(s.config) for s in albert}


def test_lego_study_shares_artificial_pretrainings_bert_runs():
    """The BERT-like LEGO runs (and pretraining runs) of artificial-pretraining-lego are
    artificial-pretraining's own: same configs, so the run store trains them once."""
    mine = {config_id(s.config) for s in STUDIES["artificial-pretraining-lego"]().runs("cpu", 2)
            if s.arm.startswith("pretrain ") and ALBERT not in s.arm
            or s.arm.startswith(f"{LEGO} | ") and ALBERT not in s.arm}
    theirs = {config_id(s.config) for s in STUDIES["artificial-pretraining"]().runs("cpu", 2)}
    assert len(mine) == 8 + 9 * 2 and mine <= theirs
