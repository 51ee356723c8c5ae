"""Training loop: learning happens, runs are deterministic, a killed run resumes bitwise."""

import json
import shutil

import pytest
import torch

from reasonlab.errors import CheckpointError
from reasonlab.runs import config_id, execute, run_dir_for
from reasonlab.train.config import TrainConfig
from reasonlab.train.loop import train


def small_config(**over):
    base = dict(
        task={"name": "lego", "group": "z2", "n_clauses": 4, "n_train_vars": 2},
        model=dict(d_model=32, n_layers=2, n_heads=2, d_mlp=64, dropout=0.1,
                   tie_layers=True, depth_range=[1, 2]),
        optim=dict(lr=3e-3, warmup_steps=5),
        n_train=512, n_test=128, batch_size=32, steps=40, eval_every=10, ckpt_every=10,
    )
    base.update(over)
    return TrainConfig.build(base)


class Killed(Exception):
    pass


def test_resume_is_bitwise_identical(tmp_path, monkeypatch):
    config = small_config()
    full = train(config, tmp_path / "full", quiet=True)

    # Kill the second run in the middle of step 25 (after the checkpoint at 20).
    import reasonlab.train.loop as loop

    real = loop.slot_loss
    calls = {"n": 0}

    def dying(logits, batch, *rest):
        calls["n"] += 1
        if calls["n"] == 26:
            raise Killed
        return real(logits, batch, *rest)

    monkeypatch.setattr(loop, "slot_loss", dying)
    with pytest.raises(Killed):
        train(config, tmp_path / "resumed", quiet=True)
    lines = (tmp_path / "resumed" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["step"] for x in lines] == [10, 20]
    from safetensors.torch import load_file

    mid = load_file(str(tmp_path / "resumed" / "ckpt" / "state.safetensors"))
    assert any(k.startswith("optim.") for k in mid)  # what resuming at step 20 needs
    steps = []  # the resumed run trains steps 20..39 only: it resumed, it did not restart
    monkeypatch.setattr(loop, "slot_loss", lambda *a: steps.append(1) or real(*a))
    resumed = train(config, tmp_path / "resumed", quiet=True)
    assert len(steps) == 20

    assert resumed == full
    a = (tmp_path / "full" / "metrics.jsonl").read_text()
    b = (tmp_path / "resumed" / "metrics.jsonl").read_text()
    assert a == b
    wa = load_file(str(tmp_path / "full" / "ckpt" / "state.safetensors"))
    wb = load_file(str(tmp_path / "resumed" / "ckpt" / "state.safetensors"))
    assert wa.keys() == wb.keys()
    assert not any(k.startswith("optim.") for k in wa)  # the last checkpoint: no moments
    for k in wa:
        assert torch.equal(wa[k], wb[k]), k


@pytest.mark.slow
def test_training_learns_and_logs_per_position(tmp_path):
    # The recipe that leaves the ln-2 plateau fastest in our sweeps (see lego_extrapolation).
    config = small_config(steps=800, eval_every=100, ckpt_every=800, n_train=8000, batch_size=64,
                          model=dict(d_model=64, n_layers=2, n_heads=4, d_mlp=256,
                                     norm_position="pre",
                                     init_std=0.1),
                          optim=dict(lr=3e-3, warmup_steps=50))
    final = train(config, tmp_path, quiet=True)
    assert len(final["acc_by_depth"]) == 4
    # #0 and #1 are supervised; a 2-layer model resolves them, it cannot resolve #3.
    assert min(final["acc_by_depth"][:2]) > 0.9
    assert final["train_loss"] < 0.3


def test_finished_run_is_reused_and_id_is_content_addressed(tmp_path):
    config = small_config(steps=10)
    r1 = execute(config, tmp_path, quiet=True)
    mtime = (run_dir_for(config, tmp_path) / "result.json").stat().st_mtime_ns
    r2 = execute(config, tmp_path, quiet=True)
    assert r1 == r2
    assert (run_dir_for(config, tmp_path) / "result.json").stat().st_mtime_ns == mtime
    assert config_id(config) == config_id(TrainConfig.build(config.model_dump(mode="json")))
    assert config_id(config) != config_id(small_config(steps=10, seed=1))


def test_run_id_ignores_defaults_but_not_the_task():
    config = small_config()
    # Spelling out a default (as a config written before a field existed would omit it) keeps
    # the id, so finished runs stay reusable when new fields with defaults are added.
    explicit = small_config(model={**config.model.model_dump(include={"d_model", "n_layers", "n_heads",
                                                                 "d_mlp", "dropout",
                                                                 "tie_layers", "depth_range"}),
                                   "attention": "softmax", "positions": "learned"})
    assert config_id(explicit) == config_id(config)
    changed = small_config(model={**explicit.model.model_dump(include={"d_model", "n_layers",
                                                                       "n_heads", "d_mlp"}),
                                  "positions": "rotary"})
    assert config_id(changed) != config_id(config)
    # Two tasks whose configs are all defaults still get different ids.
    a = TrainConfig.build({"task": {"name": "lego"}, "model": {"d_model": 32}})
    b = TrainConfig.build({"task": {"name": "anchors"}, "model": {"d_model": 32}})
    assert config_id(a) != config_id(b)


def test_mismatched_checkpoint_is_a_user_error(tmp_path):
    a, b = small_config(steps=10), small_config(steps=10, seed=5)
    train(a, tmp_path / "x", quiet=True)
    with pytest.raises(CheckpointError, match="another config"):
        train(b, tmp_path / "x", quiet=True)
    (tmp_path / "x" / "ckpt" / "state.safetensors").write_bytes(b"garbage")
    with pytest.raises(CheckpointError, match="unreadable"):
        train(a, tmp_path / "x", quiet=True)
    shutil.rmtree(tmp_path / "x")


def test_train_builds_the_task_once_and_passes_it_down(monkeypatch, tmp_path):
    """Data, init stages (mimicking included) and class masks all read the task train()
    built: nothing downstream rebuilds it from the config."""
    import reasonlab.train.init_stages as init_stages
    import reasonlab.train.loop as loop

    built = []

    def counting(cfg):
        built.append(cfg)
        return real(cfg)

    real = loop.build_task
    for module in (loop, init_stages):
        monkeypatch.setattr(module, "build_task", counting)
    config = small_config(steps=2, eval_every=1, ckpt_every=2, optim={"warmup_steps": 1},
                          mimic={"steps": 1, "batch_size": 4})
    train(config, tmp_path, quiet=True)
    assert len(built) == 1
