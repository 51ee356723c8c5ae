"""The run grids of artificial-pretraining and artificial-pretraining-lego: downstream tasks,
the ALBERT-like encoder's own pretraining runs, and the runs the two studies share."""

from __future__ import annotations

import pytest

from reasonlab.studies.artificial.common import (ALBERT, BERT, FINETUNE, LEGO, LISTOPS,
                                                 PRETRAIN, SCRATCH, arm, corpora, downstream,
                                                 pretrain_recipe, runs, tasks)
from reasonlab.studies.artificial._support.paper_table import pretrain_recipe as seed_recipe
from reasonlab.studies.kit.base import STUDIES, Results
from reasonlab.train.config import TrainConfig, config_id


def test_runs_carry_their_factors_and_downstream_reads_them():
    """Every run records phase, task / corpus, init and encoder kind as data; the arm name is
    a label (BERT names unchanged: old reports read) and nothing parses it back."""
    specs = runs("smoke", 2, [LEGO]) + runs("smoke", 2, [LEGO], ALBERT)
    assert arm(LEGO, "nesting") == "lego | nesting"
    for s in specs:
        f = s.factors
        if f["phase"] == PRETRAIN:
            assert s.config.task.corpus == f["corpus"] and s.config.seed == s.seed
        else:
            assert f["phase"] == FINETUNE and f["task"] == LEGO and f["arm"] == s.arm
            assert s.arm == arm(f["task"], f["init"], f["kind"])
            assert (s.config.init_run is None) == (f["init"] == SCRATCH)
            if s.config.init_run is not None:  # its own seed's pretraining run
                assert s.config.init_run.seed == s.seed
        assert s.config.model.tie_layers == (f["kind"] == ALBERT)
    # hand-made results: the final accuracy is the seed + 10 x (ALBERT), read per kind
    res = Results([(s, {"final": {"acc": s.seed + 10 * (s.factors["kind"] == ALBERT)}})
                   for s in specs], "smoke", 2)
    bert, albert = downstream(res), downstream(res, kind=ALBERT)
    assert list(bert[LEGO]) == [SCRATCH, *corpora("smoke")]
    assert all(list(v) == [0, 1] for v in bert[LEGO].values())
    assert all(list(v) == [10, 11] for v in albert[LEGO].values())


@pytest.mark.parametrize("scale", ["smoke", "cpu", "paper"])
def test_listops_is_a_downstream_task_that_fits_the_encoder(scale):
    """ListOps with brackets (lra), its sequences no longer than the pretrained positions:
    TrainConfig refuses a fine-tuning run whose sentences outgrow the pretraining run's."""
    assert tasks(scale)[LISTOPS]["tokenisation"] == "lra"
    specs = runs(scale, 1, [LISTOPS])
    assert {s.factors["init"] for s in specs if s.factors["phase"] == FINETUNE} == {
        SCRATCH, *corpora(scale)}
    for s in specs:
        if s.config.init_run is not None:
            assert s.config.model.max_seq_len <= s.config.init_run.model.max_seq_len


@pytest.mark.parametrize("scale", ["smoke", "cpu"])
def test_albert_encoder_has_its_own_tied_pretraining_runs(scale):
    bert = runs(scale, 2, [LEGO])
    albert = runs(scale, 2, [LEGO], ALBERT)
    assert len(albert) == len(bert)
    for s in albert:
        assert s.factors["kind"] == ALBERT and s.config.model.tie_layers
        if s.factors["phase"] == FINETUNE and s.factors["init"] != SCRATCH:
            # fine-tuned from the ALBERT run of its corpus
            assert s.config.init_run.model.tie_layers
            assert s.config.init_run.task.corpus == s.factors["init"]
    assert not any(s.config.model.tie_layers for s in bert)
    assert not {config_id(s.config) for s in bert} & {config_id(s.config) for s in albert}


