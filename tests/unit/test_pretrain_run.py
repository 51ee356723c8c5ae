"""Initialising a run from a pretraining run of the store (TrainConfig.init_from; Chiang & Lee,
docs/papers.md §4): the pretraining run is trained once and shared, the downstream model starts
from its weights (checked against the checkpoint tensors read directly), ids stay content-
addressed, validation masked-LM loss is logged."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from reasonlab.errors import ConfigError
from reasonlab.execution import execute_all, prerequisites
from reasonlab.runs import config_id, execute, run_dir_for
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import build_model
from tests.unit.test_mlm import needs_wordnet

pytestmark = needs_wordnet
TINY = dict(model=dict(d_model=16, n_layers=2, n_heads=2, d_mlp=32), n_train=64, n_test=32,
            batch_size=16, steps=4, eval_every=2, ckpt_every=2, threads=1)


def pretrain(corpus="nesting"):
    return {"task": {"name": "mlm", "corpus": corpus, "words": 200, "seq_len": 24,
                     "corpus_tokens": 5000}, **TINY}


def downstream(task, **kw):
    return TrainConfig.build({"task": task, "model": {}, "init_from": pretrain(),
                              **{k: v for k, v in TINY.items() if k != "model"}, **kw})


GLOSS = {"name": "gloss_class", "words": 200, "seq_len": 16}
LEGO = {"name": "lego", "n_clauses": 3, "n_train_vars": 2}


def test_downstream_starts_from_the_pretraining_checkpoint(tmp_path):
    cfg = downstream(GLOSS)
    assert cfg.model.d_model == 16 and cfg.model.n_classes == 45  # architecture from pretrain
    result = execute(cfg, tmp_path, quiet=True)
    pre_dir = run_dir_for(cfg.init_run, tmp_path)
    curve = [json.loads(l) for l in (pre_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in curve] == [2, 4] and all("loss" in m for m in curve)  # val MLM
    saved = {k.removeprefix("model."): v for k, v in
             load_file(str(pre_dir / "ckpt" / "state.safetensors")).items()
             if k.startswith("model.")}
    model = build_model(cfg, root=tmp_path)
    sd = model.state_dict()
    for k, v in saved.items():
        if k == "W_pos":
            assert torch.equal(sd[k], v[:16])
        elif not k.startswith("head."):
            assert torch.equal(sd[k], v), k  # same word vocabulary: every row kept
    assert sd["head.weight"].shape[0] == 45
    assert result["final"]["step"] == 4
    # LEGO: its tokens take the rows of the same words in the pretraining vocabulary
    lego = downstream(LEGO)
    from reasonlab.tasks.base import build_task
    words = build_task(lego.init_run.task).vocab
    toks = build_task(lego.task).vocab.tokens
    w_e = build_model(lego, root=tmp_path).W_E
    for i, t in enumerate(toks):
        if t in words.tokens:
            assert torch.equal(w_e[i], saved["W_E"][words.id(t)]), t


def test_pretraining_run_is_shared_and_ids_are_content_addressed(tmp_path):
    a, b = downstream(GLOSS), downstream(GLOSS, seed=1)
    assert prerequisites([a, b], tmp_path) == [a.init_run]  # once, though two runs name it
    execute_all([a, b], tmp_path, quiet=True, workers=1)
    assert len(list((tmp_path / "runs").iterdir())) == 3
    assert prerequisites([a, b], tmp_path) == []
    other = TrainConfig.build({**a.model_dump(mode="json"),
                               "init_from": pretrain("uniform")})
    assert config_id(other) != config_id(a)
    plain = TrainConfig.build({"task": GLOSS, **TINY})
    assert "init_from" not in plain.model_dump(mode="json")  # ids of other runs unchanged


def test_pretrain_fixes_the_architecture():
    with pytest.raises(ConfigError, match="pretraining run"):
        TrainConfig.build({"task": GLOSS, "model": {"d_model": 32}, "init_from": pretrain()})
    with pytest.raises(ConfigError, match="positions"):
        TrainConfig.build({"task": {**GLOSS, "seq_len": 40}, "model": {},
                           "init_from": pretrain()})
    with pytest.raises(ConfigError, match="pretrained and pretrain are all set"):  # old names
        TrainConfig.build({"task": GLOSS, "model": {}, "pretrain": pretrain(),
                           "pretrained": "all-minilm-l6-v2"})


def test_build_model_without_the_store_is_a_config_error():
    with pytest.raises(ConfigError, match="run store"):
        build_model(downstream(GLOSS))
