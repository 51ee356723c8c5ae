"""Runs with frozen parameters store their trained weights alone (train/checkpoint.py, Frozen):
state.json names the frozen ones, their source and checksum; loading rebuilds them from the
config and gets, bit for bit, the model a run storing everything gets; a killed run resumes
bitwise; a source that no longer gives the same weights is caught."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch
from safetensors.torch import load_file

from reasonlab.errors import ReasonlabError
from reasonlab.runs import execute, load_run_model, run_dir_for
from reasonlab.train import checkpoint, loop
from reasonlab.train.config import TrainConfig

TASK = {"name": "bit_xor", "n_bits": 5}


def fpt(**over: Any) -> TrainConfig:
    """FPT on a small random backbone, the FPT groups trained (frozen attention and MLPs)."""
    base = dict(task=TASK, model=dict(arch="fpt", d_model=16, n_layers=2, n_heads=2,
                                         d_mlp=32, dropout=0.1),
                trainable="fpt", n_train=48, n_test=16, batch_size=8, steps=8, eval_every=2,
                ckpt_every=4)
    return TrainConfig.build({**base, **over})


def lstm() -> TrainConfig:
    """The frozen random LSTM (fpt-lstm's arm): recurrent maps frozen, norms trained."""
    return fpt(model=dict(arch="lnlstm", d_model=16, n_layers=2))


def smollm2() -> TrainConfig:
    """The FPT studies' backbone, its first 2 layers, pretrained weights frozen."""
    return fpt(model=dict(arch="fpt", n_layers=2), init_from="smollm2-135m")


def _tensors(run_dir) -> dict[str, torch.Tensor]:
    return load_file(str(run_dir / "ckpt" / "state.safetensors"))


CONFIGS = {"random backbone": fpt, "frozen LSTM": lstm, "SmolLM2": smollm2}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_store_keeps_trained_weights_and_reloads_bitwise(name, tmp_path, monkeypatch):
    cfg = CONFIGS[name]()
    if name == "SmolLM2":
        from reasonlab.model.pretrained import PRETRAINED

        if not PRETRAINED["smollm2-135m"].available():
            pytest.skip(PRETRAINED["smollm2-135m"].install_hint)
    slim = execute(cfg, tmp_path / "slim", quiet=True)
    slim_dir = run_dir_for(cfg, tmp_path / "slim")
    meta = json.loads((slim_dir / "ckpt" / "state.json").read_text())
    frozen = meta[checkpoint.FROZEN]
    stored = {k.removeprefix("model.") for k in _tensors(slim_dir) if k.startswith("model.")}
    assert frozen["names"] and not stored & set(frozen["names"])
    assert frozen["source"] == ("checkpoint smollm2-135m" if name == "SmolLM2"
                                else "random init, seed 0")

    # the same run storing everything, as before
    monkeypatch.setattr(loop, "frozen_record", lambda model, config: None)
    full = execute(cfg, tmp_path / "full", quiet=True)
    full_dir = run_dir_for(cfg, tmp_path / "full")
    assert full["curve"] == slim["curve"]  # training is the same
    assert set(_tensors(full_dir)) - set(_tensors(slim_dir)) == {
        f"model.{n}" for n in frozen["names"]}
    assert ((slim_dir / "ckpt" / "state.safetensors").stat().st_size
            < (full_dir / "ckpt" / "state.safetensors").stat().st_size)
    _, a = load_run_model(slim_dir)
    _, b = load_run_model(full_dir)
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        assert torch.equal(sa[k], sb[k]), k


class Killed(Exception):
    pass


def test_a_killed_run_resumes_bitwise(tmp_path, monkeypatch):
    cfg = fpt()
    execute(cfg, tmp_path / "full", quiet=True)
    real, calls = loop.slot_loss, {"n": 0}

    def dying(*a: Any) -> torch.Tensor:
        calls["n"] += 1
        if calls["n"] == 6:  # after the checkpoint of step 4
            raise Killed
        return real(*a)

    monkeypatch.setattr(loop, "slot_loss", dying)
    with pytest.raises(Killed):
        execute(cfg, tmp_path / "resumed", quiet=True)
    mid = _tensors(run_dir_for(cfg, tmp_path / "resumed"))
    assert any(k.startswith("optim.") for k in mid)  # a resumable checkpoint, slim too
    monkeypatch.setattr(loop, "slot_loss", real)
    execute(cfg, tmp_path / "resumed", quiet=True)
    a, b = run_dir_for(cfg, tmp_path / "full"), run_dir_for(cfg, tmp_path / "resumed")
    assert (a / "metrics.jsonl").read_text() == (b / "metrics.jsonl").read_text()
    ta, tb = _tensors(a), _tensors(b)
    assert ta.keys() == tb.keys() and all(torch.equal(ta[k], tb[k]) for k in ta)


def test_frozen_weights_that_changed_are_caught(tmp_path):
    cfg = fpt()
    execute(cfg, tmp_path, quiet=True)
    run_dir = run_dir_for(cfg, tmp_path)
    path = run_dir / "ckpt" / "state.json"
    meta = json.loads(path.read_text())
    meta[checkpoint.FROZEN]["sha256"] = "0" * 64  # as if the source gave other weights
    del meta["state_sha256"]  # in a run written before state.json and result.json had
    path.write_text(json.dumps(meta))  # checksums of their own (else they catch the edit)
    result = json.loads((run_dir / "result.json").read_text())
    del result["sha256"]
    (run_dir / "result.json").write_text(json.dumps(result))
    with pytest.raises(ReasonlabError, match="frozen weights rebuilt from random init"):
        load_run_model(run_dir)


def test_runs_without_a_frozen_part_store_everything(tmp_path):
    cfg = fpt(trainable=None)  # all trained
    execute(cfg, tmp_path, quiet=True)
    meta = json.loads((run_dir_for(cfg, tmp_path) / "ckpt" / "state.json").read_text())
    assert checkpoint.FROZEN not in meta
    model = loop.build_model(cfg)
    assert checkpoint.frozen_record(model, cfg) is None
    cfg = fpt(mimic=None)
    model = loop.build_model(cfg)
    assert checkpoint.frozen_record(model, cfg) is not None