def test_seed_study_has_the_seeds_rows_and_every_task_per_row():
    """artificial-pretraining: one pretraining run per corpus of the seed's rows (and the
    follow-up's extra rows), fine-tuned on the four tasks per init and seed; each pretrained arm
    starts from its own corpus's run, and the pair tasks fit the pretrained positions."""
    from reasonlab.studies.artificial._support import paper_table

    specs = STUDIES["artificial-pretraining"]().runs("cpu", 3)
    pre = [s for s in specs if s.factors["phase"] == PRETRAIN]
    assert [s.factors["corpus"] for s in pre] == paper_table.corpora("cpu") * 3
    assert [s.seed for s in pre] == [k for k in range(3) for _ in paper_table.corpora("cpu")]
    assert len(pre) == (12 + 2) * 3 and len(paper_table.inits("cpu")) == 15
    ft = [s for s in specs if s.factors["phase"] == FINETUNE]
    assert len(ft) == 4 * 15 * 3
    pre_ids = {config_id(s.config) for s in pre}
    for s in ft:
        if s.factors["init"] == SCRATCH:
            assert s.config.init_run is None
        else:
            assert s.config.init_run.task.corpus == s.factors["init"]
            assert s.config.init_run.seed == s.seed == s.config.seed
            assert config_id(s.config.init_run) in pre_ids
            assert s.config.model.max_seq_len <= s.config.init_run.model.max_seq_len
    assert {s.config.task.name for s in ft} == {"gloss_pair", "gloss_class"}
    assert {s.config.model.vocab_size for s in specs} == {8005}


def test_lego_study_no_longer_waits_on_the_seed_study():
    """The seed study shares no run with artificial-pretraining-lego (different corpora and
    encoder), so the LEGO study claims none of its time."""
    mine = {config_id(s.config) for s in STUDIES["artificial-pretraining-lego"]().runs("cpu", 2)}
    theirs = {config_id(s.config) for s in STUDIES["artificial-pretraining"]().runs("cpu", 3)}
    assert not mine & theirs
    assert STUDIES["artificial-pretraining-lego"].cpu_after == ()


def test_seed_study_long_scale_only_pretrains_longer():
    """artificial-pretraining's `long` scale is the cpu scale with one factor changed: each
    corpus pretrained 8000 steps (warm-up 10%, one pass of 64-window batches) instead of 600.
    Everything else (encoder, corpora, fine-tuning) is the cpu recipe, so the scratch arm's
    fine-tuning runs are the cpu scale's own runs and every pretrained arm's differ only in the
    run they start from."""
    study = STUDIES["artificial-pretraining"]()
    assert "long" in study.scales
    cpu, long = study.runs("cpu", 3), study.runs("long", 3)
    assert [(s.arm, s.seed, s.factors) for s in cpu] == [(s.arm, s.seed, s.factors) for s in long]
    for a, b in zip(cpu, long):
        if a.factors["phase"] == PRETRAIN:
            assert (b.config.steps, b.config.n_train, b.config.optim.warmup_steps) == (
                8000, 8000 * 64, 800)
            assert (a.config.steps, a.config.optim.warmup_steps) == (600, 60)
            assert b.config.model == a.config.model and b.config.task == a.config.task
            assert b.config.optim.lr == a.config.optim.lr
        elif a.factors["init"] == SCRATCH:
            assert config_id(a.config) == config_id(b.config)
        else:
            assert config_id(a.config) != config_id(b.config)
            assert b.config.init_run.steps == 8000
            assert a.config.model_copy(update={"init_from": None}) == b.config.model_copy(
                update={"init_from": None})


@pytest.mark.parametrize("study", ["artificial-pretraining", "artificial-pretraining-lego"])
def test_a_unit_is_a_seed_that_pretrains_and_fine_tunes(study):
    """Per seed, each corpus has its own pretraining run, and seed 0's runs are the ones the
    study trained before a seed pretrained (seed 0 is the config default, so it leaves the run
    id unchanged): a store keeps them."""
    cls = STUDIES[study]
    assert "pretrains" in cls.unit and cls.default_seeds["cpu"] >= 3
    specs = cls().runs("cpu", 3)
    pre = [s for s in specs if s.factors["phase"] == PRETRAIN]
    for corpus_runs in ({s.seed: s for s in pre if s.factors["corpus"] == c and
                         s.factors.get("kind", BERT) == k}
                        for c in {s.factors["corpus"] for s in pre}
                        for k in {s.factors.get("kind", BERT) for s in pre}):
        assert sorted(corpus_runs) == [0, 1, 2]
        assert len({config_id(s.config) for s in corpus_runs.values()}) == 3
        zero = corpus_runs[0]
        corpus, kind = zero.factors["corpus"], zero.factors.get("kind", BERT)
        recipe = (seed_recipe("cpu", corpus) if study == "artificial-pretraining"
                  else pretrain_recipe("cpu", corpus, kind))  # as built with no seed
        assert config_id(zero.config) == config_id(TrainConfig.build(recipe))
    ft = [s for s in specs if s.factors["phase"] == FINETUNE and s.config.init_run is not None]
    assert {s.config.init_run.seed for s in ft} == {0, 1, 2}
    assert all(s.config.init_run.seed == s.seed for s in ft)
