"""Training diagnostics (train/diagnostics.py) and step-scheduled variants in the loop: a run
with diagnostics trains bitwise as one without, its logged numbers equal an independent
computation on its final weights, and heat treatment follows the loop's steps."""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from reasonlab.runs import execute, load_run_model
from reasonlab.studies.kit.core import merge
from reasonlab.studies.lego.common import recipe
from reasonlab.train.config import TrainConfig, config_id
from reasonlab.train.diagnostics import PROBE_N
from reasonlab.train.loop import make_data, read_metrics
from reasonlab.train.metrics import slot_loss


def config(**over) -> TrainConfig:
    return TrainConfig.build(merge(recipe("smoke"), over))


def run(tmp: Path, cfg: TrainConfig) -> list[dict]:
    execute(cfg, tmp, quiet=True)
    return read_metrics(tmp / "runs" / config_id(cfg))


def weights(tmp: Path, cfg: TrainConfig) -> dict[str, torch.Tensor]:
    return load_run_model(tmp / "runs" / config_id(cfg))[1].state_dict()


def test_diagnostics_do_not_change_training(tmp_path):
    plain, diag = config(), config(diagnostics=["attention"])
    assert config_id(plain) != config_id(diag)  # a store tells them apart
    a, b = run(tmp_path, plain), run(tmp_path, diag)
    assert all("diag" in m for m in b) and not any("diag" in m for m in a)
    assert [{k: v for k, v in m.items() if k != "diag"} for m in b] == a  # bitwise: ==
    wa, wb = weights(tmp_path, plain), weights(tmp_path, diag)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_logged_diagnostics_equal_an_independent_computation(tmp_path):
    cfg = config(diagnostics=["attention"])
    last = run(tmp_path, cfg)[-1]["diag"]["attention"]
    model = load_run_model(tmp_path / "runs" / config_id(cfg))[1].eval()
    train_set, _ = make_data(cfg)
    probe = train_set[:PROBE_N]
    patterns = []
    handles = [b.attn.hook_pattern.add_hook(lambda x, hook: patterns.append(x.detach()))
               for b in model.blocks]
    logits = model(probe.tokens, probe.label_pos, probe.pad_mask)
    for h in handles:
        h.remove()
    loss = slot_loss(logits, probe)
    loss.backward()
    for layer, p, ent, gq, gk, gv in zip(model.layers, patterns, last["entropy"],
                                         last["grad_W_Q"], last["grad_W_K"], last["grad_W_V"],
                                         strict=True):
        # entropy row by row, in float64
        rows = p.double().reshape(-1, p.shape[-1])
        h = torch.stack([-(r[r > 0] * r[r > 0].log()).sum() for r in rows]).mean()
        assert math.isclose(ent, h.item(), rel_tol=1e-5)
        g = layer.attn.qkv.weight.grad
        d = layer.attn.n_heads * layer.attn.d_head
        for got, rows_ in ((gq, slice(0, d)), (gk, slice(d, 2 * d)), (gv, slice(2 * d, 3 * d))):
            assert math.isclose(got, g[rows_].norm().item(), rel_tol=1e-4)
    assert math.isclose(last["probe_loss"], loss.item(), rel_tol=1e-5)


def test_heat_treatment_follows_the_loop_steps(tmp_path):
    attention = {"name": "temperature", "tau": 1.0}
    cold = run(tmp_path, config(model={"attention": attention}))
    long_heat = run(tmp_path, config(model={"attention": {**attention, "steps": 100,
                                                          "name": "heat_treatment"}}))
    short_heat = run(tmp_path, config(model={"attention": {**attention, "steps": 10,
                                                           "name": "heat_treatment"}}))
    assert long_heat == cold  # treated for every step of a 20-step run: the temperature run
    assert [m["step"] for m in cold] == [10, 20]
    assert short_heat[0] == cold[0]  # steps 0-9 treated, evaluated after step 9
    assert short_heat[1]["train_loss"] != cold[1]["train_loss"]  # steps 10-19 are not


def test_config_json_round_trips_diagnostics(tmp_path):
    cfg = config(diagnostics=["attention"])
    run(tmp_path, cfg)
    saved = json.loads((tmp_path / "runs" / config_id(cfg) / "config.json").read_text())
    assert TrainConfig.build(saved) == cfg


def test_diagnostics_on_a_model_without_attention_layers_is_one_config_error():
    import pytest

    from reasonlab.errors import ConfigError

    with pytest.raises(ConfigError, match="diagnostics"):
        TrainConfig.build({"task": {"name": "lego", "n_clauses": 3, "n_train_vars": 2},
                           "model": {"arch": "lnlstm", "d_model": 8},
                           "diagnostics": ["attention"]})
